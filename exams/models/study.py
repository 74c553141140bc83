"""Study: review cards (FSRS) and bookmarks."""
from datetime import UTC

import fsrs
from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from exams.markdown import render_markdown
from exams.models.bank import Question, QuestionStatus, learner_questions


class CardState(models.IntegerChoices):
    # The values are fsrs.State's, so a card converts both ways without a table.
    LEARNING = 1, "Learning"
    REVIEW = 2, "Review"
    RELEARNING = 3, "Relearning"


class ReviewCardQuerySet(models.QuerySet):
    def due(self, *, user, exam):
        """The learner's cards of this exam due now (database clock), ready, active questions only."""
        return self.filter(user=user, question__exam=exam, due__lte=Now()).filter(learner_questions("question__"))


class ReviewCard(models.Model):
    """A learner's FSRS memory state for one question (see exams.study.scheduling)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="review_cards")
    state = models.PositiveSmallIntegerField(choices=CardState.choices, default=CardState.LEARNING)
    step = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Learning step; empty in review.")
    stability = models.FloatField(null=True, blank=True, help_text="Days until recall falls to 90%.")
    difficulty = models.FloatField(null=True, blank=True, help_text="1 (easy) to 10 (hard).")
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = ReviewCardQuerySet.as_manager()

    class Meta:
        ordering = ["due", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "question"], name="review_card_once"),
            models.CheckConstraint(condition=Q(state__in=[1, 2, 3]), name="review_card_state"),
        ]
        indexes = [models.Index(fields=["user", "due"], name="review_card_due")]

    def __str__(self) -> str:
        return f"{self.user} · {self.question} (due {self.due:%Y-%m-%d %H:%M})"

    def as_fsrs(self) -> fsrs.Card:
        return fsrs.Card(
            card_id=self.pk or 0, state=fsrs.State(self.state), step=self.step, stability=self.stability,
            difficulty=self.difficulty, due=self.due.astimezone(UTC),
            last_review=self.last_review.astimezone(UTC) if self.last_review else None,
        )

    def take(self, card: fsrs.Card) -> None:
        """Copy the package's card state onto this row (not saved)."""
        self.state, self.step = int(card.state), card.step
        self.stability, self.difficulty = card.stability, card.difficulty
        self.due, self.last_review = card.due, card.last_review


class BookmarkQuerySet(models.QuerySet):
    def for_user(self, user):
        # Only a ready question was ever drawn; a draft stays out should one go back to draft.
        return self.filter(user=user, question__status=QuestionStatus.READY)


NOTE_MAX_LENGTH = 2000


class Bookmark(models.Model):
    """A question a learner keeps coming back to, with their private note (never shown to anyone else)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bookmarks")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="bookmarks")
    note = models.TextField(blank=True, validators=[MaxLengthValidator(NOTE_MAX_LENGTH)], help_text="Markdown.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = BookmarkQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="bookmark_once")]
        indexes = [models.Index(fields=["user", "-updated_at"], name="bookmark_list")]

    def __str__(self) -> str:
        return f"{self.user} · {self.question}"

    @property
    def note_html(self) -> str:
        return render_markdown(self.note)
