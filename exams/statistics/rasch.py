"""The Rasch (1PL) model: item difficulties for the bank, a learner's ability posterior, true-score equating.

Plain numpy/scipy over arrays, no Django: exams.statistics.calibration feeds the bank's
counted responses to `calibrate`, exams.study.ability feeds one learner's history to
`ability_posterior`, exams.room.equating uses `expected_share`/`equate`. docs/MEASUREMENT.md
states the model and how well it holds on simulated learners (bench/calibration/).

P(right) = 1 / (1 + e^-(θ - b)): θ a learner's ability, b an item's difficulty, in logits.
"""
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

# The author's intended level moves an item's prior mean by this much from its domain's mean.
LEVEL_OFFSET = {"easy": -0.8, "medium": 0.0, "hard": 0.8}
# An item's difficulty spreads this much around its domain-and-level mean (the prior's SD):
# an item answered by few learners stays near where its author and its domain put it.
ITEM_PRIOR_SD = 0.8
# The learners' abilities start from N(0, 1.5²); calibration re-estimates both from the data,
# with the SD kept at least this wide so a small, similar cohort does not pin everyone.
PERSON_PRIOR_SD_FLOOR = 0.5
# Bounds that keep every estimate finite (all-right and all-wrong histories included).
LIMIT = 8.0


@dataclass(frozen=True)
class Calibration:
    """Per item (in the order given): difficulty, its SE and responses counted; the ability population."""

    difficulty: np.ndarray
    se: np.ndarray
    n: np.ndarray
    domain_mean: np.ndarray  # per domain index: the mean difficulty of its medium items
    person_mean: float
    person_sd: float
    iterations: int


def item_prior_mean(domain_mean: np.ndarray, item_domain: np.ndarray, item_level: np.ndarray) -> np.ndarray:
    return domain_mean[item_domain] + item_level


def calibrate(
    *,
    person: np.ndarray,
    item: np.ndarray,
    right: np.ndarray,
    item_domain: np.ndarray,
    item_level: np.ndarray,
    weight: np.ndarray | None = None,
    max_iterations: int = 100,
    tolerance: float = 1e-3,
) -> Calibration:
    """Joint maximum a posteriori estimates of every item's difficulty (and every learner's ability).

    `person`, `item`: integer indexes per response (0…P-1, 0…I-1); `right`: 0/1; `weight`:
    each response's weight (1 when None). `item_domain[i]` is item i's domain index,
    `item_level[i]` its author's level as an offset (LEVEL_OFFSET). Priors: b_i ~
    N(domain mean + level offset, ITEM_PRIOR_SD²), the domain means estimated from the items
    (empirical Bayes), θ_p ~ N(μ, σ²) with μ, σ estimated from the abilities. The scale is
    fixed by the items' mean difficulty being 0. Alternating Newton steps (each item's and
    each learner's are independent given the other side), steps clipped to one logit.
    """
    item_count, domain_count = len(item_domain), int(item_domain.max(initial=-1)) + 1
    person_count = int(person.max(initial=-1)) + 1
    right = right.astype(np.float64)
    w = np.ones_like(right) if weight is None else weight.astype(np.float64)
    n = np.bincount(item, minlength=item_count)
    domain_mean = np.zeros(max(domain_count, 1))
    b = item_prior_mean(domain_mean, item_domain, item_level).astype(np.float64)
    theta = np.zeros(person_count)
    mu, sd = 0.0, 1.5
    item_precision = 1 / ITEM_PRIOR_SD**2
    domain_items = np.bincount(item_domain, minlength=domain_count).astype(np.float64)
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        # Learners, given the items.
        p = expit(theta[person] - b[item])
        gradient = np.bincount(person, w * (right - p), person_count) - (theta - mu) / sd**2
        hessian = np.bincount(person, w * p * (1 - p), person_count) + 1 / sd**2
        theta = np.clip(theta + np.clip(gradient / hessian, -1, 1), -LIMIT, LIMIT)
        # Items, given the learners.
        p = expit(theta[person] - b[item])
        prior = item_prior_mean(domain_mean, item_domain, item_level)
        gradient = np.bincount(item, w * (p - right), item_count) - (b - prior) * item_precision
        hessian = np.bincount(item, w * p * (1 - p), item_count) + item_precision
        step = np.clip(gradient / hessian, -1, 1)
        b = np.clip(b + step, -LIMIT, LIMIT)
        # The hierarchy: each domain's mean from its items; then the scale's origin.
        domain_mean = np.bincount(item_domain, b - item_level, domain_count) / np.maximum(domain_items, 1)
        shift = b.mean() if item_count else 0.0
        b, theta, domain_mean = b - shift, theta - shift, domain_mean - shift
        if person_count:
            mu = float(theta.mean())
            sd = max(PERSON_PRIOR_SD_FLOOR, float(theta.std()))
        if np.abs(step).max(initial=0) < tolerance:
            break
    p = expit(theta[person] - b[item])
    information = np.bincount(item, w * p * (1 - p), item_count) + item_precision
    return Calibration(
        difficulty=b, se=1 / np.sqrt(information), n=n, domain_mean=domain_mean,
        person_mean=mu, person_sd=sd, iterations=iterations,
    )


