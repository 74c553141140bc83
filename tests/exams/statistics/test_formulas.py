"""Tests for item statistics: facility, discrimination, point-biserial and mis-key flags."""

import dataclasses
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.statistics.formulas import ItemObservation, ItemStatistics, MiskeyTier, item_statistics, miskey_tier

CHOICES = [1, 2, 3, 4]
KEY = frozenset({1})


def observe(attempt_id: int, attempt_right: int, right: bool, *selected: int) -> ItemObservation:
    return ItemObservation(
        attempt_id=attempt_id, attempt_right=attempt_right, right=right, selected=frozenset(selected)
    )


# --- hand-computed example ----------------------------------------------------------

TEN_ATTEMPTS = [
    observe(1, 9, True, 1),
    observe(2, 8, True, 1),
    observe(3, 8, False, 2),
    observe(4, 7, True, 1),
    observe(5, 6, False, 3),
    observe(6, 5, True, 1),
    observe(7, 5, False, 2),
    observe(8, 4, False),  # unanswered: wrong, no choice counted
    observe(9, 3, False, 2),
    observe(10, 2, False, 4),
]


def test_hand_example() -> None:
    # g = ceil(2.7) = 3; upper = attempts 1, 2, 3 (2 right); lower = 8, 9, 10 (none right).
    # Rest-scores 8,7,8,6,6,4,5,4,3,2 against 1,1,0,1,0,1,0,0,0,0:
    # r = (10·25 − 4·53) / √((10·4 − 4²)(10·319 − 53²)) = 38 / √(24·381) ≈ 0.397389.
    result = item_statistics(observations=TEN_ATTEMPTS, key=KEY, all_choices=CHOICES)
    assert result == ItemStatistics(
        n=10,
        facility=0.4,
        group_size=3,
        discrimination=pytest.approx(2 / 3),
        point_biserial=pytest.approx(38 / math.sqrt(24 * 381)),
        choice_counts={1: 4, 2: 3, 3: 1, 4: 1},
        upper_counts={1: 2, 2: 1, 3: 0, 4: 0},
        lower_counts={1: 0, 2: 1, 3: 0, 4: 1},
        miskey=None,  # n < 30
    )
    assert result.point_biserial == pytest.approx(0.397389, abs=1e-6)


def test_result_does_not_depend_on_observation_order() -> None:
    forward = item_statistics(observations=TEN_ATTEMPTS, key=KEY, all_choices=CHOICES)
    backward = item_statistics(observations=TEN_ATTEMPTS[::-1], key=KEY, all_choices=CHOICES)
    assert forward == backward


def test_score_ties_at_the_group_edge_go_by_attempt_id() -> None:
    # Four attempts score 8; g = 2 for n = 5. Upper: attempts 2 and 3; lower: 5 and 9.
    observations = [
        observe(9, 1, False, 4),
        observe(5, 8, True, 1),
        observe(3, 8, False, 3),
        observe(7, 8, True, 1),
        observe(2, 8, False, 2),
    ]
    result = item_statistics(observations=observations, key=KEY, all_choices=CHOICES)
    assert result.group_size == 2
    assert result.upper_counts == {1: 0, 2: 1, 3: 1, 4: 0}
    assert result.lower_counts == {1: 1, 2: 0, 3: 0, 4: 1}
    assert result.discrimination == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("n", "group_size"),
    # 0.27 · 100 is 27.000000000000004 in floats; the group must still be 27.
    [(1, 1), (2, 1), (3, 1), (4, 2), (10, 3), (37, 10), (100, 27), (200, 54), (300, 81)],
)
def test_group_size_is_ceil_of_27_percent(n: int, group_size: int) -> None:
    observations = [observe(i, i % 7, False) for i in range(n)]
    assert item_statistics(observations=observations, key=KEY, all_choices=CHOICES).group_size == group_size


def test_no_observations() -> None:
    assert item_statistics(observations=[], key=KEY, all_choices=CHOICES) == ItemStatistics(
        n=0,
        facility=None,
        group_size=0,
        discrimination=None,
        point_biserial=None,
        choice_counts={1: 0, 2: 0, 3: 0, 4: 0},
        upper_counts={1: 0, 2: 0, 3: 0, 4: 0},
        lower_counts={1: 0, 2: 0, 3: 0, 4: 0},
        miskey=None,
    )


