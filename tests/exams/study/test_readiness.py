"""Tests for domain mastery and the readiness estimate (the Rasch posterior's standing, next mock and P(pass))."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from exams.room import grading
from exams.statistics import rasch
from exams.study.readiness import (
    MIN_ANSWERED,
    NEXT_MOCK_AHEAD,
    NEXT_SAMPLES,
    SAMPLES,
    DomainBank,
    domain_abilities,
    estimate,
    mastery,
    next_mock_form,
    predictive_range,
)


def point_posterior(abilities: list[float], counted: int = 100) -> rasch.AbilityPosterior:
    """A posterior with (almost) no uncertainty: ability 0 and these domain offsets, no drift."""
    mean = np.array([0.0, 0.0, *abilities])
    return rasch.AbilityPosterior(mean=mean, covariance=np.eye(len(mean)) * 1e-12, counted=counted)


def bank(seats: int, difficulties: list[float], unseen: list[float] | None = None, domain_id: int = 1) -> DomainBank:
    """A domain whose questions have these difficulties; `unseen` the learner's unseen ones (all by default)."""
    reference = np.array(difficulties, dtype=float)
    unseen = list(difficulties) if unseen is None else list(unseen)
    seen = list(difficulties)
    for value in unseen:
        seen.remove(value) if value in seen else None
    return DomainBank(domain_id=domain_id, weight=seats, seats=seats, reference=reference,
                      unseen=np.array(unseen, dtype=float), seen=np.array(seen, dtype=float))


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


def test_each_tail_of_the_predictive_range_is_as_near_its_share_as_whole_counts_allow() -> None:
    pmf = [0.03, 0.02, 0.01, 0.4, 0.5, 0.01, 0.03]
    # Below 2: 0.05, and half of count 2 more (0.055) is past 4.5%; above 4: 0.04, and half of 4 is 0.25.
    assert predictive_range(pmf) == (2, 4)
    # The mid-p rule: a count joins a tail while half its probability fits (0.03 + 0.015 ≤ 0.05), so
    # each tail holds 6% here where "at most 5%" would keep (1, 3) and cover 94%.
    assert predictive_range([0.03, 0.03, 0.88, 0.03, 0.03], tail=0.05) == (2, 2)
    assert predictive_range([0.03, 0.03, 0.88, 0.03, 0.03], tail=0.04) == (1, 3)
    assert predictive_range([1.0]) == (0, 0)
    assert predictive_range([0.0, 0.0, 1.0]) == (2, 2)


# --- estimate: by hand, at a posterior without uncertainty ------------------------------


def test_below_min_answered_there_is_no_estimate() -> None:
    assert MIN_ANSWERED == 20
    assert estimate(posterior=point_posterior([0.0], counted=19), domains=[bank(10, [0.0])]) is None
    assert estimate(posterior=point_posterior([0.0], counted=20), domains=[bank(10, [0.0])]) is not None


def test_a_certain_ability_gives_the_binomial_of_the_reference_chance() -> None:
    # θ = ln 3 on items of difficulty 0: P(right) = 0.75 exactly; 4 seats.
    posterior = point_posterior([np.log(3)])
    got = estimate(posterior=posterior, domains=[bank(4, [0.0, 0.0, 0.0, 0.0])], passing_score=75)
    assert got.standing == pytest.approx(75.0)
    assert got.standing_low == pytest.approx(75.0) and got.standing_high == pytest.approx(75.0)
    binomial = [0.25**4, 4 * 0.75 * 0.25**3, 6 * 0.75**2 * 0.25**2, 4 * 0.75**3 * 0.25, 0.75**4]
    assert got.next_distribution == pytest.approx(binomial)
    # Passing needs 3 of 4.
    assert got.pass_chance == pytest.approx(binomial[3] + binomial[4])
    assert (got.next_low_right, got.next_high_right) == predictive_range(binomial)


def test_two_domains_convolve_and_weigh_by_seats() -> None:
    posterior = point_posterior([np.log(3), -np.log(3)])  # 0.75 and 0.25 on difficulty-0 items
    got = estimate(posterior=posterior, domains=[bank(3, [0.0] * 3), bank(1, [0.0], domain_id=2)])
    assert got.standing == pytest.approx((3 * 75 + 1 * 25) / 4)
    first = [0.25**3, 3 * 0.75 * 0.25**2, 3 * 0.75**2 * 0.25, 0.75**3]
    second = [0.75, 0.25]
    assert got.next_distribution == pytest.approx(np.convolve(first, second))


def test_the_next_mock_takes_unseen_questions_first() -> None:
    # Enough unseen: the seats at evenly spaced quantiles of the unseen alone.
    form = next_mock_form(bank(2, [-2.0, 2.0, 2.0, 4.0], unseen=[2.0, 4.0]))
    assert form == pytest.approx([2.5, 3.5])
    # One unseen for two seats: it, and one seat from the others.
    assert sorted(next_mock_form(bank(2, [-2.0, 0.0, 2.0], unseen=[2.0]))) == pytest.approx([-1.0, 2.0])
    # All seen: the whole domain.
    assert next_mock_form(bank(2, [-2.0, 2.0], unseen=[])) == pytest.approx([-1.0, 1.0])


