"""Dashboard estimates: mastery per domain, today's standing, and the next mock's range and P(pass).

Mastery is what learners understand: the share right. The other numbers come from the
Rasch model (exams.statistics.rasch), so they account for which questions were answered
(docs/MEASUREMENT.md states the model and how well it holds on simulated learners):
- the learner's ability posterior (exams.study.ability reads the history) gives each
  domain's ability, now and a little ahead;
- *standing*: the expected score on the *reference form* (each domain's seats filled with
  the bank's ready questions of that domain at their average), the posterior mean with a
  90% credible band;
- *next mock*: the 90% predictive range of the next mock's right count: for each posterior
  draw (a step ahead along the learner's drift), the count on a representative form — each
  domain's seats filled as the draw fills them, unseen questions first, at evenly spaced
  quantiles of their difficulties (the balanced draw keeps real forms close to it) — is
  Poisson-binomial; the draws are averaged. P(pass) from the same distribution.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from exams.room import grading
from exams.statistics import rasch

# Below this many counted responses there is no estimate at all.
MIN_ANSWERED = 20
# Below this many the page says the range is rough (docs/MEASUREMENT.md: coverage is
# measured, and held, from here on).
ROUGH_BELOW = 60
# Posterior draws behind the standing's band, and the first NEXT_SAMPLES of them behind the next
# mock's distribution (a mixture of binomials, smooth with fewer draws); seeded per learner and
# history, so a page shows the same figures on every reload.
SAMPLES = 1000
NEXT_SAMPLES = 250
# A pool's difficulties are summarised by this many quantiles for the sums over draws (the mean
# of a smooth function over 32 quantiles is within 0.1 point of the mean over the pool).
POOL_POINTS = 32
# The next mock is the next attempt: a learner whose ability is drifting is predicted where
# they will be, not where they were.
NEXT_MOCK_AHEAD = 1.0
# Each tail of the standing's credible band holds this much probability.
TAIL = 0.05
# Each tail of the next mock's predictive range holds this much, as near as whole counts allow
# (`predictive_range`): half a point inside TAIL, a margin for the model's own small errors, so
# the "90% range" covers 90–91% of next mocks on the harness (docs/MEASUREMENT.md).
RANGE_TAIL = 0.045


@dataclass(frozen=True)
class DomainBank:
    """One domain of the blueprint as the next mock meets it."""

    domain_id: int
    weight: int
    # The domain's seats in a mock (exams.room.draw.quotas).
    seats: int
    # Difficulties (logits) of the domain's ready questions: the reference form's.
    reference: np.ndarray
    # Those of the questions the learner has not met in a mock (the draw's first choice)…
    unseen: np.ndarray
    # …and of those they have (the draw's second).
    seen: np.ndarray


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


def predictive_range(pmf: Sequence[float], *, tail: float = RANGE_TAIL) -> tuple[int, int]:
    """The central range [low, high] whose tails are each as close to `tail` as whole counts allow.

    A count joins a tail while half of its probability still fits within `tail` (the mid-p rule):
    each tail then holds `tail` on average rather than at most, so the range covers 1 − 2·tail of
    the outcomes rather than more (a 60-question mock's counts near the tails weigh ~2% each, so
    "at most 5% a tail" covered 92–96% where 90% is asked; docs/MEASUREMENT.md).
    """
    below, low = 0.0, 0
    while low < len(pmf) - 1 and below + pmf[low] / 2 <= tail:
        below += pmf[low]
        low += 1
    above, high = 0.0, len(pmf) - 1
    while high > low and above + pmf[high] / 2 <= tail:
        above += pmf[high]
        high -= 1
    return low, max(low, high)


def _summary(difficulties: np.ndarray) -> np.ndarray:
    """The pool's difficulties, or POOL_POINTS of its quantiles when it is larger."""
    if len(difficulties) <= POOL_POINTS:
        return difficulties
    return np.quantile(difficulties, (np.arange(POOL_POINTS) + 0.5) / POOL_POINTS)


