"""Classical item statistics over finished mock attempts, for spotting weak or mis-keyed items."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

MIN_N_FOR_MISKEY = 30
# Below these many attempts a figure is noise, and the pages show "too few attempts (n = 5)"
# in its place: an item's figures (facility, discrimination, shares) and a distractor's
# "not functioning" verdict below 30, the test's reliability (KR-20, SEM) below 50.
MIN_N_FOR_ITEM_FIGURES = 30
MIN_N_FOR_DISTRACTOR_VERDICT = 30
MIN_N_FOR_TEST_FIGURES = 50
# From this n a flag may be "very likely" on the size of the gap alone, and no caveat is shown.
MIN_N_FOR_CONFIDENT_MISKEY = 100
# How far (as a share of the group size) a distractor's upper−lower gap must beat the key's.
CLEAR_GAP = 0.20


class MiskeyTier:
    VERY_LIKELY = "very likely"
    LIKELY = "likely"


def miskey_tier(
    *, n: int, upper_counts: dict[int, int], lower_counts: dict[int, int], choice_counts: dict[int, int],
    key: frozenset[int], upper_right: int, lower_right: int,
) -> str | None:
    """The mis-key rule (docs/MEASUREMENT.md): None, "likely" or "very likely".

    A real key discriminates: more of the upper 27% pick it than of the lower. Flag when
    some distractor's upper−lower gap is larger than the key's (for a multiple-answer
    item, the key's least-chosen choice), or D < 0, at n ≥ 30. "Very likely" when both
    hold, or at n ≥ 100 when a distractor's gap beats the key's by at least 0.20 of the
    group. A hard item with one tempting distractor has that distractor ahead in the
    upper group, but it is ahead in the lower group too, so its gap stays small: the old
    "beats the key in the upper group" rule flagged those.
    """
    if not key:
        raise ValueError("an item needs at least one key choice")
    if n < MIN_N_FOR_MISKEY:
        return None
    size = group_size(n)
    gap = {c: upper_counts.get(c, 0) - lower_counts.get(c, 0) for c in set(upper_counts) | set(lower_counts) | set(key)}
    # The key's weakest link: its least-chosen choice (ties: the smaller gap).
    weakest = min(key, key=lambda c: (choice_counts.get(c, 0), gap[c], c))
    distractor_gaps = [g for c, g in gap.items() if c not in key]
    best_distractor = max(distractor_gaps, default=None)
    distractor_ahead = best_distractor is not None and best_distractor > gap[weakest]
    # Compared in integers (same group size on both sides) so D < 0 is exact.
    negative_d = upper_right < lower_right
    if not (distractor_ahead or negative_d):
        return None
    clear = (
        n >= MIN_N_FOR_CONFIDENT_MISKEY and best_distractor is not None
        and (best_distractor - gap[weakest]) >= CLEAR_GAP * size
    )
    return MiskeyTier.VERY_LIKELY if (distractor_ahead and negative_d) or clear else MiskeyTier.LIKELY


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
    # None, "likely" or "very likely" (miskey_tier).
    miskey: str | None = None

    @property
    def likely_miskeyed(self) -> bool:
        return self.miskey is not None

    @property
    def miskey_caveat(self) -> bool:
        """A flag on fewer than 100 attempts: worth a look, not yet worth acting on alone."""
        return self.miskey is not None and self.n < MIN_N_FOR_CONFIDENT_MISKEY


@dataclass(frozen=True)
class ItemTotals:
    """What the formulas need of one item's observations: counts and sums, no rows.

    `y` is an attempt's rest-score (its right count without this item), so the item is
    not correlated with itself; the upper and lower groups are the ceil(27%) best and
    worst attempts by score, ties going by attempt id. The database computes these
    for a whole bank at once (exams.statistics.totals); `totals_from_observations` is the same
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
    # Σ y over the `right` attempts with the highest rest-scores: the covariance the item
    # would have if exactly the best attempts got it right (discriminative efficiency).
    sum_top_y: int = 0
    # Σ y over the attempts that picked each choice (option point-biserial).
    choice_sum_y: dict[int, int] = field(default_factory=dict)

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
    choice_sum_y: dict[int, int] = {}
    for o, y in zip(observations, ys, strict=True):
        for choice_id in o.selected:
            choice_sum_y[choice_id] = choice_sum_y.get(choice_id, 0) + y
    return ItemTotals(
        sum_top_y=sum(sorted(ys, reverse=True)[: sum(xs)]),
        choice_sum_y=choice_sum_y,
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
    lower_counts = _with_every_choice(totals.lower_counts, all_choices)
    choice_counts = _with_every_choice(totals.choice_counts, all_choices)
    tier = miskey_tier(
        n=n, upper_counts=upper_counts, lower_counts=lower_counts, choice_counts=choice_counts, key=key,
        upper_right=totals.upper_right, lower_right=totals.lower_right,
    )
    return ItemStatistics(
        n=n,
        facility=totals.right / n if n else None,
        group_size=size,
        discrimination=(totals.upper_right - totals.lower_right) / size if n else None,
        point_biserial=_point_biserial(totals),
        choice_counts=choice_counts,
        upper_counts=upper_counts,
        lower_counts=lower_counts,
        miskey=tier,
    )


# --- Moodle's quiz statistics (fractions, not percents) ------------------------------------


def item_sd(*, n: int, right: int) -> float | None:
    """Sample standard deviation (n − 1) of a 0/1 item score."""
    if n < 2:
        return None
    p = right / n
    return math.sqrt(n * p * (1 - p) / (n - 1))


def random_guess_score(*, choices: int, keys: int) -> float:
    """The facility of someone picking at random: 1 of the C(choices, keys) all-or-nothing selections."""
    if not 1 <= keys <= choices:
        raise ValueError(f"need 1 <= keys <= choices, got keys={keys}, choices={choices}")
    return 1 / math.comb(choices, keys)


def discriminative_efficiency(totals: ItemTotals) -> float | None:
    """Cov(x, rest) over the largest covariance the item's facility allows (Moodle's definition).

    The largest comes from pairing the sorted item scores with the sorted rest-scores:
    the `right` best rest-scores get the item right, which gives Σ_top y − right·ȳ.
    """
    n = totals.n
    if n < 2:
        return None
    covariance = n * totals.sum_xy - totals.right * totals.sum_y
    largest = n * totals.sum_top_y - totals.right * totals.sum_y
    if largest <= 0:
        return None
    return covariance / largest


def option_discrimination(*, n: int, picked: int, sum_y_picked: int, sum_y: int, sum_yy: int) -> float | None:
    """Point-biserial of "picked this choice" with the rest-score; a working distractor's is negative."""
    picks_spread = n * picked - picked * picked
    rest_spread = n * sum_yy - sum_y * sum_y
    if picks_spread <= 0 or rest_spread <= 0:
        return None
    return (n * sum_y_picked - picked * sum_y) / (math.sqrt(picks_spread) * math.sqrt(rest_spread))


def too_few_attempts(n: int, *, minimum: int) -> str:
    """What a page shows instead of a figure computed from fewer than `minimum` attempts; "" from `minimum` on."""
    return f"too few attempts (n = {n:,})" if n < minimum else ""


# A distractor picked by fewer than this share does no work.
NON_FUNCTIONING_BELOW = 0.05


@dataclass(frozen=True)
class ChoiceStatistic:
    choice_id: int
    is_key: bool
    picked: int
    upper: int
    lower: int
    share: float | None
    option_discrimination: float | None
    # The attempts holding the item: below MIN_N_FOR_DISTRACTOR_VERDICT no verdict is given.
    n: int

    @property
    def non_functioning(self) -> bool:
        """A distractor almost nobody picks, or one the stronger attempts pick more (n ≥ 30)."""
        return bool(self.non_functioning_reason)

    @property
    def non_functioning_reason(self) -> str:
        if self.is_key or self.share is None or self.n < MIN_N_FOR_DISTRACTOR_VERDICT:
            return ""
        if self.share < NON_FUNCTIONING_BELOW:
            return "picked by under 5%"
        if self.option_discrimination is not None and self.option_discrimination > 0:
            return "the stronger attempts pick it more"
        return ""


def choice_statistics(totals: ItemTotals, *, key: frozenset[int], all_choices: Sequence[int]) -> list[ChoiceStatistic]:
    every = _with_every_choice(totals.choice_counts, all_choices)
    return [
        ChoiceStatistic(
            choice_id=choice_id, is_key=choice_id in key, picked=picked,
            upper=totals.upper_counts.get(choice_id, 0), lower=totals.lower_counts.get(choice_id, 0),
            share=picked / totals.n if totals.n else None, n=totals.n,
            option_discrimination=option_discrimination(
                n=totals.n, picked=picked, sum_y_picked=totals.choice_sum_y.get(choice_id, 0),
                sum_y=totals.sum_y, sum_yy=totals.sum_yy,
            ),
        )
        for choice_id, picked in every.items()
    ]


@dataclass(frozen=True)
class ScoreStatistics:
    attempts: int
    mean: float | None
    median: float | None
    sd: float | None
    skewness: float | None
    kr20: float | None
    sem: float | None


def score_statistics(*, right_counts: dict[int, int], question_count: int, sum_pq: float) -> ScoreStatistics:
    """Mean, median, SD (n − 1), skewness, KR-20 and SEM of the attempts' right counts.

    `right_counts` maps a right count to how many attempts had it. KR-20 =
    k/(k−1)·(1 − Σpq/σ²) with k the exam's question count, Σpq the mean over attempts of
    Σ p_i(1 − p_i) over the items each held, σ² the sample variance of right counts;
    SEM = SD·√(1 − KR-20). Skewness is the adjusted Fisher–Pearson G1 (as Moodle reports).
    """
    if any(count < 0 for count in right_counts.values()):
        raise ValueError("attempt counts must not be negative")
    n = sum(right_counts.values())
    if n == 0:
        return ScoreStatistics(attempts=0, mean=None, median=None, sd=None, skewness=None, kr20=None, sem=None)
    mean = sum(score * count for score, count in right_counts.items()) / n
    ordered = sorted(right_counts.items())

    def nth(index: int) -> int:
        seen = 0
        for score, count in ordered:
            seen += count
            if index < seen:
                return score
        raise IndexError(index)

    median = (nth((n - 1) // 2) + nth(n // 2)) / 2
    if n < 2:
        return ScoreStatistics(attempts=n, mean=mean, median=median, sd=None, skewness=None, kr20=None, sem=None)
    m2 = sum(count * (score - mean) ** 2 for score, count in right_counts.items())
    m3 = sum(count * (score - mean) ** 3 for score, count in right_counts.items())
    variance = m2 / (n - 1)
    sd = math.sqrt(variance)
    skewness = n * m3 / ((n - 1) * (n - 2) * sd**3) if n > 2 and sd > 0 else None
    kr20 = sem = None
    if question_count > 1 and variance > 0:
        kr20 = question_count / (question_count - 1) * (1 - sum_pq / variance)
        sem = sd * math.sqrt(1 - kr20) if kr20 <= 1 else None
    return ScoreStatistics(attempts=n, mean=mean, median=median, sd=sd, skewness=skewness, kr20=kr20, sem=sem)