def test_single_observation_is_both_groups() -> None:
    result = item_statistics(observations=[observe(1, 5, True, 1)], key=KEY, all_choices=CHOICES)
    assert (result.facility, result.group_size, result.discrimination) == (1.0, 1, 0.0)
    assert result.point_biserial is None


@pytest.mark.parametrize(
    "observations",
    [
        [observe(1, 5, True, 1), observe(2, 3, True, 1)],  # everyone right
        [observe(1, 5, True, 1), observe(2, 4, False, 2)],  # equal rest-scores (4 and 4)
    ],
)
def test_point_biserial_undefined_without_variance(observations: list[ItemObservation]) -> None:
    assert item_statistics(observations=observations, key=KEY, all_choices=CHOICES).point_biserial is None


def test_choice_outside_all_choices_is_still_counted() -> None:
    result = item_statistics(observations=[observe(1, 5, False, 9)], key=KEY, all_choices=CHOICES)
    assert result.choice_counts == {1: 0, 2: 0, 3: 0, 4: 0, 9: 1}


def test_refuses_duplicate_attempts_and_empty_key() -> None:
    with pytest.raises(ValueError):
        item_statistics(observations=[observe(1, 5, True, 1)] * 2, key=KEY, all_choices=CHOICES)
    with pytest.raises(ValueError):
        item_statistics(observations=[], key=frozenset(), all_choices=CHOICES)


# --- likely mis-keyed: hand-built cases ---------------------------------------------


def test_negative_discrimination_is_flagged_from_30_attempts() -> None:
    # The strongest third leave the item blank (wrong); the weakest answer the key.
    def attempts(n: int) -> list[ItemObservation]:
        return [
            observe(i, 100 - i, False) if i < n // 2 else observe(i, 100 - i, True, 1)
            for i in range(n)
        ]

    flagged = item_statistics(observations=attempts(30), key=KEY, all_choices=CHOICES)
    assert flagged.discrimination is not None and flagged.discrimination < 0
    assert flagged.upper_counts[1] == 0 and flagged.upper_counts[2] == 0
    assert flagged.likely_miskeyed
    assert not item_statistics(observations=attempts(29), key=KEY, all_choices=CHOICES).likely_miskeyed


def test_distractor_beating_the_least_chosen_key_choice_is_flagged() -> None:
    # Key {1, 2}; n = 30, g = 9. Upper: 3 pick the key, 6 pick {1, 3}; lower: all wrong.
    # D = 3/9 > 0, but distractor 3 (6) beats key choice 2 (3) in the upper group.
    key = frozenset({1, 2})
    observations = [observe(i, 50 - i, True, 1, 2) for i in range(3)]
    observations += [observe(i, 50 - i, False, 1, 3) for i in range(3, 9)]
    observations += [observe(i, 20 - i % 10, False, 4) for i in range(9, 30)]
    result = item_statistics(observations=observations, key=key, all_choices=CHOICES)
    assert result.group_size == 9
    assert result.upper_counts == {1: 9, 2: 3, 3: 6, 4: 0}
    assert result.discrimination == pytest.approx(3 / 9)
    assert result.likely_miskeyed


def tiered(n: int, upper: dict[int, int], lower: dict[int, int], key=KEY) -> str | None:
    counts = {c: upper.get(c, 0) + lower.get(c, 0) + 1 for c in CHOICES}
    right = lambda group: sum(v for c, v in group.items() if c in key) if len(key) == 1 else min(group.get(c, 0) for c in key)  # noqa: E731
    return miskey_tier(
        n=n, upper_counts=upper, lower_counts=lower, choice_counts=counts, key=key,
        upper_right=right(upper), lower_right=right(lower),
    )


