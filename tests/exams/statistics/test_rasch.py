"""The Rasch estimators on data generated from known parameters, and the equating by hand."""
import numpy as np
import pytest
from scipy.special import expit

from exams.statistics import rasch


def simulated(*, items=300, learners=1500, per_learner=60, seed=1):
    rng = np.random.default_rng(seed)
    domain = rng.integers(0, 5, items)
    level = rng.choice([-0.8, 0.0, 0.8], items)
    true_b = level + rng.normal(0, 0.6, items) + np.array([0, 0.3, -0.2, 0.1, 0.0])[domain]
    theta = rng.normal(0.8, 1.0, learners)
    person = np.repeat(np.arange(learners), per_learner)
    item = np.concatenate([rng.choice(items, per_learner, replace=False) for _ in range(learners)])
    right = (rng.random(len(person)) < expit(theta[person] - true_b[item])).astype(np.int8)
    return domain, level, true_b - true_b.mean(), theta - true_b.mean(), person, item, right


def test_difficulties_are_recovered_within_their_standard_errors():
    domain, level, true_b, theta, person, item, right = simulated()
    got = rasch.calibrate(person=person, item=item, right=right, item_domain=domain, item_level=level)
    error = got.difficulty - true_b
    assert np.corrcoef(got.difficulty, true_b)[0, 1] > 0.97
    assert np.sqrt((error**2).mean()) < 0.2
    # The stated SEs hold: about 95% of the true values within 1.96 SE (allowing for the prior's shrinkage).
    assert 0.9 <= (np.abs(error / got.se) < 1.96).mean() <= 0.995
    assert got.n.sum() == len(person)
    assert got.person_mean == pytest.approx(theta.mean(), abs=0.15)
    assert abs(got.difficulty.mean()) < 1e-9  # the scale's origin


def test_an_item_nobody_answered_gets_the_prior():
    domain, level, _, _, person, item, right = simulated(items=50, learners=300, per_learner=20)
    domain = np.append(domain, 0)
    level = np.append(level, 0.8)  # a hard item, never answered
    got = rasch.calibrate(person=person, item=item, right=right, item_domain=domain, item_level=level)
    assert got.n[-1] == 0
    assert got.difficulty[-1] == pytest.approx(got.domain_mean[0] + 0.8, abs=0.01)  # within the convergence tolerance
    assert got.se[-1] == pytest.approx(rasch.ITEM_PRIOR_SD)


def test_thin_items_shrink_towards_their_domain_and_level():
    # One learner answered item 0 right: its estimate moves a little below the prior, not to -8.
    got = rasch.calibrate(
        person=np.array([0, 1, 1]), item=np.array([0, 1, 2]), right=np.array([1, 0, 1]),
        item_domain=np.array([0, 0, 0]), item_level=np.array([0.0, 0.0, 0.0]),
    )
    assert np.all(np.isfinite(got.difficulty)) and np.all(np.abs(got.difficulty) < 1.5)


@pytest.mark.parametrize("all_right", [True, False])
def test_all_right_and_all_wrong_histories_are_finite(all_right):
    difficulty = np.linspace(-1, 1, 40)
    posterior = rasch.ability_posterior(
        difficulty=difficulty, domain=np.arange(40) % 3, right=np.full(40, float(all_right)),
        age=np.arange(39, -1, -1, dtype=float), domains=3,
    )
    assert np.all(np.isfinite(posterior.mean)) and np.all(np.isfinite(posterior.covariance))
    assert (posterior.mean[0] > 1.5) if all_right else (posterior.mean[0] < -1.5)
    assert np.sqrt(posterior.covariance[0, 0]) < 1.5


def test_an_empty_history_is_the_prior():
    posterior = rasch.ability_posterior(difficulty=np.zeros(0), domain=np.zeros(0, int), right=np.zeros(0),
                                        age=np.zeros(0), domains=2, prior_mean=0.4, prior_sd=1.1)
    assert posterior.mean == pytest.approx([0.4, 0, 0, 0]) and posterior.centre == 0.0
    assert np.sqrt(np.diag(posterior.covariance)) == pytest.approx([1.1, rasch.SLOPE_SD, rasch.DOMAIN_OFFSET_SD, rasch.DOMAIN_OFFSET_SD])


