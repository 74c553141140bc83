"""Dashboard estimates: mastery per domain and a predicted mock score with its band."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_ANSWERED = 20
# Two-sided 90% normal band.
Z_90 = 1.645


@dataclass(frozen=True)
class DomainEvidence:
    weight: int
    right: int
    answered: int


@dataclass(frozen=True)
class Readiness:
    predicted: float
    low: float
    high: float


def _check_counts(*, right: int, answered: int) -> None:
    if not 0 <= right <= answered:
        raise ValueError(f"need 0 <= right <= answered, got right={right}, answered={answered}")


def mastery(*, right: int, answered: int) -> float | None:
    """Share of answers right, as a percent; None when there is nothing to go on."""
    _check_counts(right=right, answered=answered)
    if answered == 0:
        return None
    return 100 * right / answered


def _clip(value: float) -> float:
    return min(100.0, max(0.0, value))


def estimate(*, domains: Sequence[DomainEvidence]) -> Readiness | None:
    """Predicted score from a Beta(1+k, 1+n-k) posterior per domain, weighted by the blueprint.

    None below MIN_ANSWERED answers in total: the band would be too wide to mean anything.
    """
    for domain in domains:
        _check_counts(right=domain.right, answered=domain.answered)
    if sum(domain.answered for domain in domains) < MIN_ANSWERED:
        return None

    mean = 0.0
    variance = 0.0
    for domain in domains:
        # The uniform prior keeps an unpractised domain at 50% with wide doubt instead
        # of dropping out and flattering the prediction.
        a = 1 + domain.right
        b = 1 + domain.answered - domain.right
        w = domain.weight / 100
        mean += w * a / (a + b)
        variance += w * w * a * b / ((a + b) ** 2 * (a + b + 1))
    predicted = 100 * mean
    half_band = 100 * Z_90 * math.sqrt(variance)
    return Readiness(
        predicted=_clip(predicted),
        low=_clip(predicted - half_band),
        high=_clip(predicted + half_band),
    )