def test_a_hard_item_with_a_tempting_distractor_is_not_flagged() -> None:
    # n = 200, groups of 54. Distractor 2 leads in the upper group (20 against the key's
    # 14) but leads in the lower group too (30): its gap is −10, the key's +10.
    # The old rule ("a distractor beats the key in the upper group") flagged this one.
    assert tiered(200, upper={1: 14, 2: 20, 3: 10, 4: 10}, lower={1: 4, 2: 30, 3: 10, 4: 10}) is None


def test_tiers_by_hand() -> None:
    # Distractor 2's gap (+6) beats the key's (+2), D > 0: likely.
    assert tiered(60, upper={1: 6, 2: 8, 3: 2}, lower={1: 4, 2: 2, 3: 5, 4: 6}) == MiskeyTier.LIKELY
    # Both hold (distractor 2 gap +6, key gap −2, so D < 0): very likely, even below 100.
    assert tiered(60, upper={1: 2, 2: 8, 3: 3, 4: 4}, lower={1: 4, 2: 2, 3: 5, 4: 6}) == MiskeyTier.VERY_LIKELY
    # D < 0 alone (every distractor's gap ≤ the key's −1): likely.
    assert tiered(60, upper={1: 3, 2: 4, 3: 5, 4: 5}, lower={1: 4, 2: 5, 3: 6, 4: 6}) == MiskeyTier.LIKELY
    # n = 100, groups of 27: a distractor's gap beats the key's by 6 ≥ 0.20·27 = 5.4: very likely.
    assert tiered(100, upper={1: 10, 2: 12, 3: 5}, lower={1: 8, 2: 4, 3: 9, 4: 6}) == MiskeyTier.VERY_LIKELY
    # By 5 < 5.4: likely. At n = 99 the same lead is only likely too.
    assert tiered(100, upper={1: 10, 2: 11, 3: 6}, lower={1: 8, 2: 4, 3: 9, 4: 6}) == MiskeyTier.LIKELY
    assert tiered(99, upper={1: 10, 2: 12, 3: 5}, lower={1: 8, 2: 4, 3: 9, 4: 6}) == MiskeyTier.LIKELY
    # Below 30, nothing.
    assert tiered(29, upper={1: 0, 2: 8}, lower={1: 8, 2: 0}) is None


def test_a_multiple_answer_key_is_as_strong_as_its_least_chosen_choice() -> None:
    key = frozenset({1, 2})
    # Key choice 2 is the least chosen; its gap (+1) is beaten by distractor 3 (+3).
    assert tiered(60, upper={1: 12, 2: 3, 3: 5}, lower={1: 4, 2: 2, 3: 2}, key=key) == MiskeyTier.LIKELY
    assert tiered(60, upper={1: 12, 2: 6, 3: 5}, lower={1: 4, 2: 2, 3: 4}, key=key) is None


def test_a_flag_below_100_attempts_carries_a_caveat() -> None:
    def flagged(n: int) -> ItemStatistics:
        observations = [observe(i, 100 - i, i >= n // 2, 1 if i >= n // 2 else 2) for i in range(n)]
        return item_statistics(observations=observations, key=KEY, all_choices=CHOICES)

    assert flagged(40).miskey == MiskeyTier.VERY_LIKELY and flagged(40).miskey_caveat
    assert flagged(120).miskey == MiskeyTier.VERY_LIKELY and not flagged(120).miskey_caveat


@settings(max_examples=100)
@given(
    upper=st.lists(st.integers(min_value=0, max_value=20), min_size=4, max_size=4),
    lower=st.lists(st.integers(min_value=0, max_value=20), min_size=4, max_size=4),
    n=st.integers(min_value=0, max_value=300),
    order=st.permutations(CHOICES),
)
def test_the_rule_does_not_depend_on_how_choices_are_labelled(upper, lower, n, order) -> None:
    """Relabelling the choices (and the key with them) never changes the tier."""
    relabel = dict(zip(CHOICES, order, strict=True))
    up, low = dict(zip(CHOICES, upper, strict=True)), dict(zip(CHOICES, lower, strict=True))
    counts = {c: up[c] + low[c] for c in CHOICES}
    plain = miskey_tier(n=n, upper_counts=up, lower_counts=low, choice_counts=counts, key=KEY,
                        upper_right=up[1], lower_right=low[1])
    moved = miskey_tier(
        n=n, upper_counts={relabel[c]: v for c, v in up.items()}, lower_counts={relabel[c]: v for c, v in low.items()},
        choice_counts={relabel[c]: v for c, v in counts.items()}, key=frozenset({relabel[1]}),
        upper_right=up[1], lower_right=low[1],
    )
    assert plain == moved
    if n < 30:
        assert plain is None


# --- properties ---------------------------------------------------------------------

observation_lists = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=40),
        st.booleans(),
        st.frozensets(st.sampled_from(CHOICES), max_size=2),
    ),
    max_size=60,
).map(
    lambda rows: [
        ItemObservation(attempt_id=i, attempt_right=rest + right, right=right, selected=selected)
        for i, (rest, right, selected) in enumerate(rows)
    ]
)


