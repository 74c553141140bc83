"""Tests for domain mastery and the readiness estimate."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from exams.study.readiness import (
    EVIDENCE_WEIGHT,
    MIN_ANSWERED,
    PRIOR_STRENGTH,
    DomainEvidence,
    Readiness,
    beta_binomial_pmf,
    convolve,
    estimate,
    mastery,
    predictive_range,
)


def evidence(weight: int, right: int, answered: int, seats: int | None = None) -> DomainEvidence:
    return DomainEvidence(weight=weight, right=right, answered=answered, seats=max(1, weight // 10) if seats is None else seats)


# --- mastery ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("right", "answered", "expected"),
    [(15, 20, 75.0), (0, 7, 0.0), (7, 7, 100.0), (1, 3, 100 / 3), (0, 0, None)],
)
def test_mastery(right: int, answered: int, expected: float | None) -> None:
    assert mastery(right=right, answered=answered) == expected


def test_mastery_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        mastery(right=3, answered=2)


# --- the pieces: beta-binomial, convolution, the predictive range ----------------------


def test_beta_binomial_by_hand() -> None:
    # BetaBinomial(3, 2, 3): P(k) = C(3,k)·B(k+2, 6−k)/B(2,3), B(2,3) = 1/12:
    # k=0: 12·B(2,6) = 12/42 = 10/35; k=1: 12·3·B(3,5) = 12/35; k=2: 12·3·B(4,4) = 9/35; k=3: 12·B(5,3) = 4/35.
    assert beta_binomial_pmf(n=3, a=2, b=3) == pytest.approx([10 / 35, 12 / 35, 9 / 35, 4 / 35])
    # Beta(1,1) mixing a binomial gives every count the same chance.
    assert beta_binomial_pmf(n=4, a=1, b=1) == pytest.approx([0.2] * 5)
    assert beta_binomial_pmf(n=0, a=2.5, b=0.5) == [1.0]
    with pytest.raises(ValueError):
        beta_binomial_pmf(n=3, a=0, b=1)


def test_convolution_by_hand() -> None:
    assert convolve([0.5, 0.5], [0.5, 0.5]) == pytest.approx([0.25, 0.5, 0.25])
    assert convolve([1.0], [0.2, 0.8]) == [0.2, 0.8]


def test_the_predictive_range_keeps_at_most_5_percent_in_each_tail() -> None:
    pmf = [0.03, 0.02, 0.01, 0.4, 0.5, 0.01, 0.03]
    # Below 3: 0.06 > 0.05, so the range starts at 2 (0.05 below it); above 4: 0.04, at 4 0.54.
    assert predictive_range(pmf) == (2, 4)
    assert predictive_range([1.0]) == (0, 0)
    assert predictive_range([0.0, 0.0, 1.0]) == (2, 2)


# --- estimate: hand-computed examples -----------------------------------------------


def test_below_min_answered_there_is_no_estimate() -> None:
    assert MIN_ANSWERED == 20
    assert estimate(domains=[evidence(60, 10, 10), evidence(40, 9, 9)]) is None
    assert estimate(domains=[evidence(60, 10, 10), evidence(40, 10, 10)]) is not None
    with pytest.raises(ValueError):
        estimate(domains=[])


def test_single_domain_by_hand() -> None:
    # Overall rate (1+15)/(2+20) = 8/11; a = 4·8/11 + 0.75·15, b = 4·3/11 + 0.75·5.
    a, b = 32 / 11 + 11.25, 12 / 11 + 3.75
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    result = estimate(domains=[evidence(100, 15, 20, seats=10)], passing_score=70)
    assert result is not None
    assert (PRIOR_STRENGTH, EVIDENCE_WEIGHT) == (4.0, 0.75)
    assert result.standing == pytest.approx(100 * mean)
    assert result.standing_low == pytest.approx(100 * mean - 164.5 * math.sqrt(var))
    assert result.standing_high == pytest.approx(100 * mean + 164.5 * math.sqrt(var))
    # The next mock: BetaBinomial(10, a, b) through Γ directly (no log-gamma, no normalising).
    gamma = math.gamma
    by_gamma = [
        math.comb(10, k) * gamma(k + a) * gamma(10 - k + b) * gamma(a + b) / (gamma(10 + a + b) * gamma(a) * gamma(b))
        for k in range(11)
    ]
    assert list(result.next_distribution) == pytest.approx(by_gamma)
    assert result.pass_chance == pytest.approx(sum(by_gamma[7:]))
    below = 0.0
    for k, p in enumerate(by_gamma):
        if below + p > 0.05:
            assert result.next_low_right == k
            break
        below += p
    assert result.seats == 10 and result.next_low == 10 * result.next_low_right
    assert result.rough


def test_two_domains_convolve_their_seats() -> None:
    domains = [evidence(60, 30, 40, seats=6), evidence(40, 10, 30, seats=4)]
    result = estimate(domains=domains, passing_score=50)
    assert result is not None and not result.rough and result.counted == 70
    overall = 41 / 72
    (a1, b1), (a2, b2) = (
        (4 * overall + 0.75 * k, 4 * (1 - overall) + 0.75 * (n - k)) for k, n in ((30, 40), (10, 30))
    )
    first, second = beta_binomial_pmf(n=6, a=a1, b=b1), beta_binomial_pmf(n=4, a=a2, b=b2)
    # The total's distribution by an independent double loop.
    total = [sum(first[i] * second[t - i] for i in range(7) if 0 <= t - i <= 4) for t in range(11)]
    assert list(result.next_distribution) == pytest.approx(total)
    assert result.pass_chance == pytest.approx(sum(total[5:]))
    assert result.standing == pytest.approx(100 * (0.6 * a1 / (a1 + b1) + 0.4 * a2 / (a2 + b2)))


def test_an_unpractised_domain_borrows_the_overall_rate() -> None:
    result = estimate(domains=[evidence(50, 20, 20), evidence(50, 0, 0)])
    assert result is not None
    # Overall rate 21/22: the unseen domain's prior sits there, not at 50%.
    a, b = 4 * 21 / 22 + 15, 4 / 22
    assert result.standing == pytest.approx(100 * (0.5 * a / (a + b) + 0.5 * 21 / 22))


def test_band_is_clipped_to_0_100() -> None:
    top = estimate(domains=[evidence(100, 1000, 1000)])
    assert top is not None and top.standing_high == 100.0 and top.standing_low < top.standing < 100.0
    bottom = estimate(domains=[evidence(100, 0, 1000)])
    assert bottom is not None and bottom.standing_low == 0.0 and 0.0 < bottom.standing < bottom.standing_high


# --- estimate: properties -----------------------------------------------------------


@st.composite
def blueprint_weights(draw: st.DrawFn) -> list[int]:
    """Between one and six domain weights summing to 100, as an exam's blueprint does."""
    count = draw(st.integers(min_value=1, max_value=6))
    cuts = sorted(
        draw(st.lists(st.integers(min_value=0, max_value=100), min_size=count - 1, max_size=count - 1))
    )
    return [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]


