"""Tests for domain mastery and the readiness estimate."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from exams.readiness import MIN_ANSWERED, DomainEvidence, Readiness, estimate, mastery


def evidence(weight: int, right: int, answered: int) -> DomainEvidence:
    return DomainEvidence(weight=weight, right=right, answered=answered)


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


# --- estimate: hand-computed examples -----------------------------------------------


def test_below_min_answered_there_is_no_estimate() -> None:
    assert MIN_ANSWERED == 20
    assert estimate(domains=[evidence(60, 10, 10), evidence(40, 9, 9)]) is None
    assert estimate(domains=[]) is None
    assert estimate(domains=[evidence(60, 10, 10), evidence(40, 10, 10)]) is not None


def test_single_domain() -> None:
    # Beta(16, 6): m = 16/22; v = 16·6 / (22²·23) = 96/11132; half = 164.5·√v ≈ 15.2762.
    result = estimate(domains=[evidence(100, 15, 20)])
    assert result == Readiness(
        predicted=pytest.approx(72.727273),
        low=pytest.approx(57.451087),
        high=pytest.approx(88.003458),
    )


def test_two_domains_weighted() -> None:
    # A: Beta(10, 2), m = 5/6, v = 20/1872.  B: Beta(3, 9), m = 1/4, v = 27/1872.
    # predicted = 100·(0.6·5/6 + 0.4·1/4) = 60; Σw²v = (0.36·20 + 0.16·27)/1872 = 11.52/1872.
    result = estimate(domains=[evidence(60, 9, 10), evidence(40, 2, 10)])
    half = 164.5 * math.sqrt(11.52 / 1872)
    assert result == Readiness(
        predicted=pytest.approx(60.0), low=pytest.approx(60 - half), high=pytest.approx(60 + half)
    )
    assert half == pytest.approx(12.904442)


def test_unpractised_domain_contributes_its_prior() -> None:
    # A: Beta(21, 1), m = 21/22, v = 21/11132.  B (no answers): m = 1/2, v = 1/12.
    result = estimate(domains=[evidence(50, 20, 20), evidence(50, 0, 0)])
    assert result is not None
    assert result.predicted == pytest.approx(100 * (0.5 * 21 / 22 + 0.5 * 0.5))
    half = 164.5 * math.sqrt(0.25 * 21 / 11132 + 0.25 / 12)
    assert result.low == pytest.approx(result.predicted - half)
    assert result.high == pytest.approx(result.predicted + half)
    assert (result.low, result.high) == (pytest.approx(48.716500), pytest.approx(96.738045))


def test_band_is_clipped_to_0_100() -> None:
    top = estimate(domains=[evidence(100, 1000, 1000)])
    assert top is not None and top.high == 100.0 and top.low < top.predicted < 100.0
    bottom = estimate(domains=[evidence(100, 0, 1000)])
    assert bottom is not None and bottom.low == 0.0 and 0.0 < bottom.predicted < bottom.high


def test_estimate_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        estimate(domains=[evidence(100, 30, 20)])


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


@settings(max_examples=200)
@given(domains=blueprints())
def test_estimate_stays_in_range(domains: list[DomainEvidence]) -> None:
    result = estimate(domains=domains)
    assert result is not None
    assert 0.0 <= result.low <= result.predicted <= result.high <= 100.0


@settings(max_examples=200)
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
    assert after.predicted >= before.predicted
    if domains[i].weight > 0:
        assert after.predicted > before.predicted


@settings(max_examples=200)
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
    assert large.high - large.low <= small.high - small.low
    unclipped = all(0.0 < r.low and r.high < 100.0 for r in (small, large))
    if unclipped:
        assert large.high - large.low < small.high - small.low
