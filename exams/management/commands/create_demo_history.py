"""A few weeks of plausible history for the demo learner, so the dashboard shows what it is for."""
import random
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from exams.models import Attempt, AttemptMode, Exam, Response, ResponseChoice, ReviewCard
from exams.room import services
from exams.study.reviews import review_of, reviews_record

# (days ago, mode, chance of a right answer); ability grows over the weeks. The last mock is
# yesterday's: a card answered right once falls due after about two days (FSRS's first
# stability), so yesterday's right answers are due later and the older ones now — with the
# last mock four days back every card was due once the bank's draw changed (204 of 204).
PLAN = [
    (24, AttemptMode.MOCK, 0.52),
    (17, AttemptMode.PRACTICE, 0.60),
    (15, AttemptMode.MOCK, 0.61),
    (9, AttemptMode.PRACTICE, 0.66),
    (6, AttemptMode.DRILL, 0.58),
    (1, AttemptMode.MOCK, 0.69),
]
# Some domains come easier than others, so the dashboard has a weakest domain to point at.
DOMAIN_BIAS = {"Trustworthy AI": 0.12, "Data Analysis and Visualization": 0.05, "Performance Optimization": -0.25}


class Command(BaseCommand):
    help = "Give the demo learner a short generated history (mocks, practice, a drill, reviews due)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="learner")
        parser.add_argument("--exam", default="NCA-GENM")
        parser.add_argument("--seed", type=int, default=7)

    def handle(self, *args, username: str, exam: str, seed: int, **options):
        user = User.objects.filter(username=username).first()
        exam_obj = Exam.objects.filter(code=exam).first()
        if user is None or exam_obj is None:
            raise CommandError(f"Needs the user {username!r} and the exam {exam!r}: run create_demo_accounts and load_bank first.")
        if Attempt.objects.filter(user=user).exists():
            self.stdout.write(f"{username} already has a history; leaving it as it is.")
            return
        rng = random.Random(seed)
        now = timezone.now()
        with transaction.atomic():
            for days_ago, mode, ability in PLAN:
                self._attempt(user=user, exam=exam_obj, mode=mode, ability=ability, rng=rng, when=now - timedelta(days=days_ago))
            self._review_at_history_times(user=user)
        count = Attempt.objects.filter(user=user).count()
        self.stdout.write(self.style.SUCCESS(f"Gave {username} a history of {count} finished attempts with reviews due."))

    def _attempt(self, *, user, exam, mode, ability, rng, when):
        domain = None
        if mode == AttemptMode.DRILL:
            domain = exam.domains.get(name="Performance Optimization")
        started = services.attempt_start(user=user, exam=exam, mode=mode, domain=domain, seed=rng.randrange(1 << 30))
        attempt = started.attempt
        responses = list(attempt.responses.select_related("domain").prefetch_related("question__choices"))
        picks = []
        for response in responses:
            if mode == AttemptMode.MOCK and rng.random() < 0.04:
                continue  # ran out of time on a few
            choices = list(response.question.choices.all())
            keys = [c.pk for c in choices if c.is_correct]
            chance = ability + DOMAIN_BIAS.get(response.domain.name, 0.0)
            if rng.random() < chance:
                chosen = keys
            else:
                wrong = [c.pk for c in choices if not c.is_correct]
                chosen = rng.sample(wrong, min(len(keys), len(wrong)))
            picks.extend(ResponseChoice(response=response, choice_id=pk) for pk in chosen)
            response.answered_at = when + timedelta(minutes=rng.uniform(0.5, 45))
        ResponseChoice.objects.bulk_create(picks)
        Response.objects.bulk_update(responses, ["answered_at"])
        if mode == AttemptMode.MOCK:
            services.attempt_finish(attempt=attempt, expired=False)
        else:
            for response in responses:
                response.refresh_from_db()
                services.attempt_check(attempt=attempt, response=response)
        minutes = 52 if mode == AttemptMode.MOCK else 18
        Attempt.objects.filter(pk=attempt.pk).update(
            started_at=when,
            finished_at=when + timedelta(minutes=minutes),
            deadline=when + timedelta(minutes=exam.time_limit_minutes) if mode == AttemptMode.MOCK else None,
        )
        # Each answer was checked as it was given.
        checked = list(attempt.responses.filter(checked_at__isnull=False, answered_at__isnull=False))
        for response in checked:
            response.checked_at = response.answered_at
        Response.objects.bulk_update(checked, ["checked_at"])

    def _review_at_history_times(self, *, user):
        """Grading reviewed every answer just now; review them again at the times the history says.

        Through the same service grading uses, so the cards are what weeks of these answers
        would have made: some due already, most later.
        """
        ReviewCard.objects.filter(user=user).delete()
        responses = (
            Response.objects.filter(attempt__user=user, attempt__status__in=Attempt.FINISHED_STATUSES)
            .select_related("attempt")
            .prefetch_related("strikes")
        )
        reviews = [review_of(r, at=r.checked_at or r.attempt.finished_at) for r in responses]
        reviews_record(user=user, reviews=[review for review in reviews if review is not None])
