"""The exam room: attempts, their responses (slots), picks and strike-outs, regrades of past scores, extra time."""
from datetime import timedelta

from django.conf import settings
from django.db import connection, models
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import Profile
from exams.models.bank import Choice, Domain, Erratum, ErratumPolicy, Exam, Question, QuestionVersion


class AttemptMode(models.TextChoices):
    MOCK = "mock", "Timed mock"
    PRACTICE = "practice", "Practice"
    DRILL = "drill", "Domain drill"
    REVIEW = "review", "Review mistakes"


class AttemptStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Expired"
    # A practice the learner ended without submitting it ("End it and start this one"):
    # no score, never in history, trend, mastery, readiness, reports or item statistics.
    ABANDONED = "abandoned", "Abandoned"


class AttemptQuerySet(models.QuerySet):
    def with_clock(self):
        """Each attempt with the database's clock, which every web server agrees on."""
        return self.annotate(db_now=Now())

    def past_grace(self):
        return self.filter(status=AttemptStatus.IN_PROGRESS, deadline__lt=Now() - Attempt.GRACE)

    def finished(self):
        """Attempts that ended with a score (submitted or expired); an abandoned practice is not one."""
        return self.filter(status__in=Attempt.FINISHED_STATUSES)

    def in_progress(self):
        return self.filter(status=AttemptStatus.IN_PROGRESS)

    def for_user(self, user):
        return self.filter(user=user)


