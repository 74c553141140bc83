"""Load the NCA-GENM question bank, or upgrade an earlier edition in place, and say what changed."""
from django.core.management.base import BaseCommand

from exams.bank.loading import bank_load
from exams.models import Exam


class Command(BaseCommand):
    help = (
        "Load the NCA-GENM bank (exam, domains, questions, errata, exhibit images), or bring an "
        "existing one up to this edition: new questions are added, changed ones rewritten by "
        "primary key (attempts keep the version they showed), retired ones deactivated. "
        "Running it again changes nothing."
    )

    def handle(self, *args, verbosity: int = 1, **options):
        changes = bank_load()
        if verbosity < 1:
            return
        exam = Exam.objects.get(code="NCA-GENM")
        active = exam.questions.filter(is_active=True).count()
        self.stdout.write(
            self.style.SUCCESS(f"NCA-GENM: {active} active questions in {exam.domains.count()} domains; {changes.summary()}.")
        )
