"""Tests for all-or-nothing grading, scores, pass marks and erratum keys."""

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.grading import (
    AttemptGrade,
    DomainResult,
    ItemKey,
    Policy,
    Slot,
    grade_attempt,
    is_passed,
    is_right,
    key_for,
    score_percent,
)


def key(*choice_ids: int) -> ItemKey:
    return ItemKey(correct=frozenset(choice_ids))


# --- is_right -----------------------------------------------------------------------


def test_single_answer_right_and_wrong() -> None:
    assert is_right(selected=frozenset({2}), key=key(2))
    assert not is_right(selected=frozenset({3}), key=key(2))


def test_multiple_select_needs_the_exact_set() -> None:
    assert is_right(selected=frozenset({1, 3}), key=key(1, 3))
    assert not is_right(selected=frozenset({1}), key=key(1, 3))
    assert not is_right(selected=frozenset({1, 3, 4}), key=key(1, 3))
    assert not is_right(selected=frozenset({1, 4}), key=key(1, 3))


def test_empty_selection_is_wrong() -> None:
    assert not is_right(selected=frozenset(), key=key(1))
    assert not is_right(selected=frozenset(), key=ItemKey(correct=frozenset()))


def test_also_accepted_selection_earns_credit() -> None:
    item = ItemKey(correct=frozenset({2}), also_accepted=frozenset({frozenset({1})}))
    assert is_right(selected=frozenset({1}), key=item)
    assert is_right(selected=frozenset({2}), key=item)
    assert not is_right(selected=frozenset({1, 2}), key=item)
    assert not is_right(selected=frozenset({3}), key=item)


# --- score_percent and is_passed ----------------------------------------------------


@pytest.mark.parametrize(
    ("right", "total", "expected"),
    [
        (2, 3, "66.67"),
        (1, 3, "33.33"),
        (1, 8, "12.50"),
        (1, 32, "3.13"),  # 3.125: half up, where banker's rounding would give 3.12
        (3, 32, "9.38"),  # 9.375
        (0, 5, "0.00"),
        (5, 5, "100.00"),
        (0, 0, "0.00"),
    ],
)
def test_score_percent(right: int, total: int, expected: str) -> None:
    score = score_percent(right=right, total=total)
    assert score == Decimal(expected)
    assert str(score) == expected


def test_score_percent_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        score_percent(right=4, total=3)
    with pytest.raises(ValueError):
        score_percent(right=-1, total=3)


@pytest.mark.parametrize(
    ("right", "total", "passing_score", "expected"),
    [
        (7, 10, 70, True),
        (6, 10, 70, False),
        (69, 99, 70, False),  # 69.70%
        (42, 60, 70, True),  # exactly 70%
        (0, 0, 0, False),
        (0, 0, 70, False),
    ],
)
def test_is_passed(right: int, total: int, passing_score: int, expected: bool) -> None:
    assert is_passed(right=right, total=total, passing_score=passing_score) is expected


def test_a_score_that_rounds_to_the_pass_mark_still_fails() -> None:
    assert score_percent(right=69_999, total=100_000) == Decimal("70.00")
    assert not is_passed(right=69_999, total=100_000, passing_score=70)


# --- grade_attempt ------------------------------------------------------------------


def test_grade_attempt_hand_example() -> None:
    void = ItemKey(correct=frozenset({1}), void=True)
    slots = [
        Slot(domain_id=1, selected=frozenset({1}), key=key(1)),  # right
        Slot(domain_id=1, selected=frozenset({2}), key=key(1)),  # wrong
        Slot(domain_id=2, selected=frozenset({1, 2}), key=key(1, 2)),  # right
        Slot(domain_id=2, selected=frozenset(), key=key(3)),  # unanswered
        Slot(domain_id=2, selected=frozenset({1}), key=void),  # void: counts nowhere
        Slot(domain_id=3, selected=frozenset(), key=void),  # a domain with only a void item
    ]
    grade = grade_attempt(slots=slots, passing_score=50)
    assert grade == AttemptGrade(
        right=2,
        total=4,
        score=Decimal("50.00"),
        passed=True,
        domains={
            1: DomainResult(domain_id=1, right=1, total=2),
            2: DomainResult(domain_id=2, right=1, total=2),
            3: DomainResult(domain_id=3, right=0, total=0),
        },
        item_results=(True, False, True, False, None, None),
    )
    assert grade.domains[1].percent == Decimal("50.00")
    assert grade.domains[3].percent is None


def test_voiding_an_item_can_turn_a_fail_into_a_pass() -> None:
    slots = [
        Slot(domain_id=1, selected=frozenset({1}), key=key(1)),
        Slot(domain_id=1, selected=frozenset({1}), key=key(1)),
        Slot(domain_id=1, selected=frozenset({2}), key=key(1)),
    ]
    assert not grade_attempt(slots=slots, passing_score=70).passed
    slots[2] = Slot(domain_id=1, selected=frozenset({2}), key=ItemKey(correct=frozenset({1}), void=True))
    grade = grade_attempt(slots=slots, passing_score=70)
    assert (grade.right, grade.total, grade.score, grade.passed) == (2, 2, Decimal("100.00"), True)