class Attempt(models.Model):
    # Ended with a score: what history, trend, mastery, reports and statistics count.
    FINISHED_STATUSES = (AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED)
    # Saves arriving this long after the deadline are still accepted (network, clock skew).
    GRACE = timedelta(seconds=30)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="attempts")
    mode = models.CharField(max_length=10, choices=AttemptMode.choices, default=AttemptMode.MOCK)
    started_at = models.DateTimeField(db_default=Now())
    deadline = models.DateTimeField(null=True, blank=True, help_text="Server clock; empty when untimed.")
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=AttemptStatus.choices, default=AttemptStatus.IN_PROGRESS)
    score = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True, help_text="Percent.")
    published_score = models.DecimalField(
        max_digits=5, decimal_places=2, null=True, blank=True, help_text="The score as first graded."
    )
    # A mock's score on the bank's reference form (exams.statistics.equating), frozen at grading; never
    # changes `score` or `passed`. Empty until the bank is calibrated, and after a regrade until
    # the statistics refresh fills it again.
    equated_score = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True, help_text="Percent.")
    right_count = models.PositiveSmallIntegerField(null=True, blank=True)
    total_count = models.PositiveSmallIntegerField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    last_position = models.PositiveSmallIntegerField(default=1)
    domain = models.ForeignKey(
        Domain, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        help_text="For drills and filtered practice.",
    )
    feedback_at_end = models.BooleanField(
        default=False, db_default=False,
        help_text="Practice built to show keys and explanations only when it ends (no “Check answer”).",
    )

    objects = AttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "exam", "mode"],
                condition=Q(status="in_progress"),
                name="attempt_one_in_progress",
            ),
            models.CheckConstraint(
                condition=Q(status="in_progress") | Q(finished_at__isnull=False),
                name="attempt_finished_has_time",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=100), name="attempt_score_percent"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "status", "-finished_at"], name="attempt_user_history"),
            models.Index(fields=["user", "exam", "status"], name="attempt_user_exam"),
            models.Index(fields=["status", "deadline"], name="attempt_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.exam.code} {self.get_mode_display()} #{self.pk}"

    @property
    def is_finished(self) -> bool:
        """Ended with a score (submitted or expired)."""
        return self.status in self.FINISHED_STATUSES

    @property
    def has_ended(self) -> bool:
        """No longer takes answers: finished, or abandoned without a score."""
        return self.status != AttemptStatus.IN_PROGRESS

    @property
    def is_abandoned(self) -> bool:
        return self.status == AttemptStatus.ABANDONED

    @property
    def is_timed(self) -> bool:
        return self.deadline is not None

    @property
    def checks_one_by_one(self) -> bool:
        """Whether "Check answer" shows each answer's key as the learner goes."""
        return self.mode != AttemptMode.MOCK and not self.feedback_at_end

    def seconds_left(self) -> float | None:
        """Seconds to the deadline by the database clock (needs `with_clock()`)."""
        if self.deadline is None:
            return None
        return max(0.0, (self.deadline - self.db_now).total_seconds())

    def is_past_grace(self) -> bool:
        """True once saves are refused: the deadline plus the grace has passed (database clock)."""
        return self.deadline is not None and self.db_now > self.deadline + self.GRACE

    @property
    def time_used(self) -> timedelta | None:
        if self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def record_answer(self, *, response: "Response", choice_ids: list[int], also: tuple[str, ...] = ()) -> bool:
        """Store the choices picked for one slot (the caller holds the attempt's row lock, or
        on SQLite the database's write lock).

        Returns whether anything changed; saving the same answer again is a no-op. A change
        always updates the slot's row (`answered_at`, and the fields named in `also`, set on
        `response` by the caller), which exams.room.saving relies on.
        """
        current = {pick.choice_id for pick in response.picks.all()}
        if current == set(choice_ids):
            return False
        if current:
            response.picks.all().delete()
        if choice_ids:
            ResponseChoice.objects.bulk_create(ResponseChoice(response=response, choice_id=pk) for pk in choice_ids)
        response.answered_at = Now() if choice_ids else None
        response.save(update_fields=["answered_at", *also])
        # What was prefetched is stale now: a check in the same request grades the new picks.
        getattr(response, "_prefetched_objects_cache", {}).pop("picks", None)
        return True

    def record_strikes(self, *, response: "Response", choice_ids: set[int]) -> bool:
        """Store which choices the learner struck out on one slot; returns whether it changed."""
        current = {strike.choice_id for strike in response.strikes.all()}
        if current == choice_ids:
            return False
        response.strikes.filter(choice_id__in=current - choice_ids).delete()
        ResponseStrike.objects.bulk_create(ResponseStrike(response=response, choice_id=pk) for pk in choice_ids - current)
        if connection.vendor == "postgresql":
            # A new row version for the slot: the one-statement save (exams.room.saving) sees that
            # its slot changed while it waited, and reads it again.
            Response.objects.filter(pk=response.pk).update(flagged=F("flagged"))
        getattr(response, "_prefetched_objects_cache", {}).pop("strikes", None)
        return True

    def end_time(self, *, expired: bool):
        """When the attempt ends: an expired one at its deadline, whenever the server noticed."""
        if expired and self.deadline:
            return self.deadline
        return getattr(self, "db_now", None) or timezone.now()

    @property
    def equated_note(self) -> str:
        """How this form compared with the reference form, in the learner's words."""
        if self.equated_score is None or self.score is None:
            return ""
        points = float(self.equated_score - self.score)
        if abs(points) < 0.5:
            return "this form was of average difficulty"
        rounded = int(abs(points) + 0.5)  # halves up, as scores are shown
        amount = f"{rounded} point{'s' if rounded != 1 else ''}" if rounded else "under a point"
        return f"this form was {amount} {'harder' if points > 0 else 'easier'} than average"

    def finish(self, *, expired: bool, grade) -> None:
        """Close the attempt with its grade (an exams.room.grading.AttemptGrade); the caller holds its row lock.

        Grading reads `finished_at` (errata policies depend on when an attempt finished),
        so exams.room.services.attempt_finish sets it, grades, then calls this.
        """
        if self.has_ended or self.finished_at is None:
            raise ValueError("finish an attempt once, after setting finished_at (exams.room.services.attempt_finish)")
        self.status = AttemptStatus.EXPIRED if expired else AttemptStatus.SUBMITTED
        self.right_count, self.total_count = grade.right, grade.total
        self.score = self.published_score = grade.score
        self.passed = grade.passed
        self.save(update_fields=[
            "status", "finished_at", "right_count", "total_count", "score", "published_score", "passed",
        ])

    def abandon(self) -> None:
        """End an unsubmitted practice without a score; the caller holds its row lock.

        Its slots stay as they are: a checked one keeps its grade (it was a review when
        checked), the rest are never graded, so nothing here is a score or a review.
        """
        if self.has_ended or self.mode != AttemptMode.PRACTICE:
            raise ValueError("only a practice in progress is abandoned (exams.room.services.attempt_abandon)")
        self.status = AttemptStatus.ABANDONED
        self.finished_at = self.end_time(expired=False)
        self.save(update_fields=["status", "finished_at"])


class Certainty(models.TextChoices):
    GUESS = "guess", "Guessing"
    FAIR = "fair", "Fairly sure"
    SURE = "sure", "Sure"


class Response(models.Model):
    """One question slot of an attempt, created when the attempt is drawn."""

    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="responses")
    position = models.PositiveSmallIntegerField()
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="responses")
    version = models.ForeignKey(QuestionVersion, on_delete=models.PROTECT, related_name="responses")
    # Frozen at the draw like the version: moving a question to another domain later must
    # not rewrite the per-domain results and mastery of attempts already taken. No index:
    # reads reach responses through their attempt or question, and one more index on the
    # largest table would cost every draw and regrade.
    domain = models.ForeignKey(
        Domain, on_delete=models.PROTECT, related_name="+", db_index=False,
        help_text="The question's domain when it was drawn.",
    )
    choice_order = models.JSONField(help_text="Choice ids in the order this attempt shows them.")
    selected = models.ManyToManyField(Choice, through="ResponseChoice", related_name="+", blank=True)
    # The candidate's strike-outs: kept so a reload or another device shows them; never graded.
    struck = models.ManyToManyField(Choice, through="ResponseStrike", related_name="+", blank=True)
    flagged = models.BooleanField(default=False)
    answered_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(
        null=True, blank=True, help_text="Practice: when the learner checked this answer; it is locked from then on."
    )
    is_correct = models.BooleanField(null=True, blank=True, help_text="Set by grading; empty for a void item.")
    # "How sure are you?", saved with the pick (issue 26); empty when not asked or not
    # answered. It never changes a score: it shapes review (exams.study.scheduling) and calibration.
    certainty = models.CharField(max_length=5, choices=Certainty.choices, null=True, blank=True)

    class Meta:
        ordering = ["attempt", "position"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "position"], name="response_unique_position"),
            models.UniqueConstraint(fields=["attempt", "question"], name="response_unique_question"),
            models.CheckConstraint(condition=Q(position__gte=1), name="response_position_positive"),
            models.CheckConstraint(
                condition=Q(certainty__isnull=True) | Q(certainty__in=["guess", "fair", "sure"]), name="response_certainty",
            ),
        ]
        indexes = [
            models.Index(fields=["question", "attempt"], name="response_by_question"),
            # The dashboard's certainty count (exams.study.progress.certainty_calibration): the
            # learner's "sure" answers by attempt, not every answer's row (60,000 at 1,000 attempts).
            models.Index(fields=["attempt"], condition=Q(certainty="sure"), name="response_sure_by_attempt"),
        ]

    def __str__(self) -> str:
        return f"{self.attempt} · {self.position}"


