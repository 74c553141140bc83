"""Rasch-simulated learners taking mocks, practice and drills, estimated by the app's own functions.

A learner has an ability θ and, per domain, an offset δ_d; an item has a true difficulty b
(never shown to the app); the learner gets it right with probability 1/(1 + e^−(θ + δ_d − b)).
Four kinds of learner (issue 24):
- random: a fixed ability, practice and drills at random;
- selective: a fixed ability, practice of what they missed, drills of their weakest domain
  (the app's own choice), and hard questions they bookmarked;
- improving: a random plan, their ability growing GROWTH logits a session, as real candidates' does;
- guessing: random plans, but 4-choice guessing puts a floor of 1/4 under every chance (3PL
  truth, 1PL model), to measure 1PL's blindness to guessing at the low end.
What is drawn, counted and estimated is the app's code: `exams.room.draw` picks the mock,
`exams.room.grading` scores it, `exams.statistics.rasch.calibrate` calibrates the bank from the
simulated first answers (as the statistics refresh does), and `exams.study.ability` /
`exams.study.readiness` estimate; the window is `exams.study.ability`'s (the latest 50 finished
attempts, at most 400 counted answers, re-answers at half weight).
"""
import math
import random
from dataclasses import dataclass, field

import numpy as np

from exams.room import draw, grading
from exams.statistics import calibration, rasch
from exams.study import ability, progress, readiness

NCA_DOMAINS = ((1, 25, 1), (2, 20, 2), (3, 15, 3), (4, 15, 4), (5, 10, 5), (6, 10, 6), (7, 5, 7))
# Questions per domain, shaped like the shipped bank's (docs/BLUEPRINT.md).
POOL_SIZES = (160, 125, 95, 95, 65, 65, 35)
# Share of a mock's slots a learner leaves unanswered: most answer every one.
SKIPS = [0.0, 0.0, 0.0, 0.02, 0.05]
GROWTH = 0.12
KINDS = ("random", "selective", "improving", "guessing")
SESSION = 10


@dataclass(frozen=True)
class Bank:
    domains: tuple[tuple[int, int, int], ...]
    question_count: int
    passing_score: int
    pool: dict[int, list[int]]
    owner: dict[int, int]
    true_b: dict[int, float]
    level: dict[int, str]  # the author's intended level, right about three times in four

    @property
    def quotas(self) -> dict[int, int]:
        return draw.quotas(
            domains=[draw.DomainQuota(domain_id=d, weight=w, order=o) for d, w, o in self.domains],
            total=self.question_count,
        )


def simulated_bank(*, rng: random.Random, spread: float = 1.0) -> Bank:
    pool, owner, true_b, level, next_id = {}, {}, {}, {}, 1
    for (domain_id, _, _), size in zip(NCA_DOMAINS, POOL_SIZES, strict=True):
        shift = rng.gauss(0.0, 0.3)
        pool[domain_id] = list(range(next_id, next_id + size))
        for question_id in pool[domain_id]:
            b = rng.gauss(shift, spread)
            true_b[question_id], owner[question_id] = b, domain_id
            named = "easy" if b < shift - 0.6 else "hard" if b > shift + 0.6 else "medium"
            if rng.random() < 0.25:  # authors misjudge a quarter by one step
                named = {"easy": "medium", "hard": "medium", "medium": rng.choice(["easy", "hard"])}[named]
            level[question_id] = named
        next_id += size
    return Bank(domains=NCA_DOMAINS, question_count=60, passing_score=70, pool=pool, owner=owner, true_b=true_b, level=level)


@dataclass
class Session:
    mode: str
    # (question id, domain id, right, answered) in the order the window stamps them.
    answers: list[tuple[int, int, bool, bool]]


@dataclass
class Learner:
    kind: str
    theta: float
    offsets: dict[int, float]
    skip: float
    sessions: list[Session] = field(default_factory=list)
    seen_in_mocks: set[int] = field(default_factory=set)
    answered: set[int] = field(default_factory=set)
    wrong: list[int] = field(default_factory=list)  # questions answered wrong, oldest first
    bookmarked: list[int] = field(default_factory=list)

    def chance(self, bank: Bank, question_id: int) -> float:
        p = 1 / (1 + math.exp(-(self.theta + self.offsets[bank.owner[question_id]] - bank.true_b[question_id])))
        return 0.25 + 0.75 * p if self.kind == "guessing" else p

    @property
    def counted(self) -> int:
        return sum(1 for s in self.sessions for _, _, _, answered in s.answers if answered or s.mode == "mock")


def new_learner(*, rng: random.Random, bank: Bank, kind: str) -> Learner:
    return Learner(
        kind=kind, theta=rng.gauss(1.0 if kind != "guessing" else 0.0, 1.0),
        offsets={d: rng.gauss(0.0, 0.35) for d, _, _ in bank.domains}, skip=rng.choice(SKIPS),
    )


