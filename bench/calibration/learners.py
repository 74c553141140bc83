"""Rasch-simulated learners taking mocks, practice and drills, scored by the app's own functions.

A learner has an ability θ and, per domain, an offset δ_d; an item has a difficulty b;
the learner gets it right with probability 1/(1 + e^−(θ + δ_d − b)). A mock leaves some
slots unanswered (scored wrong). What is drawn, counted and estimated is the app's code:
`exams.room.draw.quotas` / `draw` pick the mock, `exams.room.grading` scores it, the counting
rule and the 50-per-domain window are those of `exams.study.progress.domain_standings` (the
services check in run.py asserts the database gives the same counts), and the estimate
is `exams.study.readiness.estimate`.
"""
import math
import random
from collections import deque
from dataclasses import dataclass, field

from exams.room import draw, grading
from exams.study import readiness
from exams.study.progress import MASTERY_WINDOW


@dataclass(frozen=True)
class Blueprint:
    """The exam: domains (id, weight, order), the mock's length, the passing score, the bank."""

    domains: tuple[tuple[int, int, int], ...]
    question_count: int
    passing_score: int
    # Question ids per domain and each question's difficulty.
    pool: dict[int, list[int]]
    difficulty: dict[int, float]

    @property
    def quotas(self) -> dict[int, int]:
        return draw.quotas(
            domains=[draw.DomainQuota(domain_id=d, weight=w, order=o) for d, w, o in self.domains],
            total=self.question_count,
        )


# The real exam's blueprint (fixtures/nca-genm.json): 60 questions, 15/12/9/9/6/6/3.
# Share of a mock's slots a learner leaves unanswered: most answer every one.
SKIPS = [0.0, 0.0, 0.0, 0.02, 0.05]
NCA_DOMAINS = ((1, 25, 1), (2, 20, 2), (3, 15, 3), (4, 15, 4), (5, 10, 5), (6, 10, 6), (7, 5, 7))


def simulated_bank(*, rng: random.Random, per_domain: int = 150, domains=NCA_DOMAINS) -> Blueprint:
    pool, difficulty, next_id = {}, {}, 1
    for domain_id, _, _ in domains:
        pool[domain_id] = list(range(next_id, next_id + per_domain))
        for question_id in pool[domain_id]:
            difficulty[question_id] = rng.gauss(0.0, 1.0)
        next_id += per_domain
    return Blueprint(domains=domains, question_count=60, passing_score=70, pool=pool, difficulty=difficulty)


@dataclass
class Learner:
    theta: float
    offsets: dict[int, float]
    skip: float  # share of a mock's slots left unanswered
    seen_in_mocks: set[int] = field(default_factory=set)
    answered: set[int] = field(default_factory=set)
    # Counted responses per domain, newest last, as domain_standings windows them.
    window: dict[int, deque] = field(default_factory=dict)
    mocks: int = 0

    def chance(self, *, domain_id: int, difficulty: float) -> float:
        return 1 / (1 + math.exp(-(self.theta + self.offsets[domain_id] - difficulty)))

    def true_mock_mean(self, bank: Blueprint) -> float:
        """The expected score (percent) of a mock of fresh items: each domain's mean chance times its seats,
        less the slots this learner leaves unanswered."""
        quotas = bank.quotas
        right = sum(
            quotas[d] * sum(self.chance(domain_id=d, difficulty=bank.difficulty[q]) for q in bank.pool[d]) / len(bank.pool[d])
            for d in quotas
        )
        return 100 * (1 - self.skip) * right / sum(quotas.values())


def new_learner(*, rng: random.Random, bank: Blueprint) -> Learner:
    return Learner(
        theta=rng.gauss(1.0, 1.0),
        offsets={d: rng.gauss(0.0, 0.35) for d, _, _ in bank.domains},
        skip=rng.choice(SKIPS),
        window={d: deque(maxlen=MASTERY_WINDOW) for d, _, _ in bank.domains},
    )


def _count(learner: Learner, domain_id: int, right: bool) -> None:
    learner.window[domain_id].append(right)


def take_mock(learner: Learner, bank: Blueprint, rng: random.Random, *, record: bool = True) -> grading.AttemptGrade:
    slots = draw.draw(pool=bank.pool, quotas=bank.quotas, seen=learner.seen_in_mocks, rng=rng)
    graded = []
    for domain_id, question_id in slots:
        answered = rng.random() >= learner.skip
        right = answered and rng.random() < learner.chance(domain_id=domain_id, difficulty=bank.difficulty[question_id])
        # One key choice (1) and one distractor (2): grading decides right or wrong.
        selected = frozenset({1 if right else 2}) if answered else frozenset()
        graded.append(grading.Slot(domain_id=domain_id, selected=selected, key=grading.ItemKey(correct=frozenset({1}))))
    grade = grading.grade_attempt(slots=graded, passing_score=bank.passing_score)
    if record:
        learner.mocks += 1
        for (domain_id, question_id), result in zip(slots, grade.item_results, strict=True):
            learner.seen_in_mocks.add(question_id)
            # A mock's every slot counts, an unanswered one as wrong.
            _count(learner, domain_id, bool(result))
    return grade


def take_session(learner: Learner, bank: Blueprint, rng: random.Random, *, domain_id: int | None, size: int = 10) -> None:
    """Practice (all domains) or a drill (one): unanswered-before questions first, every one answered and checked."""
    ids = [q for d, qs in bank.pool.items() if domain_id in (None, d) for q in qs]
    fresh = [q for q in ids if q not in learner.answered]
    again = [q for q in ids if q in learner.answered]
    rng.shuffle(fresh)
    rng.shuffle(again)
    owner = {q: d for d, qs in bank.pool.items() for q in qs}
    for question_id in (fresh + again)[:size]:
        d = owner[question_id]
        right = rng.random() < learner.chance(domain_id=d, difficulty=bank.difficulty[question_id])
        learner.answered.add(question_id)
        _count(learner, d, right)


def take_step(learner: Learner, bank: Blueprint, rng: random.Random) -> str:
    """One session of a study plan: a mock, a practice of 10, or a drill of 10 in a random domain."""
    roll = rng.random()
    if roll < 0.4:
        take_mock(learner, bank, rng)
        return "mock"
    if roll < 0.7:
        take_session(learner, bank, rng, domain_id=None)
        return "practice"
    take_session(learner, bank, rng, domain_id=rng.choice([d for d, _, _ in bank.domains]))
    return "drill"


def evidence(learner: Learner, bank: Blueprint) -> list[readiness.DomainEvidence]:
    quotas = bank.quotas
    return [
        readiness.DomainEvidence(
            weight=w, right=sum(learner.window[d]), answered=len(learner.window[d]), seats=quotas[d]
        )
        for d, w, _ in bank.domains
    ]


def mastery_counts(learner: Learner) -> dict[int, tuple[int, int]]:
    return {d: (sum(window), len(window)) for d, window in learner.window.items() if window}
