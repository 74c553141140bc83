"""Regrade every question with two or more confirmed errata by all of them, folded in order.

Before the fold, grading and regrade read only a question's latest confirmed erratum, so
a second confirmation could take back credit the first gave; this puts such questions'
past grades right, recording a RegradeEvent for each (nothing changes on a second run).
"""
from django.core.management.base import BaseCommand
from django.db.models import Count, Q

from exams.bank.errata.regrade import regrade_question
from exams.models import ErratumStatus, Question


class Command(BaseCommand):
    help = "Regrade each question with two or more confirmed errata by all of them in order (records a regrade event each)."

    def handle(self, *args, **options):
        questions = (
            Question.objects.annotate(confirmed=Count("errata", filter=Q(errata__status=ErratumStatus.CONFIRMED)))
            .filter(confirmed__gte=2)
            .order_by("pk")
        )
        regraded = 0
        for question in questions:
            event = regrade_question(question=question)
            regraded += 1
            self.stdout.write(
                f"{question.exam.code} question {question.pk} “{question.title}”: {event.attempts_touched} attempt(s) "
                f"regraded, {event.scores_changed} score(s) changed, {event.pass_flips} pass/fail flip(s)."
            )
        self.stdout.write(f"Re-folded {regraded} question{'s' if regraded != 1 else ''} with two or more confirmed errata.")
