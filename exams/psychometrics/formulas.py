"""Classical item statistics over finished mock attempts, for spotting weak or mis-keyed items."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

MIN_N_FOR_MISKEY = 30


@dataclass(frozen=True)
class ItemObservation:
    attempt_id: int
    attempt_right: int
    right: bool
    selected: frozenset[int]
    # The attempt's score (percent), which ranks it into the upper and lower groups. When
    # not given, the right count ranks instead: the same order while every attempt has
    # the same total, which a voided item breaks.
    attempt_score: Decimal | None = None

    @property
    def rank_score(self) -> Decimal:
        return self.attempt_score if self.attempt_score is not None else Decimal(self.attempt_right)


@dataclass(frozen=True)
class ItemStatistics:
    n: int
    facility: float | None
    group_size: int
    discrimination: float | None
    point_biserial: float | None
    choice_counts: dict[int, int]
    upper_counts: dict[int, int]
    lower_counts: dict[int, int]
    likely_miskeyed: bool


@dataclass(frozen=True)
class ItemTotals:
    """What the formulas need of one item's observations: counts and sums, no rows.

    `y` is an attempt's rest-score (its right count without this item), so the item is
    not correlated with itself; the upper and lower groups are the ceil(27%) best and
    worst attempts by score, ties going by attempt id. The database computes these
    for a whole bank at once (exams.psychometrics.bank); `totals_from_observations` is the same
    in Python, and the reference the SQL is tested against.
    """

    n: int
    right: int
    upper_right: int
    lower_right: int
    sum_y: int
    sum_yy: int
    sum_xy: int
    choice_counts: dict[int, int]
    upper_counts: dict[int, int]
    lower_counts: dict[int, int]

    @property
    def group_size(self) -> int:
        return group_size(self.n)


def group_size(n: int) -> int:
    # ceil(0.27·n) in integers: 0.27 * 100 is 27.000000000000004 in floats, which
    # would make the groups one attempt too large.
    return (27 * n + 99) // 100


def _choice_counts(*, observations: Sequence[ItemObservation]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for observation in observations:
        for choice_id in observation.selected:
            counts[choice_id] = counts.get(choice_id, 0) + 1
    return counts


def totals_from_observations(observations: Sequence[ItemObservation]) -> ItemTotals:
    if len({o.attempt_id for o in observations}) != len(observations):
        raise ValueError("each attempt may be observed only once per item")
    n = len(observations)
    size = group_size(n)
    ranked = sorted(observations, key=lambda o: (-o.rank_score, o.attempt_id))
    upper = ranked[:size]
    lower = ranked[n - size :]
    xs = [int(o.right) for o in observations]
    ys = [o.attempt_right - x for o, x in zip(observations, xs, strict=True)]
    return ItemTotals(
        n=n,
        right=sum(xs),
        upper_right=sum(o.right for o in upper),
        lower_right=sum(o.right for o in lower),
        sum_y=sum(ys),
        sum_yy=sum(y * y for y in ys),
        sum_xy=sum(x * y for x, y in zip(xs, ys, strict=True)),
        choice_counts=_choice_counts(observations=observations),
        upper_counts=_choice_counts(observations=upper),
        lower_counts=_choice_counts(observations=lower),
    )


def _point_biserial(totals: ItemTotals) -> float | None:
    n = totals.n
    if n < 2:
        return None
    # Sums of integers stay exact; only the final division is floating point. x is 0 or
    # 1, so the sum of x² is the right count.
    sx, sy = totals.right, totals.sum_y
    sxx = n * sx - sx * sx
    syy = n * totals.sum_yy - sy * sy
    sxy = n * totals.sum_xy - sx * sy
    if sxx == 0 or syy == 0:
        return None
    return sxy / (math.sqrt(sxx) * math.sqrt(syy))


def _with_every_choice(counts: dict[int, int], all_choices: Sequence[int]) -> dict[int, int]:
    # A choice missing from all_choices (deleted since) is still counted, because
    # dropping it would hide exactly the answers an instructor needs to see.
    return {choice_id: 0 for choice_id in all_choices} | counts


def item_statistics(
    *,
    observations: Sequence[ItemObservation],
    key: frozenset[int],
    all_choices: Sequence[int],
) -> ItemStatistics:
    """Facility, upper/lower 27% discrimination, point-biserial and choice counts for one item."""
    if not key:
        raise ValueError("an item needs at least one key choice")
    return statistics_from_totals(totals_from_observations(observations), key=key, all_choices=all_choices)


def statistics_from_totals(totals: ItemTotals, *, key: frozenset[int], all_choices: Sequence[int]) -> ItemStatistics:
    if not key:
        raise ValueError("an item needs at least one key choice")
    n, size = totals.n, totals.group_size
    upper_counts = _with_every_choice(totals.upper_counts, all_choices)
    least_chosen_key = min(upper_counts.get(choice_id, 0) for choice_id in key)
    distractor_beats_key = any(
        count > least_chosen_key for choice_id, count in upper_counts.items() if choice_id not in key
    )
    # Compared in integers (same group size on both sides) so D < 0 is exact.
    likely_miskeyed = n >= MIN_N_FOR_MISKEY and (totals.upper_right < totals.lower_right or distractor_beats_key)
    return ItemStatistics(
        n=n,
        facility=totals.right / n if n else None,
        group_size=size,
        discrimination=(totals.upper_right - totals.lower_right) / size if n else None,
        point_biserial=_point_biserial(totals),
        choice_counts=_with_every_choice(totals.choice_counts, all_choices),
        upper_counts=upper_counts,
        lower_counts=_with_every_choice(totals.lower_counts, all_choices),
        likely_miskeyed=likely_miskeyed,
    )
