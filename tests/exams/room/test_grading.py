"""Tests for all-or-nothing grading, scores, pass marks and erratum keys."""

from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.room.grading import (
    AttemptGrade,
    ConfirmedErratum,
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


# --- key_for: confirmed errata folded in order -------------------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def erratum(policy: Policy, published, hours: int) -> ConfirmedErratum:
    return ConfirmedErratum(policy=policy, published=frozenset(published), decided_at=T0 + timedelta(hours=hours))


BEFORE, BETWEEN, AFTER = T0, T0 + timedelta(hours=1, minutes=30), T0 + timedelta(hours=5)


def test_key_for_without_errata_is_the_current_key() -> None:
    assert key_for(correct=[2], errata=[], finished_at=BEFORE) == ItemKey(correct=frozenset({2}))


@pytest.mark.parametrize("finished_at", [BEFORE, AFTER, None])
def test_key_for_credit_corrected_uses_only_the_corrected_key(finished_at) -> None:
    assert key_for(
        correct=[2], errata=[erratum(Policy.CREDIT_CORRECTED, [1], 1)], finished_at=finished_at
    ) == ItemKey(correct=frozenset({2}))


def test_key_for_credit_either_accepts_the_published_key_for_earlier_attempts() -> None:
    item = key_for(correct=[2], errata=[erratum(Policy.CREDIT_EITHER, [1], 1)], finished_at=BEFORE)
    assert item == ItemKey(correct=frozenset({2}), also_accepted=frozenset({frozenset({1})}))
    assert is_right(selected=frozenset({1}), key=item)
    assert is_right(selected=frozenset({2}), key=item)


def test_key_for_credit_either_ignores_the_published_key_for_later_attempts() -> None:
    item = key_for(correct=[2], errata=[erratum(Policy.CREDIT_EITHER, [1], 1)], finished_at=AFTER)
    assert item == ItemKey(correct=frozenset({2}))
    assert not is_right(selected=frozenset({1}), key=item)


def test_key_for_credit_either_with_multiple_select_keys() -> None:
    item = key_for(correct=[1, 3], errata=[erratum(Policy.CREDIT_EITHER, [1, 2], 1)], finished_at=BEFORE)
    assert is_right(selected=frozenset({1, 2}), key=item)
    assert is_right(selected=frozenset({1, 3}), key=item)
    # Credit either key means either whole key, not any mix of the two.
    assert not is_right(selected=frozenset({1}), key=item)
    assert not is_right(selected=frozenset({1, 2, 3}), key=item)


def test_key_for_credit_either_without_a_published_key() -> None:
    item = key_for(correct=[2], errata=[erratum(Policy.CREDIT_EITHER, [], 1)], finished_at=BEFORE)
    assert item == ItemKey(correct=frozenset({2}))


@pytest.mark.parametrize("finished_at", [BEFORE, AFTER])
def test_key_for_void(finished_at) -> None:
    item = key_for(correct=[2], errata=[erratum(Policy.VOID, [1], 1)], finished_at=finished_at)
    assert item.void


def test_a_second_credit_either_with_the_same_key_keeps_the_first_ones_credit() -> None:
    # A→B credit either, then a second credit-either whose published key is already B: the
    # bug this fold fixes read only the second, and took the A credit back.
    errata = [erratum(Policy.CREDIT_EITHER, [1], 1), erratum(Policy.CREDIT_EITHER, [2], 2)]
    assert is_right(selected=frozenset({1}), key=key_for(correct=[2], errata=errata, finished_at=BEFORE))
    assert not is_right(selected=frozenset({1}), key=key_for(correct=[2], errata=errata, finished_at=BETWEEN))


def test_each_credit_either_accepts_its_own_published_key_for_attempts_before_it() -> None:
    # A→B at 1h, B→C at 2h, both credit either.
    errata = [erratum(Policy.CREDIT_EITHER, [1], 1), erratum(Policy.CREDIT_EITHER, [2], 2)]
    before, between, after = (key_for(correct=[3], errata=errata, finished_at=t) for t in (BEFORE, BETWEEN, AFTER))
    assert before.also_accepted == {frozenset({1}), frozenset({2})}
    assert between.also_accepted == {frozenset({2})}
    assert after == ItemKey(correct=frozenset({3}))


def test_a_void_anywhere_in_the_fold_voids_the_item() -> None:
    errata = [erratum(Policy.VOID, [1], 1), erratum(Policy.CREDIT_EITHER, [1], 2)]
    assert key_for(correct=[2], errata=errata, finished_at=BEFORE).void


@given(
    policies=st.lists(st.sampled_from([Policy.CREDIT_CORRECTED, Policy.CREDIT_EITHER]), min_size=1, max_size=4),
    keys=st.lists(st.integers(1, 4), min_size=5, max_size=5),
    finished_hours=st.integers(0, 6),
    extra=st.sampled_from([Policy.CREDIT_EITHER, Policy.CREDIT_CORRECTED, Policy.VOID]),
)
def test_a_later_credit_either_never_withdraws_an_accepted_answer(policies, keys, finished_hours, extra) -> None:
    """For an attempt finished before it, appending an erratum accepts everything accepted
    before, except after a void, and except the key a credit-corrected one corrects away from."""
    # Erratum i corrects keys[i] to keys[i + 1], confirmed at hour i + 1; the attempt
    # finished half an hour past some hour before the new erratum's.
    errata = [erratum(policy, [keys[i]], i + 1) for i, policy in enumerate(policies)]
    finished_at = T0 + timedelta(hours=min(finished_hours, len(policies)), minutes=30)
    current = keys[len(policies)]
    before = key_for(correct=[current], errata=errata, finished_at=finished_at)
    following = keys[(len(policies) + 1) % len(keys)]
    after = key_for(
        correct=[following], errata=[*errata, erratum(extra, [current], len(policies) + 1)], finished_at=finished_at
    )
    if extra == Policy.VOID:
        assert after.void
        return
    for accepted in before.also_accepted | {before.correct}:
        withdrawn_by_correction = extra == Policy.CREDIT_CORRECTED and accepted == frozenset({current})
        if not withdrawn_by_correction:
            assert is_right(selected=accepted, key=after), (accepted, errata)


def test_policy_values_are_stable() -> None:
    # These strings are stored in the database.
    assert [p.value for p in Policy] == ["credit_corrected", "credit_either", "void"]
    assert Policy("void") is Policy.VOID