@st.composite
def blueprints(draw: st.DrawFn) -> list[DomainEvidence]:
    """A blueprint with evidence per domain, at least MIN_ANSWERED answers in total."""
    domains = []
    for weight in draw(blueprint_weights()):
        answered = draw(st.integers(min_value=0, max_value=60))
        right = draw(st.integers(min_value=0, max_value=answered))
        domains.append(evidence(weight, right, answered))
    assume(sum(d.answered for d in domains) >= MIN_ANSWERED)
    return domains


@settings(max_examples=100)
@given(domains=blueprints())
def test_estimate_stays_in_range(domains: list[DomainEvidence]) -> None:
    result = estimate(domains=domains, passing_score=70)
    assert result is not None
    assert 0.0 <= result.standing_low <= result.standing <= result.standing_high <= 100.0
    assert 0 <= result.next_low_right <= result.next_high_right <= result.seats
    assert sum(result.next_distribution) == pytest.approx(1.0)
    assert sum(result.next_distribution[: result.next_low_right]) <= 0.05 + 1e-9
    assert sum(result.next_distribution[result.next_high_right + 1 :]) <= 0.05 + 1e-9
    assert 0.0 <= result.pass_chance <= 1.0


@settings(max_examples=100)
@given(domains=blueprints(), data=st.data())
def test_the_order_of_the_domains_changes_nothing(domains: list[DomainEvidence], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(domains))
    first, second = estimate(domains=domains, passing_score=70), estimate(domains=shuffled, passing_score=70)
    assert first is not None and second is not None
    assert first.standing == pytest.approx(second.standing)
    assert (first.next_low_right, first.next_high_right) == (second.next_low_right, second.next_high_right)
    assert first.pass_chance == pytest.approx(second.pass_chance)


@settings(max_examples=100)
@given(domains=blueprints(), low=st.integers(min_value=0, max_value=99), step=st.integers(min_value=1, max_value=50))
def test_a_higher_passing_score_never_raises_the_chance(domains: list[DomainEvidence], low: int, step: int) -> None:
    easy, hard = estimate(domains=domains, passing_score=low), estimate(domains=domains, passing_score=min(100, low + step))
    assert easy is not None and hard is not None
    assert hard.pass_chance <= easy.pass_chance + 1e-12


@settings(max_examples=100)
@given(domains=blueprints(), data=st.data())
def test_turning_a_wrong_answer_right_never_lowers_the_prediction(
    domains: list[DomainEvidence], data: st.DataObject
) -> None:
    wrong_somewhere = [i for i, d in enumerate(domains) if d.right < d.answered]
    assume(wrong_somewhere)
    i = data.draw(st.sampled_from(wrong_somewhere))
    better = list(domains)
    better[i] = evidence(domains[i].weight, domains[i].right + 1, domains[i].answered)
    before, after = estimate(domains=domains), estimate(domains=better)
    assert before is not None and after is not None
    assert after.standing >= before.standing
    assert after.pass_chance >= before.pass_chance - 1e-12
    if domains[i].weight > 0:
        assert after.standing > before.standing


@settings(max_examples=100)
@given(
    weights=blueprint_weights(),
    data=st.data(),
    scale=st.integers(min_value=1, max_value=30),
    growth=st.integers(min_value=2, max_value=10),
)
def test_at_fixed_accuracy_the_band_narrows_as_answers_grow(
    weights: list[int], data: st.DataObject, scale: int, growth: int
) -> None:
    # Each domain keeps its share right (k/n) while n is multiplied.
    answered = [data.draw(st.integers(min_value=1, max_value=10)) for _ in weights]
    right = [data.draw(st.integers(min_value=0, max_value=n)) for n in answered]

    def at(factor: int) -> Readiness | None:
        return estimate(
            domains=[
                evidence(w, k * factor, n * factor)
                for w, k, n in zip(weights, right, answered, strict=True)
            ]
        )

    small, large = at(scale), at(scale * growth)
    assume(small is not None)
    assert large is not None
    assert large.standing_high - large.standing_low <= small.standing_high - small.standing_low
    unclipped = all(0.0 < r.standing_low and r.standing_high < 100.0 for r in (small, large))
    if unclipped:
        assert large.standing_high - large.standing_low < small.standing_high - small.standing_low
