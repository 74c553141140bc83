"""All-or-nothing grading of an attempt, including the keys that errata policies produce."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum


class Policy(StrEnum):
    CREDIT_CORRECTED = "credit_corrected"
    CREDIT_EITHER = "credit_either"
    VOID = "void"


@dataclass(frozen=True)
class ItemKey:
    correct: frozenset[int]
    also_accepted: frozenset[frozenset[int]] = frozenset()
    void: bool = False


def is_right(*, selected: frozenset[int], key: ItemKey) -> bool:
    """Whether a selection earns credit; a void key is the caller's to skip, not this one's."""
    if not selected:
        return False
    return selected == key.correct or selected in key.also_accepted


@dataclass(frozen=True)
class Slot:
    domain_id: int
    selected: frozenset[int]
    key: ItemKey


def _percent_half_up(*, right: int, total: int) -> Decimal:
    # Integer arithmetic, so a score such as 3.125 rounds up to 3.13 with no chance of a
    # binary or context-precision artefact deciding the last digit.
    hundredths = (20_000 * right + total) // (2 * total)
    return Decimal(hundredths).scaleb(-2)


def _check_counts(*, right: int, total: int) -> None:
    if not 0 <= right <= total:
        raise ValueError(f"need 0 <= right <= total, got right={right}, total={total}")


@dataclass(frozen=True)
class DomainResult:
    domain_id: int
    right: int
    total: int

    @property
    def percent(self) -> Decimal | None:
        if self.total == 0:
            return None
        return _percent_half_up(right=self.right, total=self.total)


@dataclass(frozen=True)
class AttemptGrade:
    right: int
    total: int
    score: Decimal
    passed: bool
    domains: dict[int, DomainResult]
    item_results: tuple[bool | None, ...]


def score_percent(*, right: int, total: int) -> Decimal:
    """100·right/total to two places, halves rounded up; 0.00 for an empty attempt."""
    _check_counts(right=right, total=total)
    if total == 0:
        return Decimal("0.00")
    return _percent_half_up(right=right, total=total)


def shown_percent(value) -> Decimal:
    """A stored percent as every page shows it: one decimal, halves up (66.666… → 66.7)."""
    return Decimal(str(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def is_passed(*, right: int, total: int, passing_score: int) -> bool:
    """Pass/fail on the exact ratio, so a rounded 70.00 that is really 69.999 fails."""
    _check_counts(right=right, total=total)
    if total == 0:
        return False
    return right * 100 >= passing_score * total


def grade_attempt(*, slots: Sequence[Slot], passing_score: int) -> AttemptGrade:
    """Grade every slot; void items are left out of the totals and of their domain."""
    item_results: list[bool | None] = []
    domain_right: dict[int, int] = {}
    domain_total: dict[int, int] = {}
    for slot in slots:
        # A domain whose items were all voided still gets a row (total 0) so the
        # results table does not silently lose it.
        domain_right.setdefault(slot.domain_id, 0)
        domain_total.setdefault(slot.domain_id, 0)
        if slot.key.void:
            item_results.append(None)
            continue
        right = is_right(selected=slot.selected, key=slot.key)
        item_results.append(right)
        domain_total[slot.domain_id] += 1
        domain_right[slot.domain_id] += int(right)

    right = sum(domain_right.values())
    total = sum(domain_total.values())
    return AttemptGrade(
        right=right,
        total=total,
        score=score_percent(right=right, total=total),
        passed=is_passed(right=right, total=total, passing_score=passing_score),
        domains={
            domain_id: DomainResult(
                domain_id=domain_id,
                right=domain_right[domain_id],
                total=domain_total[domain_id],
            )
            for domain_id in sorted(domain_total)
        },
        item_results=tuple(item_results),
    )


@dataclass(frozen=True)
class ConfirmedErratum:
    """What grading needs of one confirmed erratum on a question."""

    policy: Policy
    published: frozenset[int]
    decided_at: datetime


def key_for(*, correct: Iterable[int], errata: Sequence[ConfirmedErratum], finished_at: datetime | None) -> ItemKey:
    """The key one attempt is graded against: the question's confirmed errata folded in order.

    The current key is always accepted. Each credit-either erratum also accepts the key it
    corrected (its published key) for attempts finished before it was confirmed: only those
    were ever graded by it, and taking that credit away would punish our mistake. A void
    removes the item. So a later erratum never withdraws what an earlier one accepted, and
    only a void (or a credit-corrected erratum, for its own published key) lowers a score.
    """
    corrected = frozenset(correct)
    if any(erratum.policy == Policy.VOID for erratum in errata):
        return ItemKey(correct=corrected, void=True)
    accepted = frozenset(
        erratum.published
        for erratum in errata
        if erratum.policy == Policy.CREDIT_EITHER
        and erratum.published
        and erratum.published != corrected
        and finished_at is not None
        and finished_at < erratum.decided_at
    )
    return ItemKey(correct=corrected, also_accepted=accepted)