def next_mock_form(domain: DomainBank) -> np.ndarray:
    """The difficulties of a representative next mock in `domain`: its seats filled as the draw
    fills them (unseen questions first, then seen ones), at evenly spaced quantiles of each."""
    seats, unseen, seen = domain.seats, domain.unseen, domain.seen
    if seats == 0:
        return np.zeros(0)
    spaced = lambda pool, count: np.quantile(pool, (np.arange(count) + 0.5) / count)  # noqa: E731
    if len(unseen) >= seats or not len(seen):
        pool = unseen if len(unseen) else domain.reference
        return spaced(pool, seats) if len(pool) else np.zeros(seats)
    return np.concatenate([unseen, spaced(seen, seats - len(unseen))])


def right_count_pmf(chance: np.ndarray) -> np.ndarray:
    """P(k right), k = 0…n, per row of per-item chances (n columns): the Poisson-binomial, by convolution."""
    pmf = np.ones((chance.shape[0], 1))
    for item in range(chance.shape[1]):
        p = chance[:, item:item + 1]
        pmf = np.concatenate([pmf * (1 - p), np.zeros((pmf.shape[0], 1))], axis=1) + np.concatenate(
            [np.zeros((pmf.shape[0], 1)), pmf * p], axis=1)
    return pmf


def estimate(
    *, posterior: rasch.AbilityPosterior, domains: Sequence[DomainBank], passing_score: int = 0, seed: int = 0,
) -> Readiness | None:
    """Standing, next-mock range and P(pass) from the learner's ability posterior.

    None below MIN_ANSWERED counted answers: there is too little to go on.
    """
    if not any(domain.seats for domain in domains):
        raise ValueError("a mock needs at least one seat")
    if posterior.counted < MIN_ANSWERED:
        return None
    rng = np.random.default_rng(seed)
    seats = sum(domain.seats for domain in domains)
    now = posterior.samples(count=SAMPLES, rng=rng)
    ahead = posterior.samples(count=NEXT_SAMPLES, rng=rng, ahead=NEXT_MOCK_AHEAD)
    standing = np.zeros(SAMPLES)
    chances = []
    for index, domain in enumerate(domains):
        if not domain.seats:
            continue
        reference = _summary(domain.reference) if len(domain.reference) else np.zeros(1)
        standing += domain.seats * rasch.expected_share(now[:, index], reference)
        chances.append(expit(ahead[:, index:index + 1] - next_mock_form(domain)[None, :]))
    distribution = right_count_pmf(np.concatenate(chances, axis=1))
    standing = 100 * standing / seats
    next_mock = distribution.mean(axis=0)
    next_mock /= next_mock.sum()
    low, high = predictive_range(next_mock)
    pass_chance = sum(
        float(p) for right, p in enumerate(next_mock)
        if grading.is_passed(right=right, total=seats, passing_score=passing_score)
    )
    standing_low, standing_high = np.quantile(standing, [TAIL, 1 - TAIL])
    return Readiness(
        counted=posterior.counted,
        standing=_clip(float(standing.mean())),
        standing_low=_clip(float(standing_low)),
        standing_high=_clip(float(standing_high)),
        seats=seats,
        next_low_right=low,
        next_high_right=high,
        pass_chance=min(1.0, max(0.0, pass_chance)),
        next_distribution=tuple(float(p) for p in next_mock),
    )


def domain_abilities(*, posterior: rasch.AbilityPosterior, domains: Sequence[DomainBank]) -> dict[int, float]:
    """Per domain, the expected share right (percent) on its reference questions at the posterior mean:
    the per-domain ability the weakest-domain drill and the cohort flags read."""
    abilities = posterior.domain_ability()
    return {
        domain.domain_id: 100 * float(rasch.expected_share(abilities[index], domain.reference if len(domain.reference) else np.zeros(1)))
        for index, domain in enumerate(domains)
    }
