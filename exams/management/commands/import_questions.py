"""Import a question bank (GIFT, Aiken, certprep JSON, Moodle XML: see exams.bank.formats.registry) into an exam, all or nothing."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exams.bank.imports import FORMATS, import_bank, parse_upload
from exams.models import Exam


def exam_by_code(code: str) -> Exam:
    """The exam with this code, or a CommandError that names the codes there are."""
    try:
        return Exam.objects.get(code=code)
    except Exam.DoesNotExist:
        codes = ", ".join(Exam.objects.values_list("code", flat=True)) or "none yet"
        raise CommandError(f"No exam has the code {code!r} (exams: {codes}).") from None


class Command(BaseCommand):
    help = (
        "Import questions from FILE into an exam. Any error and nothing is imported; every error is listed by "
        "line. GIFT and Moodle XML weights only mark keys: scoring is all-or-nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="The bank file (UTF-8).")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="fmt")
        parser.add_argument("--exam", required=True, metavar="CODE", help="The exam that receives the questions.")
        parser.add_argument(
            "--domain",
            metavar="NAME",
            help="A domain of the exam for questions whose file names no domain, or one the exam does not have.",
        )
        parser.add_argument("--dry-run", action="store_true", help="Check and summarise; write nothing.")
        parser.add_argument(
            "--publish",
            action="store_true",
            help="Import the questions as ready (drawn at once) instead of as drafts; each must pass the ready "
            "checks (topic, difficulty, explanation, feedback on every choice) or nothing is imported.",
        )
        parser.add_argument(
            "--skip-unsupported",
            action="store_true",
            help="Leave out (and list) GIFT or Moodle XML questions of types certprep does not hold, instead of failing.",
        )

    def handle(self, *args, file: str, fmt: str, exam: str, domain: str | None, dry_run: bool,
               skip_unsupported: bool, **options):
        path = Path(file)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise CommandError(f"No such file: {path}") from None
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}") from None
        target = exam_by_code(exam)
        result = parse_upload(data=data, fmt=fmt, skip_unsupported=skip_unsupported, exam_code=target.code)
        # The operator's own import: no upload cap (MAX_IMPORT_QUESTIONS bounds the admin's).
        summary = import_bank(
            exam=target, result=result, default_domain=domain, dry_run=dry_run, max_questions=None,
            publish=options.get("publish", False),
        )
        if not summary.ok:
            raise CommandError(f"{path}:\n{summary}")
        self.stdout.write(str(summary))