# --- one learner ---------------------------------------------------------------------------

# A learner's per-domain offsets from their overall ability spread this much (the prior's SD).
DOMAIN_OFFSET_SD = 0.35
# Ability may drift as the learner studies: a slope per SLOPE_UNIT finished attempts (study
# sessions: each is a chance to learn, whatever its length). The slope's prior is the learners'
# population's, learned by the statistics refresh (`drift_population`: empirical Bayes); before
# that (a bank not calibrated, or too few learners with MIN_DRIFT_ATTEMPTS attempts) it is
# N(SLOPE_MEAN, SLOPE_SD²).
SLOPE_MEAN = 0.0
SLOPE_SD = 1.0
SLOPE_UNIT = 10.0
# The population's slope SD is kept at least this wide: a learner whose own history says they
# drift unlike the rest can still show it (0.1 logit per 10 attempts is small beside the ability's SE).
SLOPE_SD_FLOOR = 0.1
# A learner informs the population's drift from this many finished attempts with counted answers…
MIN_DRIFT_ATTEMPTS = 3
# …and the drift is learned from at least this many such learners.
MIN_DRIFT_LEARNERS = 50


@dataclass(frozen=True)
class AbilityPosterior:
    """A Gaussian (Laplace) posterior over [ability at the history's centre, slope per SLOPE_UNIT
    attempts, offset per domain]; `centre` is how far (in SLOPE_UNITs) the centre lies before now."""

    mean: np.ndarray
    covariance: np.ndarray
    counted: int
    centre: float = 0.0

    @property
    def domains(self) -> int:
        return len(self.mean) - 2

    def samples(self, *, count: int, rng: np.random.Generator, ahead: float = 0.0) -> np.ndarray:
        """Draws of each domain's ability `ahead` attempts from now: shape (count, domains)."""
        draws = rng.multivariate_normal(self.mean, self.covariance, size=count, method="cholesky")
        return draws[:, :1] + draws[:, 1:2] * (self.centre + ahead / SLOPE_UNIT) + draws[:, 2:]

    def domain_ability(self, *, ahead: float = 0.0) -> np.ndarray:
        """The posterior mean of each domain's ability."""
        return self.mean[0] + self.mean[1] * (self.centre + ahead / SLOPE_UNIT) + self.mean[2:]