@settings(max_examples=200)
@given(observations=observation_lists)
def test_point_biserial_equals_a_direct_pearson_correlation(
    observations: list[ItemObservation],
) -> None:
    result = item_statistics(observations=observations, key=KEY, all_choices=CHOICES)
    xs = [float(o.right) for o in observations]
    rest = [float(o.attempt_right - o.right) for o in observations]
    try:
        expected = statistics.correlation(xs, rest)
    except statistics.StatisticsError:
        assert result.point_biserial is None
    else:
        assert result.point_biserial == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=200)
@given(observations=observation_lists)
def test_counts_and_shares_are_consistent(observations: list[ItemObservation]) -> None:
    result = item_statistics(observations=observations, key=KEY, all_choices=CHOICES)
    n = len(observations)
    assert result.n == n
    assert result.group_size == math.ceil(n * 27 / 100)
    assert set(CHOICES) <= set(result.choice_counts)
    assert sum(result.choice_counts.values()) == sum(len(o.selected) for o in observations)
    assert sum(result.upper_counts.values()) <= sum(result.choice_counts.values())
    if n:
        assert result.facility == sum(o.right for o in observations) / n
        assert result.discrimination is not None and -1.0 <= result.discrimination <= 1.0
    if n < 30:
        assert not result.likely_miskeyed


