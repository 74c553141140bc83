"""A learner's settings: time zone, keyboard shortcuts, time-limit accommodation, review scheduling."""
import zoneinfo
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"{value!r} is not a known time zone (e.g. Europe/Paris, America/New_York).")


# A review session's sizes (issue 26): the learner picks one, and it is remembered.
REVIEW_SESSION_SIZES = [(10, "10"), (20, "20"), (50, "50")]


class ProfileManager(models.Manager):
    def for_user(self, user) -> "Profile":
        profile, _ = self.get_or_create(user=user)
        return profile


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    time_zone = models.CharField(max_length=64, default="UTC", validators=[validate_time_zone])
    shortcuts_enabled = models.BooleanField(
        default=True, verbose_name="single-key shortcuts",
        help_text="A–E or 1–5 choose, N / P next / previous, F flag.",
    )
    accommodation_factor = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("1.00"),
        validators=[MinValueValidator(Decimal("1.00")), MaxValueValidator(Decimal("3.00"))],
        help_text="Multiplies the time limit (1.50 = 50% extra time).",
    )
    desired_retention = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("0.90"),
        validators=[MinValueValidator(Decimal("0.80")), MaxValueValidator(Decimal("0.97"))],
        verbose_name="desired retention",
        help_text="The chance of still knowing an answer when it comes back for review, 0.80–0.97. "
        "Higher means more frequent reviews.",
    )
    exam_date = models.DateField(
        null=True, blank=True, verbose_name="exam date",
        help_text="Optional. Reviews are then scheduled no later than the day before it.",
    )

    review_session_size = models.PositiveSmallIntegerField(
        choices=REVIEW_SESSION_SIZES, default=20, verbose_name="review session size",
        help_text="How many questions a review session takes: 10, 20 or 50. Set when you start one.",
    )
    ask_certainty_in_mocks = models.BooleanField(
        default=False, verbose_name="ask how sure I am in mocks",
        help_text="Adds “How sure are you?” (guessing / fairly sure / sure) beside the choices in timed mocks, "
        "as practice always offers it. It never changes a score.",
    )

    objects = ProfileManager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(accommodation_factor__gte=1, accommodation_factor__lte=3),
                name="profile_accommodation_range",
            ),
            models.CheckConstraint(
                condition=Q(desired_retention__gte=Decimal("0.80"), desired_retention__lte=Decimal("0.97")),
                name="profile_desired_retention_range",
            ),
            models.CheckConstraint(condition=Q(review_session_size__in=[10, 20, 50]), name="profile_review_session_size"),
        ]

    def __str__(self) -> str:
        return f"Profile of {self.user}"


class UsernameSkeleton(models.Model):
    """A username's UTS #39 confusable skeletons (accounts.lookalikes), unique across users.

    A user without a row (one who shared a skeleton when the rule came in, see migration
    0004) signs in as before; only new names and renames are held to the rule.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="username_skeleton")
    skeleton = models.TextField(unique=True, help_text="Skeleton of the casefolded username.")
    upper_skeleton = models.TextField(unique=True, help_text="Skeleton of the upper-cased username.")

    def __str__(self) -> str:
        return f"{self.user} → {self.skeleton}"
