"""Review cards: graded slots applied to the learner's FSRS cards."""
from dataclasses import dataclass
from datetime import datetime, timedelta

import fsrs
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Max, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, Certainty, Exam, Response, ReviewCard
from exams.models.study import CardState
from exams.study import scheduling

# "Practise my mistakes now" reaches back this far for questions answered wrong.
MISTAKES_WITHIN = timedelta(days=7)
# How much later than its attempt's finish an answer may be stamped (the grace after a
# deadline, and a wait for the attempt's lock): exams.study.progress.MASTERY_MARGIN's rule.
MISTAKES_MARGIN = Attempt.GRACE + timedelta(minutes=10)


@dataclass(frozen=True)
class Review:
    """One graded slot as a review of the learner's card for its question.

    `rating` is what the answer earns in Review; a card in Learning or Relearning may take
    it otherwise (exams.study.scheduling.rating_on).
    """

    question_id: int
    rating: fsrs.Rating
    at: datetime


def reviews_record(*, user, reviews: list[Review]) -> None:
    """Apply these reviews to the learner's cards through FSRS, in three queries.

    Reviews are applied in time order; the scheduler is the learner's (desired retention,
    the cap from an exam date ahead of the review's day in their zone).
    """
    if not reviews:
        return
    # Part of the caller's transaction when there is one (checking and grading hold one);
    # savepoint=False: no savepoint round trips inside it.
    with transaction.atomic(savepoint=False):
        _reviews_record(user=user, reviews=reviews)


def _reviews_record(*, user, reviews: list[Review]) -> None:
    profile = Profile.objects.for_user(user)
    # Locked in question order, as the upsert below writes: two gradings of one learner at
    # once (two tabs) then queue on the cards instead of one overwriting the other's review.
    existing = (
        ReviewCard.objects.select_for_update()
        .filter(user=user, question_id__in={r.question_id for r in reviews})
        .order_by("question_id")
    )
    cards = {card.question_id: card for card in existing}
    changed: dict[int, ReviewCard] = {}
    for review in sorted(reviews, key=lambda r: (r.at, r.question_id)):
        row = cards.get(review.question_id) or ReviewCard(user=user, question_id=review.question_id)
        if row.last_review is not None and review.at < row.last_review:
            # Older than the card's last review (a mock finished late, at its deadline, after
            # a practice check of the same question): FSRS would go back in time; the newer
            # review already stands for what the learner knows.
            continue
        scheduler = scheduling.scheduler_for(
            desired_retention=profile.desired_retention,
            exam_date=profile.exam_date,
            today=scheduling.local_today(now=review.at, tz_name=profile.time_zone),
        )
        # A card never reviewed (one an erratum made due) starts as the package's new card.
        card = row.as_fsrs() if row.last_review is not None else None
        rating = scheduling.rating_on(card, review.rating)
        row.take(scheduling.review(card=card, rating=rating, at=review.at, scheduler=scheduler))
        row.updated_at = review.at
        cards[review.question_id] = changed[review.question_id] = row
    ReviewCard.objects.bulk_create(
        sorted(changed.values(), key=lambda card: card.question_id),
        update_conflicts=True,
        unique_fields=["user", "question"],
        update_fields=["state", "step", "stability", "difficulty", "due", "last_review", "updated_at"],
    )


def review_of(response: Response, *, at: datetime) -> Review | None:
    """The review a graded slot gives (picks and strikes prefetched), or None."""
    rating = scheduling.rating_for(
        answered=response.answered_at is not None, right=response.is_correct, struck=bool(response.strikes.all()),
        guessed=response.certainty == Certainty.GUESS,
    )
    return None if rating is None else Review(question_id=response.question_id, rating=rating, at=at)


def due_after_check(response: Response, *, user) -> datetime | None:
    """When a checked answer's question comes back: its card's due, if that check (or a later
    review) scheduled it; None for an answer that was no review (a voided question)."""
    if response.checked_at is None:
        return None
    return (
        ReviewCard.objects.filter(user=user, question_id=response.question_id, last_review__gte=response.checked_at)
        .values_list("due", flat=True).first()
    )


def due_cards(*, user, exam: Exam, excluded) -> QuerySet:
    """The learner's due cards of this exam in the order a review serves them: a question last
    answered wrong while "sure" first (the most telling mistakes), then most overdue first.

    `excluded` holds question ids kept out (a running mock's). Values: question id and its
    exclusion group.
    """
    last_graded = Response.objects.filter(
        attempt__user=user, question_id=OuterRef("question_id"), is_correct__isnull=False, answered_at__isnull=False,
    ).order_by("-answered_at", "-pk")
    sure_and_wrong = ExpressionWrapper(Q(certainty=Certainty.SURE, is_correct=False), output_field=BooleanField())
    return (
        ReviewCard.objects.due(user=user, exam=exam)
        .exclude(question_id__in=excluded)
        .annotate(sure_and_wrong=Coalesce(Subquery(last_graded.annotate(flag=sure_and_wrong).values("flag")[:1]), Value(False)))
        .order_by("-sure_and_wrong", "due", "pk")
        .values_list("question_id", "question__exclusion_group")
    )


def learning_cards(*, user, exam: Exam) -> QuerySet:
    """The learner's cards of this exam still on a step (Learning or Relearning), soonest due first."""
    return ReviewCard.objects.filter(
        user=user, question__exam=exam, question__is_active=True, state__in=[CardState.LEARNING, CardState.RELEARNING],
    ).order_by("due", "pk")


def recent_mistakes(*, user, exam: Exam) -> QuerySet:
    """The learner's answers to this exam's questions graded wrong in the last seven days.

    A graded answer only: a running mock's and an abandoned practice's unchecked slots carry
    no verdict (is_correct is empty).
    """
    since = timezone.now() - MISTAKES_WITHIN
    # An answer is stamped before its attempt finishes, or at most MASTERY_MARGIN after
    # (exams.study.progress): the attempt filter changes no row, it lets a long history's
    # older attempts go unread (bench/scale: 1,000 attempts' 60,000 answers were scanned).
    return Response.objects.filter(
        Q(attempt__finished_at__isnull=True) | Q(attempt__finished_at__gte=since - MISTAKES_MARGIN),
        attempt__user=user, attempt__exam=exam, question__is_active=True, is_correct=False,
        answered_at__gte=since,
    )


def mistake_questions(*, user, exam: Exam, excluded) -> list[tuple[int, str]]:
    """"Practise my mistakes now": questions on a learning step, then those answered wrong in
    the last seven days, newest first; each once, with its exclusion group. Two queries."""
    chosen: dict[int, str] = {}
    for question_id, group in learning_cards(user=user, exam=exam).exclude(question_id__in=excluded).values_list(
        "question_id", "question__exclusion_group"
    ):
        chosen.setdefault(question_id, group)
    newest_first = (
        recent_mistakes(user=user, exam=exam).exclude(question_id__in=excluded)
        .values("question_id", "question__exclusion_group").annotate(last=Max("answered_at")).order_by("-last", "-question_id")
    )
    for row in newest_first:
        chosen.setdefault(row["question_id"], row["question__exclusion_group"])
    return list(chosen.items())