@st.composite
def cohorts(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """Rest-scores for a strong half and a weak half, at least two points apart."""
    n = draw(st.integers(min_value=30, max_value=80))
    strong = draw(st.lists(st.integers(min_value=22, max_value=59), min_size=n // 2, max_size=n // 2))
    weak = draw(st.lists(st.integers(min_value=0, max_value=20), min_size=n - n // 2, max_size=n - n // 2))
    return strong, weak


@settings(max_examples=100)
@given(cohort=cohorts(), weak_picks=st.data())
def test_planted_miskeyed_item_is_flagged_and_good_item_is_not(
    cohort: tuple[list[int], list[int]], weak_picks: st.DataObject
) -> None:
    strong, weak = cohort
    # The published key is 1, but the strongest learners know the answer is really 2.
    truth, published = 2, 1
    picks = [weak_picks.draw(st.sampled_from(CHOICES)) for _ in weak]

    def build(strong_pick: int) -> list[ItemObservation]:
        rows = [(rest, strong_pick) for rest in strong] + list(zip(weak, picks, strict=True))
        return [
            observe(i, rest + (pick == published), pick == published, pick)
            for i, (rest, pick) in enumerate(rows)
        ]

    miskeyed = item_statistics(
        observations=build(strong_pick=truth), key=frozenset({published}), all_choices=CHOICES
    )
    assert miskeyed.likely_miskeyed

    good = item_statistics(
        observations=build(strong_pick=published), key=frozenset({published}), all_choices=CHOICES
    )
    assert not good.likely_miskeyed
    assert good.discrimination is not None and good.discrimination >= 0


# --- Moodle-level statistics: worked examples -----------------------------------------------

from exams.statistics.formulas import (  # noqa: E402
    ChoiceStatistic,
    choice_statistics,
    discriminative_efficiency,
    item_sd,
    option_discrimination,
    random_guess_score,
    score_statistics,
    too_few_attempts,
    totals_from_observations,
)


def test_kr20_worked_example() -> None:
    """Five candidates, four items in a Guttman pattern (scores 4, 3, 2, 1, 0).

    p = 4/5, 3/5, 2/5, 1/5, so Σpq = (4 + 6 + 6 + 4)/25 = 0.8; σ² = (4+1+0+1+4)/4 = 2.5;
    KR-20 = 4/3·(1 − 0.8/2.5) = 0.906667; SEM = √2.5·√(1 − 0.906667) = 0.483046.
    """
    result = score_statistics(right_counts={4: 1, 3: 1, 2: 1, 1: 1, 0: 1}, question_count=4, sum_pq=0.8)
    assert result.attempts == 5 and result.mean == 2 and result.median == 2
    assert result.sd == pytest.approx(math.sqrt(2.5))
    assert result.skewness == pytest.approx(0.0)
    assert result.kr20 == pytest.approx(0.906667, abs=1e-6)
    assert result.sem == pytest.approx(0.483046, abs=1e-6)


def test_skewness_worked_example() -> None:
    # Scores 0, 0, 0, 3: mean 0.75, s² = 6.75/3 = 2.25, Σd³ = 10.125, G1 = 4·10.125/(3·2·1.5³) = 2.
    result = score_statistics(right_counts={0: 3, 3: 1}, question_count=10, sum_pq=0.5)
    assert result.skewness == pytest.approx(2.0)
    assert result.median == 0
    assert score_statistics(right_counts={}, question_count=10, sum_pq=0).mean is None
    one = score_statistics(right_counts={7: 1}, question_count=10, sum_pq=0)
    assert (one.mean, one.median, one.sd, one.kr20) == (7, 7, None, None)


def test_item_sd_random_guess_and_efficiency_worked_examples() -> None:
    assert item_sd(n=5, right=2) == pytest.approx(statistics.stdev([1, 1, 0, 0, 0]))
    assert item_sd(n=1, right=1) is None
    assert random_guess_score(choices=4, keys=1) == 0.25
    assert random_guess_score(choices=5, keys=2) == pytest.approx(0.1)  # 1 of C(5, 2)
    with pytest.raises(ValueError):
        random_guess_score(choices=3, keys=4)
    # x = 1, 1, 0, 0 with rest-scores 3, 1, 2, 0: Σ(x−x̄)(y−ȳ) = 1.0; paired sorted (3, 2 get
    # the item right) it would be 2.0, so the efficiency is 0.5.
    totals = totals_from_observations([observe(1, 4, True, 1), observe(2, 2, True, 1), observe(3, 2, False, 2), observe(4, 0, False, 3)])
    assert totals.sum_top_y == 5
    assert discriminative_efficiency(totals) == pytest.approx(0.5)


def test_option_discrimination_and_non_functioning_distractors() -> None:
    observations = [observe(i, 10 - i, i < 6, 1 if i < 6 else (2 if i < 9 else 3)) for i in range(10)]
    observations.append(observe(10, 9, False, 4))  # one strong attempt picks distractor 4
    totals = totals_from_observations(observations)
    rows = {row.choice_id: row for row in choice_statistics(totals, key=KEY, all_choices=CHOICES)}
    ys = [o.attempt_right - int(o.right) for o in observations]
    for choice_id in CHOICES:
        picked = [float(choice_id in o.selected) for o in observations]
        assert rows[choice_id].option_discrimination == pytest.approx(statistics.correlation(picked, ys))
    # Eleven attempts are too few for any verdict on a distractor.
    assert rows[4].n == 11 and not any(row.non_functioning for row in rows.values())
    # The same figures from 30 attempts on do give one.
    rows = {choice_id: dataclasses.replace(row, n=30) for choice_id, row in rows.items()}
    assert rows[1].is_key and not rows[1].non_functioning
    assert rows[2].option_discrimination < 0 and not rows[2].non_functioning  # the weak pick it: working
    assert rows[4].option_discrimination > 0 and rows[4].non_functioning  # the strong pick it
    assert rows[4].non_functioning_reason == "the stronger attempts pick it more"
    assert ChoiceStatistic(choice_id=5, is_key=False, picked=2, upper=0, lower=1, share=0.04,
                           option_discrimination=-0.3, n=50).non_functioning_reason == "picked by under 5%"
    assert ChoiceStatistic(choice_id=5, is_key=False, picked=1, upper=0, lower=1, share=0.04,
                           option_discrimination=-0.3, n=29).non_functioning_reason == ""


@pytest.mark.parametrize(("n", "minimum", "caption"), [
    (5, 30, "too few attempts (n = 5)"), (29, 30, "too few attempts (n = 29)"), (30, 30, ""),
    (5, 50, "too few attempts (n = 5)"), (49, 50, "too few attempts (n = 49)"), (50, 50, ""),
])
def test_a_figure_from_too_few_attempts_shows_a_caption_instead(n, minimum, caption) -> None:
    assert too_few_attempts(n, minimum=minimum) == caption
    assert option_discrimination(n=4, picked=0, sum_y_picked=0, sum_y=6, sum_yy=14) is None


@settings(max_examples=100)
@given(observations=observation_lists, order=st.permutations(CHOICES))
def test_statistics_stay_in_bounds_and_ignore_choice_labels(observations, order) -> None:
    totals = totals_from_observations(observations)
    efficiency = discriminative_efficiency(totals)
    if efficiency is not None:
        # At most 1 (the best pairing is the bound); below 0 exactly when the item correlates negatively.
        assert efficiency <= 1.0 + 1e-9
        r = item_statistics(observations=observations, key=KEY, all_choices=CHOICES).point_biserial
        if r is not None and abs(r) > 1e-9:
            assert (efficiency > 0) == (r > 0)
    sd = item_sd(n=totals.n, right=totals.right)
    assert sd is None or sd >= 0
    rows = choice_statistics(totals, key=KEY, all_choices=CHOICES)
    for row in rows:
        assert row.option_discrimination is None or -1 - 1e-9 <= row.option_discrimination <= 1 + 1e-9
        assert row.share is None or 0 <= row.share <= 1
    # Relabel the choices: every per-choice figure moves with its choice, nothing else changes.
    relabel = dict(zip(CHOICES, order, strict=True))
    moved = [
        ItemObservation(attempt_id=o.attempt_id, attempt_right=o.attempt_right, right=o.right,
                        selected=frozenset(relabel[c] for c in o.selected))
        for o in observations
    ]
    moved_totals = totals_from_observations(moved)
    moved_rows = {r.choice_id: r for r in choice_statistics(moved_totals, key=frozenset(relabel[c] for c in KEY),
                                                            all_choices=[relabel[c] for c in CHOICES])}
    for row in rows:
        twin = moved_rows[relabel[row.choice_id]]
        assert (twin.picked, twin.upper, twin.lower, twin.option_discrimination, twin.non_functioning) == (
            row.picked, row.upper, row.lower, row.option_discrimination, row.non_functioning)
    assert discriminative_efficiency(moved_totals) == efficiency


@settings(max_examples=100)
@given(matrix=st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=2, max_size=40))
def test_kr20_matches_a_direct_recount_on_a_fixed_form(matrix) -> None:
    """Everyone holds every item: Σpq is the plain Σ p_i q_i and KR-20 the textbook formula."""
    k, n = 5, len(matrix)
    scores = [sum(row) for row in matrix]
    p = [sum(row[i] for row in matrix) / n for i in range(k)]
    sum_pq = sum(pi * (1 - pi) for pi in p)
    counts: dict[int, int] = {}
    for score in scores:
        counts[score] = counts.get(score, 0) + 1
    result = score_statistics(right_counts=counts, question_count=k, sum_pq=sum_pq)
    assert result.mean == pytest.approx(statistics.mean(scores))
    assert result.median == pytest.approx(statistics.median(scores))
    variance = statistics.variance(scores)
    if variance == 0:
        assert result.kr20 is None
    else:
        assert result.kr20 == pytest.approx(k / (k - 1) * (1 - sum_pq / variance))
        assert result.kr20 <= 1.25 + 1e-9