def ability_posterior(
    *,
    difficulty: np.ndarray,
    domain: np.ndarray,
    right: np.ndarray,
    age: np.ndarray,
    domains: int,
    weight: np.ndarray | None = None,
    prior_mean: float = 0.0,
    prior_sd: float = 1.5,
    slope_mean: float = SLOPE_MEAN,
    slope_sd: float = SLOPE_SD,
    iterations: int = 25,
) -> AbilityPosterior:
    """One learner's posterior from their counted answers: per answer the item's difficulty, its
    domain index, right or wrong, and its age (how many finished attempts came after its own).

    The ability at an answer is c + s·(centre − age/SLOPE_UNIT) + δ_domain: `c` the ability at the
    history's centre (prior N(prior_mean, prior_sd²)), `s` its drift per SLOPE_UNIT attempts (prior
    N(slope_mean, slope_sd²): the population's drift, `drift_population`), δ
    the domain's offset (prior N(0, DOMAIN_OFFSET_SD²): a thin domain borrows from the rest).
    Newton's method on the log posterior (concave), the covariance its inverse Hessian.
    Finite for any history, all right and all wrong included, thanks to the priors.
    """
    k = domains + 2
    # Time is centred on the history's weighted mean age: the prior on the ability then holds
    # where the data are, and does not drag the ability *now* (an extrapolation) towards the
    # population's mean, which would flatten the drift of a strong, improving learner.
    w = np.ones(len(right)) if weight is None else weight.astype(np.float64)
    centre = float(np.average(age, weights=w)) / SLOPE_UNIT if len(right) else 0.0
    design = np.zeros((len(right), k))
    design[:, 0] = 1.0
    design[:, 1] = centre - age / SLOPE_UNIT
    design[np.arange(len(right)), 2 + domain] = 1.0
    y = right.astype(np.float64)
    precision = np.diag([1 / prior_sd**2, 1 / slope_sd**2] + [1 / DOMAIN_OFFSET_SD**2] * domains)
    prior = np.zeros(k)
    prior[0], prior[1] = prior_mean, slope_mean
    x = prior.copy()
    hessian = precision
    for _ in range(iterations):
        p = expit(design @ x - difficulty)
        gradient = design.T @ (w * (y - p)) - precision @ (x - prior)
        hessian = (design.T * (w * p * (1 - p))) @ design + precision
        step = np.linalg.solve(hessian, gradient)
        step = np.clip(step, -1, 1)
        x = x + step
        if np.abs(step).max() < 1e-6:
            break
    p = expit(design @ x - difficulty)
    hessian = (design.T * (w * p * (1 - p))) @ design + precision
    return AbilityPosterior(mean=x, covariance=np.linalg.inv(hessian), counted=len(right), centre=centre)


@dataclass(frozen=True)
class DriftPopulation:
    """The learners' drift per SLOPE_UNIT attempts: its population mean and SD, and from how many learners."""

    mean: float
    sd: float
    learners: int


# Each learner's slope is first fitted under this wide prior, which `learner_slopes` then takes
# back out (a Gaussian's precision is additive), leaving the likelihood's own estimate and variance.
_FIT_SLOPE_SD = 5.0