def test_empty_attempt() -> None:
    grade = grade_attempt(slots=[], passing_score=70)
    assert (grade.right, grade.total, grade.score, grade.passed) == (0, 0, Decimal("0.00"), False)
    assert grade.domains == {}
    assert grade.item_results == ()


choice_sets = st.frozensets(st.integers(min_value=1, max_value=4), max_size=4)
item_keys = st.builds(
    ItemKey,
    correct=st.frozensets(st.integers(min_value=1, max_value=4), min_size=1, max_size=3),
    also_accepted=st.frozensets(choice_sets, max_size=2),
    void=st.booleans(),
)
slot_lists = st.lists(
    st.builds(Slot, domain_id=st.integers(min_value=1, max_value=4), selected=choice_sets, key=item_keys),
    max_size=25,
)


@settings(max_examples=200)
@given(slots=slot_lists, passing_score=st.integers(min_value=0, max_value=100))
def test_grade_attempt_matches_a_brute_force_recount(slots: list[Slot], passing_score: int) -> None:
    grade = grade_attempt(slots=slots, passing_score=passing_score)

    expected_items: list[bool | None] = []
    for slot in slots:
        if slot.key.void:
            expected_items.append(None)
        else:
            accepted = [slot.key.correct, *slot.key.also_accepted]
            expected_items.append(bool(slot.selected) and any(slot.selected == a for a in accepted))
    counted = [r for r in expected_items if r is not None]
    right, total = sum(counted), len(counted)

    assert grade.item_results == tuple(expected_items)
    assert (grade.right, grade.total) == (right, total)
    assert grade.score == (
        (Decimal(100 * right) / Decimal(total)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        if total
        else 0
    )
    assert grade.passed == (total > 0 and Fraction(100 * right, total) >= passing_score)
    assert set(grade.domains) == {slot.domain_id for slot in slots}
    for domain_id, result in grade.domains.items():
        results = [r for s, r in zip(slots, expected_items, strict=True) if s.domain_id == domain_id]
        assert result.total == sum(r is not None for r in results)
        assert result.right == sum(r is True for r in results)
    assert sum(d.right for d in grade.domains.values()) == grade.right
    assert sum(d.total for d in grade.domains.values()) == grade.total


@settings(max_examples=200)
@given(right=st.integers(min_value=0, max_value=500), extra=st.integers(min_value=0, max_value=500))
def test_score_percent_matches_decimal_rounding(right: int, extra: int) -> None:
    total = right + extra
    if total == 0:
        return
    exact = (Decimal(100 * right) / Decimal(total)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    assert score_percent(right=right, total=total) == exact


# --- key_for ------------------------------------------------------------------------


@pytest.mark.parametrize("finished_before_confirmation", [True, False])
@pytest.mark.parametrize("policy", [None, Policy.CREDIT_CORRECTED])
def test_key_for_credit_corrected_uses_only_the_corrected_key(
    policy: Policy | None, finished_before_confirmation: bool
) -> None:
    assert key_for(
        correct=[2], published=[1], policy=policy, finished_before_confirmation=finished_before_confirmation
    ) == ItemKey(correct=frozenset({2}))


def test_key_for_credit_either_accepts_the_published_key_for_earlier_attempts() -> None:
    item = key_for(correct=[2], published=[1], policy=Policy.CREDIT_EITHER, finished_before_confirmation=True)
    assert item == ItemKey(correct=frozenset({2}), also_accepted=frozenset({frozenset({1})}))
    assert is_right(selected=frozenset({1}), key=item)
    assert is_right(selected=frozenset({2}), key=item)


def test_key_for_credit_either_ignores_the_published_key_for_later_attempts() -> None:
    item = key_for(correct=[2], published=[1], policy=Policy.CREDIT_EITHER, finished_before_confirmation=False)
    assert item == ItemKey(correct=frozenset({2}))
    assert not is_right(selected=frozenset({1}), key=item)


def test_key_for_credit_either_with_multiple_select_keys() -> None:
    item = key_for(
        correct=[1, 3], published=[1, 2], policy=Policy.CREDIT_EITHER, finished_before_confirmation=True
    )
    assert is_right(selected=frozenset({1, 2}), key=item)
    assert is_right(selected=frozenset({1, 3}), key=item)
    # Credit either key means either whole key, not any mix of the two.
    assert not is_right(selected=frozenset({1}), key=item)
    assert not is_right(selected=frozenset({1, 2, 3}), key=item)


def test_key_for_credit_either_without_a_published_key() -> None:
    item = key_for(correct=[2], published=None, policy=Policy.CREDIT_EITHER, finished_before_confirmation=True)
    assert item == ItemKey(correct=frozenset({2}))


@pytest.mark.parametrize("finished_before_confirmation", [True, False])
def test_key_for_void(finished_before_confirmation: bool) -> None:
    item = key_for(
        correct=[2], published=[1], policy=Policy.VOID, finished_before_confirmation=finished_before_confirmation
    )
    assert item.void


def test_policy_values_are_stable() -> None:
    # These strings are stored in the database.
    assert [p.value for p in Policy] == ["credit_corrected", "credit_either", "void"]
    assert Policy("void") is Policy.VOID