class ResponseChoice(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="picks")
    choice = models.ForeignKey(Choice, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "choice"], name="pick_unique_choice"),
        ]


class ResponseStrike(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="strikes")
    choice = models.ForeignKey(Choice, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "choice"], name="strike_unique_choice"),
        ]


class RegradeEvent(models.Model):
    """One confirmation's effect on past attempts, kept for the record and for learners' notices."""

    erratum = models.ForeignKey(Erratum, on_delete=models.PROTECT, related_name="regrades")
    policy = models.CharField(max_length=16, choices=ErratumPolicy.choices)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    attempts_touched = models.PositiveIntegerField(default=0)
    scores_changed = models.PositiveIntegerField(default=0)
    pass_flips = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Regrade for {self.erratum.question} ({self.get_policy_display()})"


class RegradeChange(models.Model):
    """An attempt whose score a regrade changed: its score before and after."""

    event = models.ForeignKey(RegradeEvent, on_delete=models.CASCADE, related_name="changes")
    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="regrade_changes")
    old_score = models.DecimalField(max_digits=5, decimal_places=2)
    new_score = models.DecimalField(max_digits=5, decimal_places=2)
    old_passed = models.BooleanField()
    new_passed = models.BooleanField()

    class Meta:
        ordering = ["event", "attempt"]
        constraints = [models.UniqueConstraint(fields=["event", "attempt"], name="regrade_change_once")]
        indexes = [models.Index(fields=["attempt", "event"], name="regrade_change_attempt")]


class LearnerAccommodation(Profile):
    """A learner's time-limit factor, as instructors manage it.

    A proxy of accounts.Profile so that its permissions are the exams app's, which is all
    the Instructors group holds.
    """

    class Meta:
        proxy = True
        verbose_name = "learner accommodation"
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.user} ×{self.accommodation_factor}"
