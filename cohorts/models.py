"""Cohorts: an instructor's group of learners preparing for one exam, joined by invitation."""
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from exams.models import Exam

INVITATION_LIFETIME = timedelta(days=14)


class Cohort(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="owned_cohorts")
    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="cohorts")
    name = models.CharField(max_length=100)
    # A member's domain mastery below these (percent) is flagged on the cohort page.
    at_risk_below = models.PositiveSmallIntegerField(
        default=60, validators=[MinValueValidator(1), MaxValueValidator(100)], help_text="Percent."
    )
    needs_review_below = models.PositiveSmallIntegerField(
        default=70, validators=[MinValueValidator(1), MaxValueValidator(100)], help_text="Percent."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(at_risk_below__lte=F("needs_review_below")), name="cohort_at_risk_within_needs_review"
            ),
            models.CheckConstraint(condition=Q(needs_review_below__lte=100), name="cohort_thresholds_percent"),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="memberships")
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cohort_memberships")
    joined_at = models.DateTimeField(auto_now_add=True)
    # The member's consent to the owner seeing their mock results (score, per-domain table,
    # each question right / wrong / unanswered): set when they agree, at joining or on My
    # cohorts; cleared when they withdraw it. Empty: the owner sees the cohort report only.
    results_shared_at = models.DateTimeField(null=True, blank=True)
    # When the member answered whether to share; empty for members who joined before the
    # question existed, whom My cohorts asks once.
    results_asked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cohort", "learner"], name="one_membership_per_learner")]
        indexes = [models.Index(fields=["learner"], name="membership_learner")]

    def __str__(self) -> str:
        return f"{self.learner} in {self.cohort}"

    @property
    def shares_results(self) -> bool:
        return self.results_shared_at is not None


def new_token() -> str:
    return secrets.token_urlsafe(24)


def default_expiry():
    return timezone.now() + INVITATION_LIFETIME


class InvitationQuerySet(models.QuerySet):
    def usable(self):
        return self.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())


class Invitation(models.Model):
    """A link that lets any signed-in learner join the cohort until it expires or is revoked."""

    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(default=default_expiry)
    revoked_at = models.DateTimeField(null=True, blank=True)
    shares_results = models.BooleanField(
        "asks to share results", default=False,
        help_text="The link asks each learner who joins whether to share their mock results with you: the score, "
        "the per-domain table and which questions they got right, wrong or left unanswered.",
    )

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Invitation to {self.cohort}"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()