def take_mock(learner: Learner, bank: Bank, rng: random.Random, *, record: bool = True,
              difficulty: dict[int, float] | None = None) -> tuple[grading.AttemptGrade, list[int]]:
    """A mock as the app draws it: balanced on `difficulty` (the app's calibrated values) when given."""
    drawer = lambda seen: draw.draw(pool=bank.pool, quotas=bank.quotas, seen=seen, rng=rng, difficulty=difficulty)  # noqa: E731
    slots = drawer(learner.seen_in_mocks)
    graded, answers = [], []
    for domain_id, question_id in slots:
        answered = rng.random() >= learner.skip
        right = answered and rng.random() < learner.chance(bank, question_id)
        selected = frozenset({1 if right else 2}) if answered else frozenset()
        graded.append(grading.Slot(domain_id=domain_id, selected=selected, key=grading.ItemKey(correct=frozenset({1}))))
        answers.append((question_id, domain_id, right, answered))
    grade = grading.grade_attempt(slots=graded, passing_score=bank.passing_score)
    if record:
        # Unanswered slots take the mock's finish as their time: after the answered ones.
        learner.sessions.append(Session("mock", [a for a in answers if a[3]] + [a for a in answers if not a[3]]))
        for question_id, _, right, answered in answers:
            learner.seen_in_mocks.add(question_id)
            _remember(learner, bank, question_id, right, answered)
    return grade, [q for _, q in slots]


def _remember(learner: Learner, bank: Bank, question_id: int, right: bool, answered: bool) -> None:
    if answered:
        learner.answered.add(question_id)
    if not right:
        learner.wrong.append(question_id)
        if bank.level[question_id] == "hard" and question_id not in learner.bookmarked:
            learner.bookmarked.append(question_id)


def practise(learner: Learner, bank: Bank, rng: random.Random, questions: list[int], mode: str) -> None:
    answers = []
    for question_id in questions[:SESSION]:
        right = rng.random() < learner.chance(bank, question_id)
        answers.append((question_id, bank.owner[question_id], right, True))
        _remember(learner, bank, question_id, right, True)
    learner.sessions.append(Session(mode, answers))


def fresh_first(learner: Learner, rng: random.Random, ids: list[int]) -> list[int]:
    fresh = [q for q in ids if q not in learner.answered]
    again = [q for q in ids if q in learner.answered]
    rng.shuffle(fresh)
    rng.shuffle(again)
    return fresh + again


def take_step(learner: Learner, bank: Bank, rng: random.Random, reference: "Reference") -> str:
    """One session of the learner's plan."""
    roll = rng.random()
    if roll < 0.4:
        take_mock(learner, bank, rng, difficulty=reference.difficulty)
        mode = "mock"
    elif learner.kind != "selective":
        domain_id = None if roll < 0.7 else rng.choice([d for d, _, _ in bank.domains])
        ids = [q for d, qs in bank.pool.items() if domain_id in (None, d) for q in qs]
        practise(learner, bank, rng, fresh_first(learner, rng, ids), "practice" if domain_id is None else "drill")
        mode = "practice" if domain_id is None else "drill"
    elif roll < 0.7 and learner.wrong:
        # "Practise my mistakes": what they missed, newest first, once each.
        missed = list(dict.fromkeys(reversed(learner.wrong)))
        practise(learner, bank, rng, missed, "practice")
        mode = "missed"
    elif roll < 0.85 and learner.sessions:
        weakest = weakest_domain(learner, bank, reference)
        practise(learner, bank, rng, fresh_first(learner, rng, list(bank.pool[weakest])), "drill")
        mode = "drill"
    else:
        hard = learner.bookmarked[-SESSION:] or [q for q in bank.pool[rng.choice(list(bank.pool))] if bank.level[q] == "hard"]
        practise(learner, bank, rng, list(hard), "practice")
        mode = "bookmarks"
    if learner.kind == "improving":
        learner.theta += GROWTH
    return mode


# --- the app's estimate, from a simulated history -------------------------------------------


@dataclass(frozen=True)
class Reference:
    """What the app knows of the bank: calibrated difficulties and the ability population."""

    difficulty: dict[int, float]
    ability_mean: float
    ability_sd: float
    # The drift prior the app would read (exams.statistics.calibration.drift_prior).
    slope_mean: float = rasch.SLOPE_MEAN
    slope_sd: float = rasch.SLOPE_SD
    drift: rasch.DriftPopulation | None = None

    def bank_reference(self, bank: Bank) -> ability.BankReference:
        return ability.BankReference.of(difficulty=self.difficulty, domain=dict(bank.owner),
                                     ability_mean=self.ability_mean, ability_sd=self.ability_sd, calibrated=True,
                                     slope_mean=self.slope_mean, slope_sd=self.slope_sd)


def window(learner: Learner) -> list[tuple[int, int, bool, int]]:
    """exams.study.ability.counted_window's rows, newest first."""
    rows = []
    for age, session in enumerate(reversed(learner.sessions[-ability.ABILITY_ATTEMPTS:])):
        for question_id, domain_id, right, answered in reversed(session.answers):
            if answered or session.mode == "mock":
                rows.append((question_id, domain_id, right, age))
                if len(rows) == ability.ABILITY_WINDOW:
                    return rows
    return rows


