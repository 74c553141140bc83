"""Dashboard estimates: mastery per domain, today's standing, and the next mock's range and P(pass).

Two numbers, each named for what it is (docs/MEASUREMENT.md states the model and how
well it holds on simulated learners):
- *standing*: the posterior mean of the learner's blueprint-weighted accuracy, with a
  90% credible band — how sure we are of the learner's level today;
- *next mock*: the 90% predictive range of the next mock's score — the band above plus
  the draw of the mock's own questions, whose spread never shrinks with history — and
  the chance that score reaches the passing score.

Each domain d has a Beta posterior over its share right. Its prior is centred on the
learner's overall rate (all domains pooled, itself smoothed by a uniform prior) with the
weight of PRIOR_STRENGTH answers, so a thin domain borrows strength from the others
instead of sitting at 50%. The next mock's right count in d is beta-binomial over the
domain's q_d seats (the draw's largest-remainder quotas), the domains are independent,
and the total is their exact convolution.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from exams.room import grading

# Below this many counted responses there is no estimate at all.
MIN_ANSWERED = 20
# Below this many the page says the range is rough (docs/MEASUREMENT.md: coverage is
# measured, and held, from here on).
ROUGH_BELOW = 60
# Two-sided 90% normal band for the standing.
Z_90 = 1.645
# The prior of a domain counts as this many answers at the learner's overall rate.
PRIOR_STRENGTH = 4.0
# Each counted response weighs this much in a domain's posterior (a power prior): history
# is not quite the next mock (a learner answers practice at leisure, and may leave a mock's
# slots unanswered), and the discount keeps the range honest about that.
EVIDENCE_WEIGHT = 0.75
# Each tail of the predictive range holds at most this much probability.
TAIL = 0.05


@dataclass(frozen=True)
class DomainEvidence:
    weight: int
    right: int
    answered: int
    # The domain's seats in a mock (exams.room.draw.quotas).
    seats: int


@dataclass(frozen=True)
class Readiness:
    counted: int
    # Standing: posterior mean of the weighted accuracy and its 90% credible band (percent).
    standing: float
    standing_low: float
    standing_high: float
    # Next mock: 90% predictive range of its right count out of `seats`, and the chance
    # it passes; `next_distribution[k]` is P(k right).
    seats: int
    next_low_right: int
    next_high_right: int
    pass_chance: float
    next_distribution: tuple[float, ...]

    @property
    def rough(self) -> bool:
        return self.counted < ROUGH_BELOW

    @property
    def next_low(self) -> float:
        return 100 * self.next_low_right / self.seats

    @property
    def next_high(self) -> float:
        return 100 * self.next_high_right / self.seats


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


def posteriors(domains: Sequence[DomainEvidence]) -> list[tuple[float, float]]:
    """Beta(a_d, b_d) per domain: a prior of PRIOR_STRENGTH answers at the overall rate, plus the domain's own."""
    right = sum(d.right for d in domains)
    answered = sum(d.answered for d in domains)
    overall = (1 + right) / (2 + answered)
    return [
        (
            PRIOR_STRENGTH * overall + EVIDENCE_WEIGHT * d.right,
            PRIOR_STRENGTH * (1 - overall) + EVIDENCE_WEIGHT * (d.answered - d.right),
        )
        for d in domains
    ]


def beta_binomial_pmf(*, n: int, a: float, b: float) -> list[float]:
    """P(X = k), k = 0…n, for X ~ BetaBinomial(n, a, b), through log-gamma (exact to rounding)."""
    if n < 0 or a <= 0 or b <= 0:
        raise ValueError(f"need n >= 0, a > 0, b > 0, got n={n}, a={a}, b={b}")
    log_beta_ab = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    pmf = []
    for k in range(n + 1):
        log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        log_beta = math.lgamma(k + a) + math.lgamma(n - k + b) - math.lgamma(n + a + b)
        pmf.append(math.exp(log_choose + log_beta - log_beta_ab))
    total = sum(pmf)
    return [p / total for p in pmf]


def convolve(first: Sequence[float], second: Sequence[float]) -> list[float]:
    """Distribution of the sum of two independent counts, given each one's pmf."""
    out = [0.0] * (len(first) + len(second) - 1)
    for i, p in enumerate(first):
        if p:
            for j, q in enumerate(second):
                out[i + j] += p * q
    return out


def predictive_range(pmf: Sequence[float], *, tail: float = TAIL) -> tuple[int, int]:
    """The narrowest central range [low, high] with at most `tail` below low and at most `tail` above high."""
    below, low = 0.0, 0
    while low < len(pmf) - 1 and below + pmf[low] <= tail:
        below += pmf[low]
        low += 1
    above, high = 0.0, len(pmf) - 1
    while high > 0 and above + pmf[high] <= tail:
        above += pmf[high]
        high -= 1
    return low, max(low, high)


def estimate(*, domains: Sequence[DomainEvidence], passing_score: int = 0) -> Readiness | None:
    """Standing, next-mock range and P(pass) from each domain's counted responses.

    None below MIN_ANSWERED counted responses in total: there is too little to go on.
    """
    for domain in domains:
        _check_counts(right=domain.right, answered=domain.answered)
        if domain.seats < 0:
            raise ValueError(f"seats must not be negative, got {domain.seats}")
    if not any(domain.seats for domain in domains):
        raise ValueError("a mock needs at least one seat")
    counted = sum(domain.answered for domain in domains)
    if counted < MIN_ANSWERED:
        return None

    mean = variance = 0.0
    total_weight = sum(d.weight for d in domains) or 1
    next_mock = [1.0]
    for domain, (a, b) in zip(domains, posteriors(domains), strict=True):
        w = domain.weight / total_weight
        mean += w * a / (a + b)
        variance += w * w * a * b / ((a + b) ** 2 * (a + b + 1))
        if domain.seats:
            next_mock = convolve(next_mock, beta_binomial_pmf(n=domain.seats, a=a, b=b))
    seats = len(next_mock) - 1
    half_band = 100 * Z_90 * math.sqrt(variance)
    low, high = predictive_range(next_mock)
    pass_chance = sum(
        p for right, p in enumerate(next_mock) if grading.is_passed(right=right, total=seats, passing_score=passing_score)
    )
    return Readiness(
        counted=counted,
        standing=_clip(100 * mean),
        standing_low=_clip(100 * mean - half_band),
        standing_high=_clip(100 * mean + half_band),
        seats=seats,
        next_low_right=low,
        next_high_right=high,
        pass_chance=min(1.0, max(0.0, pass_chance)),
        next_distribution=tuple(next_mock),
    )