def learner_slopes(
    *,
    person: np.ndarray,
    difficulty: np.ndarray,
    right: np.ndarray,
    attempt: np.ndarray,
    ability_mean: float,
    ability_sd: float,
    iterations: int = 30,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per learner (0…P-1): their drift's estimate and its variance from their own answers, given the
    items' difficulties, and how many distinct attempts those answers came from.

    Per response: `person` index, the item's `difficulty`, `right` 0/1 and `attempt`, the
    response's attempt's rank among the learner's finished attempts (any increasing number per
    attempt). Each learner's model is ability c + s·(t − t̄)/SLOPE_UNIT, c ~ N(ability_mean,
    ability_sd²): Newton steps for every learner at once (2×2 each), then the slope's marginal
    with the fitting prior removed: a Gaussian approximation of the likelihood of s, its mean
    and variance (inf where the answers say nothing of s, e.g. one attempt).
    """
    count = int(person.max(initial=-1)) + 1
    y = right.astype(np.float64)
    per = np.maximum(np.bincount(person, minlength=count), 1)
    t_mean = np.bincount(person, attempt.astype(np.float64), count) / per
    t = (attempt - t_mean[person]) / SLOPE_UNIT
    pairs = np.unique(np.stack([person, attempt]), axis=1) if len(person) else np.zeros((2, 0), np.int64)
    attempts = np.bincount(pairs[0], minlength=count)
    c = np.full(count, float(ability_mean))
    s = np.zeros(count)
    pc, ps = 1 / ability_sd**2, 1 / _FIT_SLOPE_SD**2
    for _ in range(iterations):
        p = expit(c[person] + s[person] * t - difficulty)
        q = p * (1 - p)
        g_c = np.bincount(person, y - p, count) - (c - ability_mean) * pc
        g_s = np.bincount(person, (y - p) * t, count) - s * ps
        h_cc = np.bincount(person, q, count) + pc
        h_cs = np.bincount(person, q * t, count)
        h_ss = np.bincount(person, q * t * t, count) + ps
        det = h_cc * h_ss - h_cs**2
        d_c = np.clip((h_ss * g_c - h_cs * g_s) / det, -1, 1)
        d_s = np.clip((h_cc * g_s - h_cs * g_c) / det, -1, 1)
        c, s = np.clip(c + d_c, -LIMIT, LIMIT), np.clip(s + d_s, -LIMIT, LIMIT)
        if max(np.abs(d_c).max(initial=0), np.abs(d_s).max(initial=0)) < 1e-6:
            break
    p = expit(c[person] + s[person] * t - difficulty)
    q = p * (1 - p)
    h_cc = np.bincount(person, q, count) + pc
    h_cs = np.bincount(person, q * t, count)
    h_ss = np.bincount(person, q * t * t, count) + ps
    # The slope's marginal posterior: variance (H⁻¹)_ss = h_cc / det, mean s; take out the fitting prior.
    marginal_precision = (h_cc * h_ss - h_cs**2) / h_cc
    precision = marginal_precision - ps
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(precision > 1e-9, s * marginal_precision / precision, 0.0)
        variance = np.where(precision > 1e-9, 1 / precision, np.inf)
    return estimate, variance, attempts


def drift_population(
    *, estimate: np.ndarray, variance: np.ndarray, attempts: np.ndarray, iterations: int = 200,
) -> DriftPopulation | None:
    """The population's drift mean and SD by maximum marginal likelihood, each learner's slope
    estimate being N(true slope, its variance) and the true slopes N(mean, sd²) (a random-effects
    meta-analysis), over the learners with MIN_DRIFT_ATTEMPTS attempts or more (`learner_slopes`).
    None below MIN_DRIFT_LEARNERS of them: too few to learn from.
    """
    keep = np.isfinite(variance) & (variance > 0) & (attempts >= MIN_DRIFT_ATTEMPTS)
    x, v = estimate[keep], variance[keep]
    if len(x) < MIN_DRIFT_LEARNERS:
        return None
    tau2 = max(float(x.var() - np.median(v)), 0.0)
    mean = float(np.average(x, weights=1 / (v + tau2)))
    for _ in range(iterations):
        w = 1 / (v + tau2)
        mean = float(np.sum(w * x) / np.sum(w))
        # The likelihood's fixed point for τ²: Σ w²((x − m)² − v) / Σ w².
        updated = max(float(np.sum(w**2 * ((x - mean) ** 2 - v)) / np.sum(w**2)), 0.0)
        if abs(updated - tau2) < 1e-8:
            tau2 = updated
            break
        tau2 = updated
    return DriftPopulation(mean=mean, sd=float(np.sqrt(tau2)), learners=int(len(x)))


# --- scores on a form ---------------------------------------------------------------------


def expected_share(theta: float | np.ndarray, difficulty: np.ndarray) -> np.ndarray:
    """The expected share right on items of these difficulties at ability θ (broadcast over θ)."""
    theta = np.asarray(theta, dtype=np.float64)
    return expit(theta[..., None] - difficulty).mean(axis=-1)


def ability_for_score(right: float, difficulty: np.ndarray) -> float:
    """The θ whose expected right count on these items is `right` (0 < right < len), by Newton on a monotone sum."""
    theta = 0.0
    for _ in range(60):
        p = expit(theta - difficulty)
        step = (right - p.sum()) / max(float((p * (1 - p)).sum()), 1e-9)
        theta = float(np.clip(theta + np.clip(step, -2, 2), -LIMIT, LIMIT))
        if abs(step) < 1e-9:
            break
    return theta


def equate(*, right: int, form: np.ndarray, reference: np.ndarray) -> float:
    """IRT true-score equating: the percent the reference form's expected score gives at the ability
    whose expected score on `form` is `right`. 0 and all-right map to 0% and 100%."""
    if right <= 0:
        return 0.0
    if right >= len(form):
        return 100.0
    return float(100 * expected_share(ability_for_score(right, form), reference))
