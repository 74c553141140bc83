"""Leitner review boxes: where a question goes after an answer, and when it is due."""

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

INTERVAL_DAYS = {1: 0, 2: 1, 3: 3, 4: 7, 5: 16}
LAST_BOX = max(INTERVAL_DAYS)


@dataclass(frozen=True)
class ReviewState:
    box: int
    due_on: date

    def __post_init__(self) -> None:
        if self.box not in INTERVAL_DAYS:
            raise ValueError(f"box must be one of {sorted(INTERVAL_DAYS)}, got {self.box}")


def after_answer(
    *, state: ReviewState | None, right: bool, in_review: bool, today: date
) -> ReviewState | None:
    """The review state after one answer; None means not in review (never was, or retired).

    `today` is the learner's local date, so "due today" matches the learner's calendar.
    """
    if not right:
        return ReviewState(box=1, due_on=today)
    # Only a review tests recall after the box's interval has passed, so only a review
    # promotes; a right answer elsewhere (or to a question not in review) changes nothing.
    if not in_review or state is None:
        return state
    if state.box == LAST_BOX:
        return None
    box = state.box + 1
    return ReviewState(box=box, due_on=today + timedelta(days=INTERVAL_DAYS[box]))


def local_today(*, now: datetime, tz_name: str) -> date:
    """The calendar date the learner sees at `now` in their time zone."""
    if now.tzinfo is None or now.utcoffset() is None:
        # A naive time would be read as server-local time and shift due dates silently.
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(tz_name)).date()
