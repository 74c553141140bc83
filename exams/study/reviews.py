"""Review cards: graded slots applied to the learner's FSRS cards."""
from dataclasses import dataclass
from datetime import datetime

import fsrs
from django.db import transaction

from accounts.models import Profile
from exams.models import Response, ReviewCard
from exams.study import scheduling


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
