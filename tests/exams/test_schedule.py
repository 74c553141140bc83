"""Tests for Leitner review boxes and the learner's local date."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.schedule import INTERVAL_DAYS, ReviewState, after_answer, local_today

TODAY = date(2025, 3, 14)


def test_intervals_match_the_product() -> None:
    assert INTERVAL_DAYS == {1: 0, 2: 1, 3: 3, 4: 7, 5: 16}


@pytest.mark.parametrize("in_review", [True, False])
@pytest.mark.parametrize(
    "state", [None, ReviewState(box=1, due_on=TODAY), ReviewState(box=4, due_on=date(2025, 3, 1))]
)
def test_wrong_answer_anywhere_goes_to_box_1_due_today(
    state: ReviewState | None, in_review: bool
) -> None:
    assert after_answer(state=state, right=False, in_review=in_review, today=TODAY) == ReviewState(
        box=1, due_on=TODAY
    )


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        (1, ReviewState(box=2, due_on=date(2025, 3, 15))),
        (2, ReviewState(box=3, due_on=date(2025, 3, 17))),
        (3, ReviewState(box=4, due_on=date(2025, 3, 21))),
        (4, ReviewState(box=5, due_on=date(2025, 3, 30))),
        (5, None),
    ],
)
def test_right_answer_in_review_moves_up_one_box(box: int, expected: ReviewState | None) -> None:
    state = ReviewState(box=box, due_on=TODAY)
    assert after_answer(state=state, right=True, in_review=True, today=TODAY) == expected


def test_promotion_counts_from_the_day_answered_not_the_old_due_date() -> None:
    overdue = ReviewState(box=2, due_on=date(2025, 1, 1))
    assert after_answer(state=overdue, right=True, in_review=True, today=TODAY) == ReviewState(
        box=3, due_on=date(2025, 3, 17)
    )


@pytest.mark.parametrize("state", [None, ReviewState(box=3, due_on=date(2025, 3, 20))])
def test_right_answer_outside_review_changes_nothing(state: ReviewState | None) -> None:
    assert after_answer(state=state, right=True, in_review=False, today=TODAY) == state


def test_right_answer_in_review_for_a_question_not_in_review_stays_out() -> None:
    assert after_answer(state=None, right=True, in_review=True, today=TODAY) is None


@pytest.mark.parametrize("box", [0, 6, -1])
def test_review_state_refuses_unknown_boxes(box: int) -> None:
    with pytest.raises(ValueError):
        ReviewState(box=box, due_on=TODAY)


states = st.one_of(
    st.none(),
    st.builds(
        ReviewState,
        box=st.integers(min_value=1, max_value=5),
        due_on=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)),
    ),
)


@settings(max_examples=200)
@given(
    state=states,
    right=st.booleans(),
    in_review=st.booleans(),
    today=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)),
)
def test_schedule_invariants(
    state: ReviewState | None, right: bool, in_review: bool, today: date
) -> None:
    after = after_answer(state=state, right=right, in_review=in_review, today=today)
    if not right:
        assert after == ReviewState(box=1, due_on=today)
    elif not in_review:
        assert after == state
    elif state is None or state.box == 5:
        assert after is None
    else:
        assert after is not None
        assert after.box == state.box + 1
        assert after.due_on == today + timedelta(days=INTERVAL_DAYS[after.box])
        assert after.due_on > today


@settings(max_examples=50)
@given(today=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)))
def test_five_right_reviews_retire_a_question(today: date) -> None:
    state = after_answer(state=None, right=False, in_review=False, today=today)
    boxes = []
    while state is not None:
        boxes.append(state.box)
        today = state.due_on
        state = after_answer(state=state, right=True, in_review=True, today=today)
    assert boxes == [1, 2, 3, 4, 5]


# --- local_today --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "tz_name", "expected"),
    [
        # 02:00 UTC is still the previous evening on the US west coast.
        (datetime(2024, 6, 1, 2, 0, tzinfo=UTC), "America/Los_Angeles", date(2024, 5, 31)),
        # 20:00 UTC is already the next morning in Tokyo.
        (datetime(2024, 6, 1, 20, 0, tzinfo=UTC), "Asia/Tokyo", date(2024, 6, 2)),
        (datetime(2024, 6, 1, 12, 0, tzinfo=UTC), "UTC", date(2024, 6, 1)),
        # DST began that morning in New York (UTC-4): 03:30 UTC is 23:30 the day before.
        (datetime(2024, 3, 11, 3, 30, tzinfo=UTC), "America/New_York", date(2024, 3, 10)),
        # An aware time in another offset is converted, not read as local.
        (
            datetime(2024, 6, 1, 23, 0, tzinfo=timezone(timedelta(hours=-5))),
            "Europe/Berlin",
            date(2024, 6, 2),
        ),
    ],
)
def test_local_today(now: datetime, tz_name: str, expected: date) -> None:
    assert local_today(now=now, tz_name=tz_name) == expected


def test_local_today_refuses_a_naive_time() -> None:
    with pytest.raises(ValueError):
        local_today(now=datetime(2024, 6, 1, 12, 0), tz_name="Europe/Berlin")
