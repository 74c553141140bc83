"""manage.py refresh_item_statistics: recompute and store item and test statistics, the rows the admin reads."""
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exams.models import Exam
from exams.statistics.refresh import item_statistics_refresh


class Command(BaseCommand):
    help = "Recompute and store item statistics (all mocks and first mocks only) and KR-20 for one exam or all."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--exam", help="An exam's code; every exam when left out.")

    def handle(self, *args, exam: str | None = None, **options) -> None:
        exams = Exam.objects.order_by("code")
        if exam:
            exams = exams.filter(code=exam)
            if not exams.exists():
                raise CommandError(f"No exam has the code {exam!r}.")
        for one in exams:
            summary = item_statistics_refresh(exam=one)
            reliability = f"{summary.kr20:.2f}" if summary.kr20 is not None else "—"
            self.stdout.write(
                f"{summary.exam}: {summary.questions} questions over {summary.attempts} finished mocks; "
                f"{summary.very_likely} very likely and {summary.likely} likely mis-keyed; KR-20 {reliability}."
            )
