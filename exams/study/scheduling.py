"""FSRS review scheduling through the `fsrs` package: which rating an answer is, and the learner's scheduler."""
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

import fsrs

# With no exam ahead, intervals are capped only by the package's own default (100 years).
UNCAPPED_DAYS = 36500


def rating_for(*, answered: bool, right: bool | None, struck: bool) -> fsrs.Rating | None:
    """The FSRS rating one graded slot gives its question; None when the slot is not a review.

    An unanswered slot is not a recall attempt, and a voided item (right is None) has no
    key to recall. Striking out a choice and still getting it right means the learner had
    to work it out: Hard rather than Good.
    """
    if not answered or right is None:
        return None
    if not right:
        return fsrs.Rating.Again
    return fsrs.Rating.Hard if struck else fsrs.Rating.Good


def maximum_interval(*, exam_date: date | None, today: date) -> int:
    """Days a review may be put off: while the exam is ahead, no later than the day before it."""
    if exam_date is None or exam_date <= today:
        return UNCAPPED_DAYS
    return max(1, (exam_date - today).days - 1)


@lru_cache(maxsize=64)
def _scheduler(desired_retention: float, maximum: int) -> fsrs.Scheduler:
    return fsrs.Scheduler(
        desired_retention=desired_retention,
        learning_steps=(),
        relearning_steps=(),
        enable_fuzzing=False,
        maximum_interval=maximum,
    )


def scheduler_for(*, desired_retention: float | Decimal, exam_date: date | None, today: date) -> fsrs.Scheduler:
    """The package's scheduler with its default parameters, the learner's retention and exam cap.

    No learning or relearning steps: a question comes back after days, not minutes, since a
    learner answers it again only in a later session. No fuzzing, so a due date is a pure
    function of the review history and can be checked.
    """
    return _scheduler(float(desired_retention), maximum_interval(exam_date=exam_date, today=today))


def review(*, card: fsrs.Card | None, rating: fsrs.Rating, at: datetime, scheduler: fsrs.Scheduler) -> fsrs.Card:
    """The card after one review at `at` (a card never reviewed before when `card` is None)."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("a review time must be timezone-aware")
    # card_id is the package's own bookkeeping, unused here; giving one avoids its 1 ms sleep.
    card = card if card is not None else fsrs.Card(card_id=0)
    reviewed, _log = scheduler.review_card(card, rating, review_datetime=at.astimezone(UTC))
    return reviewed


def local_today(*, now: datetime, tz_name: str) -> date:
    """The calendar date the learner sees at `now` in their time zone."""
    if now.tzinfo is None or now.utcoffset() is None:
        # A naive time would be read as server-local time and shift dates silently.
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(tz_name)).date()
