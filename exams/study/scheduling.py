"""FSRS review scheduling through the `fsrs` package: which rating an answer is, and the learner's scheduler."""
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

import fsrs

# With no exam ahead, intervals are capped only by the package's own default (100 years).
UNCAPPED_DAYS = 36500
# A wrong answer comes back this soon, as Anki's default learning step does: a learner
# three days from the exam cannot wait a day for each lapse. One step for new cards
# (learning) and one for lapsed ones (relearning); a right answer then graduates.
STEP = timedelta(minutes=10)


def rating_for(*, answered: bool, right: bool | None, struck: bool, guessed: bool = False) -> fsrs.Rating | None:
    """The FSRS rating one graded slot gives its question; None when the slot is not a review.

    An unanswered slot is not a recall attempt, and a voided item (right is None) has no
    key to recall. Striking out a choice and still getting it right means the learner had
    to work it out, and a right answer the learner said was a guess was not recalled
    surely: Hard rather than Good (in Review; see `rating_on`). Wrong is Again however sure.
    """
    if not answered or right is None:
        return None
    if not right:
        return fsrs.Rating.Again
    return fsrs.Rating.Hard if struck or guessed else fsrs.Rating.Good


def rating_on(card: fsrs.Card | None, rating: fsrs.Rating) -> fsrs.Rating:
    """The rating an answer gives this card: Hard only for a card in Review.

    In Learning and Relearning FSRS repeats the step on Hard, as Anki does, so a learner
    who strikes out a choice and gets it right would loop on the step: a right answer
    there is Good, which graduates the card. A card never reviewed (None) is in Learning.
    """
    if rating == fsrs.Rating.Hard and (card is None or card.state != fsrs.State.Review):
        return fsrs.Rating.Good
    return rating


def maximum_interval(*, exam_date: date | None, today: date) -> int:
    """Days a review may be put off: while the exam is ahead, no later than the day before it."""
    if exam_date is None or exam_date <= today:
        return UNCAPPED_DAYS
    return max(1, (exam_date - today).days - 1)


@lru_cache(maxsize=64)
def _scheduler(desired_retention: float, maximum: int) -> fsrs.Scheduler:
    return fsrs.Scheduler(
        desired_retention=desired_retention,
        learning_steps=(STEP,),
        relearning_steps=(STEP,),
        enable_fuzzing=False,
        maximum_interval=maximum,
    )


def scheduler_for(*, desired_retention: float | Decimal, exam_date: date | None, today: date) -> fsrs.Scheduler:
    """The package's scheduler with its default parameters, the learner's retention and exam cap.

    One learning and one relearning step of ten minutes: a new or lapsed question answered
    wrong is due again ten minutes later, the same day, and a right answer after the step
    graduates it to days. Cards scheduled before the steps (all in Review) keep their state
    and take the steps at their next lapse. No fuzzing, so a due date is a pure function of
    the review history and can be checked.
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


def comes_back(*, due: datetime, now: datetime) -> str:
    """When a question is due again, in the learner's words: "again in 10 minutes", "in 4 days"."""
    left = (due - now).total_seconds()
    if left <= 0:
        return "now"
    if left < 3600:
        minutes = math.ceil(left / 60)
        return f"again in {minutes} minute{'s' if minutes != 1 else ''}"
    hours = round(left / 3600)
    if hours < 24:
        return f"again in {hours} hour{'s' if hours != 1 else ''}"
    # A day's interval read a moment after the review: "in 1 day", not "in 24 hours".
    days = max(1, round(left / 86400))
    return f"in {days} day{'s' if days != 1 else ''}"


def local_today(*, now: datetime, tz_name: str) -> date:
    """The calendar date the learner sees at `now` in their time zone."""
    if now.tzinfo is None or now.utcoffset() is None:
        # A naive time would be read as server-local time and shift dates silently.
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(tz_name)).date()