def test_ability_domain_offsets_and_drift_are_recovered():
    rng = np.random.default_rng(4)
    n = 4000
    difficulty = rng.normal(0, 1, n)
    domain = rng.integers(0, 3, n)
    age = np.arange(n - 1, -1, -1, dtype=float) // 60  # 60 answers an attempt
    offsets = np.array([0.3, -0.3, 0.0])
    slope = 0.5  # per SLOPE_UNIT attempts
    theta = 1.0 - slope * age / rasch.SLOPE_UNIT + offsets[domain]
    right = (rng.random(n) < expit(theta - difficulty)).astype(float)
    posterior = rasch.ability_posterior(difficulty=difficulty, domain=domain, right=right, age=age, domains=3)
    se = np.sqrt(np.diag(posterior.covariance))
    assert abs(posterior.mean[1] - slope) < 3.5 * se[1]
    assert np.abs(posterior.mean[2:] - offsets).max() < 3.5 * se[2:].max()
    assert posterior.domain_ability() == pytest.approx(1.0 + offsets, abs=0.25)  # now, at age 0


def test_practising_hard_questions_does_not_lower_the_ability():
    """The issue's case: the share right falls on harder questions; the ability does not."""
    rng = np.random.default_rng(9)
    estimates = []
    for difficulties in (rng.normal(-1, 0.3, 600), rng.normal(1, 0.3, 600)):
        right = (rng.random(600) < expit(0.5 - difficulties)).astype(float)
        posterior = rasch.ability_posterior(difficulty=difficulties, domain=np.zeros(600, int), right=right,
                                            age=np.arange(599, -1, -1, dtype=float), domains=1)
        estimates.append(posterior.domain_ability()[0])
    assert estimates[0] == pytest.approx(0.5, abs=0.25) and estimates[1] == pytest.approx(0.5, abs=0.25)


# --- the learners' drift (empirical Bayes) -------------------------------------------------


