"""Export an exam's active questions in a bank format (GIFT, Aiken, certprep JSON, Moodle XML)."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exams.bank.formats import ExportError
from exams.bank.imports import FORMATS, write_export
from exams.management.commands.import_questions import exam_by_code


class Command(BaseCommand):
    help = (
        "Write an exam's active questions in a bank format, to stdout or --output. GIFT loses keep_order and "
        "errata; Moodle XML loses errata; Aiken holds single-answer questions only and loses titles, feedback and "
        "explanations; certprep JSON keeps everything."
    )

    def add_arguments(self, parser):
        parser.add_argument("--exam", required=True, metavar="CODE")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="fmt")
        parser.add_argument("--output", metavar="FILE", help="Write to FILE instead of stdout.")

    def handle(self, *args, exam: str, fmt: str, output: str | None, **options):
        source = exam_by_code(exam)
        try:
            text = write_export(exam=source, fmt=fmt)
        except ExportError as error:
            raise CommandError(f"Nothing was exported. {error}") from None
        if output is None:
            self.stdout.write(text, ending="")
            return
        path = Path(output)
        try:
            # newline="" keeps the file byte for byte what the writer produced.
            with path.open("w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        except OSError as error:
            raise CommandError(f"Cannot write {path}: {error.strerror}") from None
        self.stdout.write(f"Wrote {FORMATS[fmt].label} for {source.code} to {path}.")
