"""List stored questions outside the bank's bounds (2–10 choices, text lengths, NUL bytes),
for an instructor to fix in admin; exits 1 when there are any, so a deploy can check."""
import sys

from django.core.management.base import BaseCommand

from exams.bank.formats import question_problems
from exams.bank.imports import export_bank
from exams.models import Exam


class Command(BaseCommand):
    help = "List every question outside the bank's bounds (choices, text lengths), with a link to fix it."

    def handle(self, *args, **options):
        found = 0
        for exam in Exam.objects.order_by("code"):
            # In export_bank's own order, so each parsed question sits beside its row.
            questions = list(exam.questions.order_by("domain__order", "domain_id", "id"))
            for question, parsed in zip(questions, export_bank(exam=exam, questions=questions)):
                for problem in question_problems(parsed):
                    found += 1
                    self.stdout.write(f"{exam.code} question {question.pk} ({question.title!r}): {problem} — /admin/exams/question/{question.pk}/change/")
        if found:
            self.stderr.write(f"{found} problem(s) to fix.")
            sys.exit(1)
        self.stdout.write("Every question is within the bank's bounds.")