def drifting(*, learners=1500, slope_mean, slope_sd, per_attempt=20, seed=3):
    """Learners of ability N(1, 1) whose ability moves by their own slope ~ N(slope_mean, slope_sd²)
    per SLOPE_UNIT attempts; each takes 1–14 attempts of `per_attempt` items b ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    theta, slope = rng.normal(1.0, 1.0, learners), rng.normal(slope_mean, slope_sd, learners)
    attempts = rng.integers(1, 15, learners)
    person = np.repeat(np.arange(learners), attempts * per_attempt)
    attempt = np.concatenate([np.repeat(np.arange(n), per_attempt) for n in attempts])
    difficulty = rng.normal(0.0, 1.0, len(person))
    ability = theta[person] + slope[person] * attempt / rasch.SLOPE_UNIT
    right = (rng.random(len(person)) < expit(ability - difficulty)).astype(np.int8)
    estimate, variance, counted = rasch.learner_slopes(person=person, difficulty=difficulty, right=right,
                                                       attempt=attempt, ability_mean=1.0, ability_sd=1.0)
    return rasch.drift_population(estimate=estimate, variance=variance, attempts=counted), attempts


@pytest.mark.parametrize(("slope_mean", "slope_sd"), [(1.2, 0.0), (0.5, 0.6), (-0.4, 0.3)])
def test_the_populations_drift_is_recovered(slope_mean, slope_sd):
    """Recovery within 0.1 logit per 10 attempts for the mean and for the SD (about 3 SEs at
    1,500 learners; the Laplace approximation shrinks a steep mean by ~5%)."""
    drift, attempts = drifting(slope_mean=slope_mean, slope_sd=slope_sd)
    assert drift.learners == (attempts >= rasch.MIN_DRIFT_ATTEMPTS).sum()
    assert drift.mean == pytest.approx(slope_mean, abs=0.1)
    assert drift.sd == pytest.approx(slope_sd, abs=0.1)


def test_a_population_that_does_not_drift_gets_an_sd_near_0():
    drift, _ = drifting(slope_mean=0.0, slope_sd=0.0, seed=5)
    assert drift.mean == pytest.approx(0.0, abs=0.05)
    assert drift.sd < 0.1


def test_too_few_learners_with_enough_attempts_learn_no_drift():
    drift, _ = drifting(learners=40, slope_mean=0.5, slope_sd=0.2)
    assert drift is None
    # One attempt says nothing of a slope: its variance is infinite and it is left out.
    estimate, variance, attempts = rasch.learner_slopes(
        person=np.zeros(20, int), difficulty=np.zeros(20), right=np.ones(20), attempt=np.zeros(20, int),
        ability_mean=0.0, ability_sd=1.0,
    )
    assert np.isinf(variance[0]) and attempts[0] == 1 and np.isfinite(estimate[0])
    assert rasch.drift_population(estimate=estimate, variance=variance, attempts=attempts) is None


def test_all_right_and_all_wrong_learners_keep_the_drift_finite():
    rng = np.random.default_rng(2)
    person = np.repeat(np.arange(100), 100)
    attempt = np.tile(np.repeat(np.arange(5), 20), 100)
    right = (rng.random(len(person)) < 0.7).astype(np.int8)
    right[person < 10], right[(person >= 10) & (person < 20)] = 1, 0
    estimate, variance, attempts = rasch.learner_slopes(person=person, difficulty=rng.normal(0, 1, len(person)),
                                                        right=right, attempt=attempt, ability_mean=0.5, ability_sd=1.5)
    assert np.all(np.isfinite(estimate)) and np.all(np.isfinite(variance))
    drift = rasch.drift_population(estimate=estimate, variance=variance, attempts=attempts)
    assert np.isfinite(drift.mean) and np.isfinite(drift.sd)


def test_the_ability_posterior_takes_the_drift_prior():
    posterior = rasch.ability_posterior(difficulty=np.zeros(0), domain=np.zeros(0, int), right=np.zeros(0),
                                        age=np.zeros(0), domains=1, slope_mean=1.2, slope_sd=0.1)
    assert posterior.mean[1] == pytest.approx(1.2) and np.sqrt(posterior.covariance[1, 1]) == pytest.approx(0.1)
    # An improving learner's history under the learned prior: their next step is predicted where they will be.
    rng = np.random.default_rng(8)
    age = np.repeat(np.arange(9, -1, -1), 20).astype(float)
    difficulty = rng.normal(0, 1, len(age))
    right = (rng.random(len(age)) < expit(1.0 - 1.2 * age / rasch.SLOPE_UNIT - difficulty)).astype(float)
    learned = rasch.ability_posterior(difficulty=difficulty, domain=np.zeros(len(age), int), right=right, age=age,
                                      domains=1, slope_mean=1.2, slope_sd=0.1)
    assert learned.mean[1] == pytest.approx(1.2, abs=0.2)


def test_equating_by_hand():
    # A form of difficulty-0 items: raw 5 of 10 is θ = 0; on a reference of difficulty ±ln 3 the
    # expected share at θ = 0 is (0.25 + 0.75) / 2 = 50%.
    assert rasch.equate(right=5, form=np.zeros(10), reference=np.array([np.log(3), -np.log(3)])) == pytest.approx(50.0)
    # A harder form (all at +1): raw 5 of 10 means θ = 1; on an easy reference (all 0) that is 73.1%.
    assert rasch.equate(right=5, form=np.ones(10), reference=np.zeros(4)) == pytest.approx(100 * expit(1.0))
    # The same form as the reference: raw percent back (expected-score identity).
    form = np.linspace(-1, 1, 20)
    for right in (1, 7, 13, 19):
        assert rasch.equate(right=right, form=form, reference=form) == pytest.approx(100 * right / 20, abs=1e-6)
    assert rasch.equate(right=0, form=form, reference=form) == 0.0
    assert rasch.equate(right=20, form=form, reference=form) == 100.0
