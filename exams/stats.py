"""Classical item statistics over finished mock attempts, for spotting weak or mis-keyed items."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_N_FOR_MISKEY = 30


@dataclass(frozen=True)
class ItemObservation:
    attempt_id: int
    attempt_right: int
    right: bool
    selected: frozenset[int]


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


def _choice_counts(
    *, observations: Sequence[ItemObservation], all_choices: Sequence[int]
) -> dict[int, int]:
    counts = {choice_id: 0 for choice_id in all_choices}
    for observation in observations:
        # A choice missing from all_choices (deleted since) is still counted, because
        # dropping it would hide exactly the answers an instructor needs to see.
        for choice_id in observation.selected:
            counts[choice_id] = counts.get(choice_id, 0) + 1
    return counts


def _point_biserial(*, observations: Sequence[ItemObservation]) -> float | None:
    n = len(observations)
    if n < 2:
        return None
    # The rest-score leaves this item out, so the item is not correlated with itself.
    xs = [int(o.right) for o in observations]
    ys = [o.attempt_right - x for o, x in zip(observations, xs, strict=True)]
    # Sums of integers stay exact; only the final division is floating point.
    sx, sy = sum(xs), sum(ys)
    sxx = n * sum(x * x for x in xs) - sx * sx
    syy = n * sum(y * y for y in ys) - sy * sy
    sxy = n * sum(x * y for x, y in zip(xs, ys, strict=True)) - sx * sy
    if sxx == 0 or syy == 0:
        return None
    return sxy / (math.sqrt(sxx) * math.sqrt(syy))


def item_statistics(
    *,
    observations: Sequence[ItemObservation],
    key: frozenset[int],
    all_choices: Sequence[int],
) -> ItemStatistics:
    """Facility, upper/lower 27% discrimination, point-biserial and choice counts for one item."""
    if not key:
        raise ValueError("an item needs at least one key choice")
    if len({o.attempt_id for o in observations}) != len(observations):
        raise ValueError("each attempt may be observed only once per item")

    n = len(observations)
    # ceil(0.27·n) in integers: 0.27 * 100 is 27.000000000000004 in floats, which
    # would make the groups one attempt too large.
    group_size = (27 * n + 99) // 100
    ranked = sorted(observations, key=lambda o: (-o.attempt_right, o.attempt_id))
    upper = ranked[:group_size]
    lower = ranked[n - group_size :]

    right = sum(o.right for o in observations)
    upper_right = sum(o.right for o in upper)
    lower_right = sum(o.right for o in lower)
    facility = right / n if n else None
    discrimination = (upper_right - lower_right) / group_size if n else None

    choice_counts = _choice_counts(observations=observations, all_choices=all_choices)
    upper_counts = _choice_counts(observations=upper, all_choices=all_choices)
    lower_counts = _choice_counts(observations=lower, all_choices=all_choices)

    least_chosen_key = min(upper_counts.get(choice_id, 0) for choice_id in key)
    distractor_beats_key = any(
        count > least_chosen_key
        for choice_id, count in upper_counts.items()
        if choice_id not in key
    )
    # Compared in integers (same group size on both sides) so D < 0 is exact.
    likely_miskeyed = n >= MIN_N_FOR_MISKEY and (
        upper_right < lower_right or distractor_beats_key
    )

    return ItemStatistics(
        n=n,
        facility=facility,
        group_size=group_size,
        discrimination=discrimination,
        point_biserial=_point_biserial(observations=observations),
        choice_counts=choice_counts,
        upper_counts=upper_counts,
        lower_counts=lower_counts,
        likely_miskeyed=likely_miskeyed,
    )