def domain_banks(learner: Learner, bank: Bank, difficulty: dict[int, float]) -> list[readiness.DomainBank]:
    quotas = bank.quotas
    return [
        readiness.DomainBank(
            domain_id=d, weight=w, seats=quotas[d],
            reference=np.array([difficulty[q] for q in bank.pool[d]]),
            unseen=np.array([difficulty[q] for q in bank.pool[d] if q not in learner.seen_in_mocks]),
            seen=np.array([difficulty[q] for q in bank.pool[d] if q in learner.seen_in_mocks]),
        )
        for d, w, _ in bank.domains
    ]


def posterior(learner: Learner, bank: Bank, reference: Reference) -> rasch.AbilityPosterior:
    index = {d: i for i, (d, _, _) in enumerate(bank.domains)}
    return ability.posterior_from(window=window(learner), reference=reference.bank_reference(bank), domain_index=index)


def estimate(learner: Learner, bank: Bank, reference: Reference, seed: int = 0) -> readiness.Readiness | None:
    return readiness.estimate(posterior=posterior(learner, bank, reference),
                              domains=domain_banks(learner, bank, reference.difficulty),
                              passing_score=bank.passing_score, seed=seed)


def weakest_domain(learner: Learner, bank: Bank, reference: Reference) -> int:
    """The app's choice (exams.study.progress.weakest_domain over the per-domain levels)."""
    standings = [progress.DomainStanding(domain_id=d, name=str(d), weight=w, right=0, answered=1, order=o)
                 for d, w, o in bank.domains]
    levels = readiness.domain_abilities(posterior=posterior(learner, bank, reference),
                                        domains=domain_banks(learner, bank, reference.difficulty))
    return progress.weakest_domain(standings, levels).domain_id


def oracle_width(learner: Learner, bank: Bank) -> float:
    """The 90% range (points) of an oracle that knew the ability and the true difficulties."""
    exact = rasch.AbilityPosterior(
        mean=np.array([learner.theta, 0.0, *[learner.offsets[d] for d, _, _ in bank.domains]]),
        covariance=np.eye(len(bank.domains) + 2) * 1e-12, counted=10**6,
    )
    got = readiness.estimate(posterior=exact, domains=domain_banks(learner, bank, bank.true_b),
                             passing_score=bank.passing_score)
    return got.next_high - got.next_low


def ideal_width(learner: Learner, bank: Bank, seed: int = 0) -> float:
    """The 90% range (points) of an ideal predictor: the app's estimate given everything but the
    learner's ability — every item's true difficulty, the true ability population and the true drift
    (0, or GROWTH a session) — so the ability is still estimated from the same counted answers. What
    no estimator of ability from this history can beat; the oracle above also knew the ability."""
    truth = Reference(
        difficulty=dict(bank.true_b), ability_mean=0.0 if learner.kind == "guessing" else 1.0, ability_sd=1.0,
        slope_mean=GROWTH * rasch.SLOPE_UNIT if learner.kind == "improving" else 0.0, slope_sd=0.01,
    )
    got = estimate(learner, bank, truth, seed=seed)
    return got.next_high - got.next_low if got else math.nan


# --- calibrating the bank from a simulated population ----------------------------------------


def calibrate(bank: Bank, population: list[Learner]) -> Reference:
    """The refresh's estimator over the population's first answered responses (exams.statistics.calibration)."""
    items = sorted(bank.owner)
    index = {q: i for i, q in enumerate(items)}
    domains = {d: i for i, (d, _, _) in enumerate(bank.domains)}
    person, item, right, attempt = [], [], [], []
    for p, learner in enumerate(population):
        met = set()
        for number, session in enumerate(learner.sessions):
            for question_id, _, is_right, answered in session.answers:
                if answered and question_id not in met:
                    met.add(question_id)
                    person.append(p)
                    item.append(index[question_id])
                    right.append(is_right)
                    attempt.append(number)
    result = rasch.calibrate(
        person=np.array(person), item=np.array(item), right=np.array(right, dtype=np.int8),
        item_domain=np.array([domains[bank.owner[q]] for q in items]),
        item_level=np.array([rasch.LEVEL_OFFSET[bank.level[q]] for q in items]),
    )
    drift = calibration.drift_of(person=np.array(person), difficulty=result.difficulty[np.array(item)],
                                 right=np.array(right, dtype=np.int8), attempt=np.array(attempt), calibrated=result)
    slope_mean, slope_sd = calibration.drift_prior(calibrated=True, drift_mean=drift and drift.mean, drift_sd=drift and drift.sd)
    return Reference(difficulty={q: float(result.difficulty[index[q]]) for q in items},
                     ability_mean=result.person_mean, ability_sd=result.person_sd,
                     slope_mean=slope_mean, slope_sd=slope_sd, drift=drift)