def test_the_representative_form_matches_simulated_balanced_draws() -> None:
    """The tested approximation: the count on forms drawn from a pool of unequal items, against simulation."""
    rng = np.random.default_rng(3)
    pool = rng.normal(0, 1, 40)
    posterior = point_posterior([0.3])
    got = estimate(posterior=posterior, domains=[bank(15, list(pool))], seed=1)
    counts = np.zeros(16)
    for _ in range(40000):
        form = rng.choice(pool, 15, replace=False)
        if abs(form.mean() - pool.mean()) > 0.05:  # the balanced draw's window
            continue
        counts[(rng.random(15) < expit(0.3 - form)).sum()] += 1
    simulated = counts / counts.sum()
    assert np.abs(np.array(got.next_distribution) - simulated).max() < 0.015
    low, high = predictive_range(simulated)
    assert abs(got.next_low_right - low) <= 1 and abs(got.next_high_right - high) <= 1


def test_uncertainty_widens_the_band_and_the_range() -> None:
    sure = point_posterior([0.5])
    unsure = rasch.AbilityPosterior(mean=sure.mean, covariance=np.diag([0.5, 1e-12, 1e-12]), counted=100)
    domains = [bank(20, list(np.linspace(-1, 1, 30)))]
    a, b = estimate(posterior=sure, domains=domains), estimate(posterior=unsure, domains=domains)
    assert b.standing_high - b.standing_low > a.standing_high - a.standing_low + 10
    assert b.next_high_right - b.next_low_right > a.next_high_right - a.next_low_right


def test_the_next_mock_looks_ahead_along_the_drift() -> None:
    rising = rasch.AbilityPosterior(mean=np.array([0.0, 1.0, 0.0]), covariance=np.eye(3) * 1e-12, counted=100)
    got = estimate(posterior=rising, domains=[bank(10, [0.0])])
    expected = 100 * expit(NEXT_MOCK_AHEAD / rasch.SLOPE_UNIT)
    assert 100 * sum(k * p for k, p in enumerate(got.next_distribution)) / 10 == pytest.approx(expected)
    assert got.standing == pytest.approx(50.0)  # the standing is today's


def test_the_same_inputs_give_the_same_page() -> None:
    posterior = rasch.AbilityPosterior(mean=np.array([0.2, 0.1, 0.0]), covariance=np.eye(3) * 0.2, counted=80)
    domains = [bank(10, [0.0, 1.0])]
    assert estimate(posterior=posterior, domains=domains, seed=5) == estimate(posterior=posterior, domains=domains, seed=5)
    assert SAMPLES >= 1000 and NEXT_SAMPLES >= 250


def test_domain_abilities_are_expected_shares_on_each_domains_reference() -> None:
    posterior = point_posterior([0.0, 1.0])
    got = domain_abilities(posterior=posterior, domains=[bank(5, [0.0]), bank(5, [1.0, -1.0], domain_id=2)])
    assert got == pytest.approx({1: 50.0, 2: 100 * (expit(0.0) + expit(2.0)) / 2})


# --- properties ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    offsets=st.lists(st.floats(-3, 3), min_size=1, max_size=4),
    spread=st.floats(0.0, 2.0),
    passing=st.integers(0, 100),
)
def test_estimate_stays_in_range(offsets, spread, passing) -> None:
    posterior = rasch.AbilityPosterior(
        mean=np.array([0.0, 0.0, *offsets]), covariance=np.eye(len(offsets) + 2) * (spread**2 + 1e-9), counted=50,
    )
    domains = [bank(3, [0.0, 0.5], domain_id=i + 1) for i in range(len(offsets))]
    got = estimate(posterior=posterior, domains=domains, passing_score=passing, seed=1)
    assert 0 <= got.standing_low <= got.standing <= got.standing_high <= 100
    assert 0 <= got.next_low_right <= got.next_high_right <= got.seats
    assert 0 <= got.pass_chance <= 1
    assert sum(got.next_distribution) == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(theta=st.floats(-3, 3), step=st.floats(0.1, 2), passing=st.integers(1, 99))
def test_a_higher_ability_never_lowers_the_prediction(theta, step, passing) -> None:
    domains = [bank(10, [-0.5, 0.5])]
    low, high = (estimate(posterior=point_posterior([t]), domains=domains, passing_score=passing, seed=2)
                 for t in (theta, theta + step))
    assert high.standing >= low.standing and high.pass_chance >= low.pass_chance - 1e-9
    assert grading.is_passed(right=10, total=10, passing_score=passing)
