"""Load the NCA-GENM question bank once: an existing exam is left as it is."""
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from exams.models import Exam

FIXTURES = settings.BASE_DIR / "fixtures"


def bank_fixture_paths() -> list[Path]:
    return [FIXTURES / "nca-genm.json", *sorted((FIXTURES / "bank").glob("*.json"))]


class Command(BaseCommand):
    help = "Load the NCA-GENM bank (exam, domains, questions, errata) unless it is already there."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="Load again over an existing bank.")

    def handle(self, *args, force: bool = False, **options):
        if Exam.objects.filter(code="NCA-GENM").exists() and not force:
            self.stdout.write("NCA-GENM is already loaded; leaving it as it is (use --force to reload).")
            return
        call_command("loaddata", *[str(path) for path in bank_fixture_paths()], verbosity=0)
        exam = Exam.objects.get(code="NCA-GENM")
        self.stdout.write(
            self.style.SUCCESS(f"Loaded {exam.code}: {exam.questions.count()} questions in {exam.domains.count()} domains.")
        )
