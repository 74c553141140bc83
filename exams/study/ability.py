"""A learner's ability posterior and what it predicts, read from the database in a fixed number of queries.

Which answers count is mastery's rule (exams.study.progress.MASTERY_COUNTED: a mock's every
slot, an unanswered one as wrong, as the next mock will score it; elsewhere a graded answer;
void slots never; abandoned practice never). The window is bounded so a long history costs
what a short one does: the counted answers of the learner's latest ABILITY_ATTEMPTS finished
attempts, at most ABILITY_WINDOW of them, newest first. Recent answers weigh more through the
model itself: the ability drifts along the history (exams.statistics.rasch.ability_posterior,
a slope per 10 attempts, the clock being study sessions), so old answers inform the ability now
through the drift, not as if they were today's. A re-answer of a question met earlier in the window weighs REANSWER_WEIGHT:
a learner who saw its feedback may remember the key rather than know it.
"""
import hashlib
from dataclasses import dataclass

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count, Max

from exams.models import Attempt, AttemptMode, AttemptStatus, Response
from exams.room import draw
from exams.statistics import calibration, rasch
from exams.study import readiness
from exams.study.progress import MASTERY_COUNTED, MASTERY_STAMP, DomainStanding

ABILITY_ATTEMPTS = 50
ABILITY_WINDOW = 400
REANSWER_WEIGHT = 0.5
DEFAULT_ABILITY_MEAN = calibration.DEFAULT_ABILITY_MEAN
DEFAULT_ABILITY_SD = calibration.DEFAULT_ABILITY_SD


@dataclass(frozen=True, eq=False)
class BankReference:
    """The exam's questions, sorted by id, with their calibrated difficulty (or the prior's mean),
    their domain and whether they are in the ready pool (the reference form's and the draw's)."""

    question_id: np.ndarray
    difficulty: np.ndarray
    domain: np.ndarray
    ready: np.ndarray
    ability_mean: float
    ability_sd: float
    calibrated: bool
    # The prior of the learner's drift (exams.statistics.calibration.drift_prior).
    slope_mean: float = rasch.SLOPE_MEAN
    slope_sd: float = rasch.SLOPE_SD

    @classmethod
    def of(cls, *, difficulty: dict[int, float], domain: dict[int, int], **priors) -> "BankReference":
        """From a difficulty per question and the domain of each ready question (the pool)."""
        ids = np.array(sorted(difficulty), dtype=np.int64)
        return cls(
            question_id=ids, difficulty=np.array([difficulty[q] for q in ids.tolist()], dtype=np.float64),
            domain=np.array([domain.get(q, -1) for q in ids.tolist()], dtype=np.int64),
            ready=np.array([q in domain for q in ids.tolist()], dtype=bool), **priors,
        )

    def difficulty_of(self, question_ids) -> np.ndarray:
        """The difficulties of these questions (0.0 for one the exam does not hold)."""
        wanted = np.asarray(question_ids, dtype=np.int64)
        if not len(self.question_id):
            return np.zeros(len(wanted))
        at = np.minimum(np.searchsorted(self.question_id, wanted), len(self.question_id) - 1)
        return np.where(self.question_id[at] == wanted, self.difficulty[at], 0.0)

    def pool(self, domain_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids and difficulties of the domain's ready questions."""
        mask = self.ready & (self.domain == domain_id)
        return self.question_id[mask], self.difficulty[mask]


def _read_bank_reference(exam) -> BankReference:
    bank = calibration.stored(exam)
    return BankReference.of(
        difficulty=bank.difficulty, domain={pk: d for pk, d in bank.domain.items() if pk in bank.active},
        ability_mean=bank.ability_mean, ability_sd=bank.ability_sd, calibrated=bank.calibrated,
        slope_mean=bank.slope_mean, slope_sd=bank.slope_sd,
    )


def bank_reference(exam) -> BankReference:
    """One query when the bank is as last read (calibration.bank_cached), three when not
    (exams.statistics.calibration.stored); the pool is the active questions."""
    return calibration.bank_cached(exam, "bank-reference", lambda: _read_bank_reference(exam))


def counted_window(*, user, exam) -> list[tuple[int, int, bool, int]]:
    """(question id, domain id, right, age) of the window's counted answers, newest first, the age
    being how many finished attempts came after the answer's own. One query."""
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    sql = f"""
        WITH a AS (
            SELECT id, mode, finished_at, ROW_NUMBER() OVER (ORDER BY finished_at DESC, id DESC) - 1 AS age
            FROM {attempt}
            WHERE user_id = %s AND exam_id = %s AND status IN (%s, %s)
            ORDER BY finished_at DESC, id DESC LIMIT %s
        )
        SELECT r.question_id, r.domain_id, r.is_correct, a.age
        FROM {response} r JOIN a ON a.id = r.attempt_id
        WHERE {MASTERY_COUNTED}
        ORDER BY {MASTERY_STAMP} DESC, r.id DESC
        LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED,
                             ABILITY_ATTEMPTS, ABILITY_WINDOW])
        return [(question_id, domain_id, bool(right), int(age)) for question_id, domain_id, right, age in cursor.fetchall()]


def seen_in_mocks(*, user, exam) -> np.ndarray:
    """The ids of the questions the learner met in a mock: the draw's own rule (exams.room.services).

    The set changes only when a mock is drawn (its slots are all written at the start) or one is
    deleted, so it is cached per learner under the count and newest id of their mocks: one indexed
    query when warm; the scan of every mock answer (35 ms at 1,000 mocks) runs once per new mock.
    Off PostgreSQL nothing is cached, as for the bank reference."""
    if connection.vendor != "postgresql":
        return _read_seen_in_mocks(user=user, exam=exam)
    mocks = Attempt.objects.filter(user=user, exam=exam, mode=AttemptMode.MOCK).aggregate(count=Count("id"), newest=Max("id"))
    key = f"certprep:seen-in-mocks:{user.pk}:{exam.pk}:{mocks['count']}:{mocks['newest']}"
    return calibration.cached(key, lambda: _read_seen_in_mocks(user=user, exam=exam))


def _read_seen_in_mocks(*, user, exam) -> np.ndarray:
    """As one array: at 1,000 mocks they are the whole bank, 10,000 rows through the ORM otherwise."""
    in_mocks = (
        Response.objects.filter(attempt__user=user, attempt__exam=exam, attempt__mode=AttemptMode.MOCK)
        .order_by().values_list("question_id", flat=True).distinct()
    )
    if connection.vendor != "postgresql":
        return np.array(list(in_mocks), dtype=np.int64)
    sql, params = in_mocks.query.sql_with_params()
    with connection.cursor() as cursor:
        # ARRAY(subquery) keeps the DISTINCT a hash (array_agg(DISTINCT) sorts: 45 against 35 ms).
        cursor.execute(f"SELECT ARRAY({sql})", params)
        return np.array(cursor.fetchone()[0], dtype=np.int64)


def posterior_from(*, window: list[tuple[int, int, bool, int]], reference: BankReference, domain_index: dict[int, int]) -> rasch.AbilityPosterior:
    """The ability posterior of a window of counted answers (newest first)."""
    questions, domain, right, weight, age = [], [], [], [], []
    met: set[int] = set()
    # Oldest first, so that a question's first answer in the window weighs fully.
    for question_id, domain_id, is_right, attempts_since in reversed(window):
        questions.append(question_id)
        domain.append(domain_index[domain_id])
        right.append(is_right)
        age.append(attempts_since)
        weight.append(REANSWER_WEIGHT if question_id in met else 1.0)
        met.add(question_id)
    return rasch.ability_posterior(
        difficulty=reference.difficulty_of(questions), domain=np.array(domain, dtype=np.int64),
        right=np.array(right, dtype=np.float64), age=np.array(age, dtype=np.float64),
        weight=np.array(weight), domains=len(domain_index),
        prior_mean=reference.ability_mean, prior_sd=reference.ability_sd,
        slope_mean=reference.slope_mean, slope_sd=reference.slope_sd,
    )


def domain_banks(*, standings: list[DomainStanding], exam, reference: BankReference, seen) -> list[readiness.DomainBank]:
    """Per domain of the blueprint: its seats and its ready questions' difficulties, split by
    whether the learner met them in a mock (`seen`: question ids)."""
    seats = draw.quotas(
        domains=[draw.DomainQuota(domain_id=s.domain_id, weight=s.weight, order=s.order) for s in standings],
        total=exam.question_count,
    )
    met = np.asarray(list(seen) if isinstance(seen, set | frozenset) else seen, dtype=np.int64)
    banks = []
    for s in standings:
        ids, difficulty = reference.pool(s.domain_id)
        in_mocks = np.isin(ids, met)
        banks.append(readiness.DomainBank(
            domain_id=s.domain_id, weight=s.weight, seats=seats[s.domain_id],
            reference=difficulty, unseen=difficulty[~in_mocks], seen=difficulty[in_mocks],
        ))
    return banks


@dataclass(frozen=True)
class LearnerEstimate:
    readiness: readiness.Readiness | None
    # Per domain id: the expected share right (percent) on its reference questions; None without data.
    domain_ability: dict[int, float]
    calibrated: bool


def learner_estimate(*, user, exam, standings: list[DomainStanding], held: bool = False) -> LearnerEstimate:
    """The dashboard's readiness figures and per-domain abilities: four queries, whatever the history.

    `held`: the page holds the readiness back (a running mock's question counts), so it is not
    simulated; the per-domain abilities still are (the same queries either way)."""
    window = counted_window(user=user, exam=exam)
    reference = bank_reference(exam)
    if len(window) < readiness.MIN_ANSWERED or not any(s.weight for s in standings):
        return LearnerEstimate(readiness=None, domain_ability={}, calibrated=reference.calibrated)
    banks = domain_banks(standings=standings, exam=exam, reference=reference, seen=seen_in_mocks(user=user, exam=exam))
    domain_index = {s.domain_id: i for i, s in enumerate(standings)}
    posterior = posterior_from(window=window, reference=reference, domain_index=domain_index)
    # Seeded by the learner and their history's length: the same page on every reload.
    seed = hash((user.pk, exam.pk, len(window), sum(right for _, _, right, _ in window))) & 0xFFFFFFFF
    estimate = None if held else _estimate(posterior=posterior, banks=banks, passing_score=exam.passing_score, seed=seed)
    answered = {s.domain_id for s in standings if s.answered}
    abilities = readiness.domain_abilities(posterior=posterior, domains=banks)
    return LearnerEstimate(
        readiness=estimate,
        domain_ability={d: value for d, value in abilities.items() if d in answered},
        calibrated=reference.calibrated,
    )


def _estimate(*, posterior: rasch.AbilityPosterior, banks: list[readiness.DomainBank], passing_score: int, seed: int):
    """readiness.estimate, memoised per process on a digest of everything it reads: the same
    posterior, pools, passing score and seed give the same figures, so a reload with nothing new
    skips its simulation (about 6 ms of the 1,000-attempt dashboard's CPU) and anything new is a
    new key. The digest hashes the arrays' bytes (~0.3 ms for a 10,000-question bank)."""
    digest = hashlib.sha256(repr((posterior.counted, posterior.centre, passing_score, seed)).encode())
    for part in (posterior.mean, posterior.covariance):
        digest.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
    for bank in banks:
        digest.update(repr((bank.domain_id, bank.weight, bank.seats, len(bank.reference), len(bank.unseen), len(bank.seen))).encode())
        for part in (bank.reference, bank.unseen, bank.seen):
            digest.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
    return calibration.cached(
        f"certprep:readiness:{digest.hexdigest()}",
        lambda: readiness.estimate(posterior=posterior, domains=banks, passing_score=passing_score, seed=seed),
    )


def domain_levels_of_learners(*, learners, exam, domains) -> dict[int, dict[int, float]]:
    """Per learner id, per domain id: the per-domain level (percent) the dashboard's drill reads,
    for many learners at once (a cohort's members): three queries, the window as the dashboard's.

    `learners` is a queryset of users, read as a subquery; `domains` the exam's, in order.
    """
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    try:
        learner_sql, learner_params = learners.order_by().values("pk").query.get_compiler(using="default").as_sql()
    except EmptyResultSet:
        return {}
    sql = f"""
        WITH a AS (
            SELECT id, user_id, mode, finished_at,
                   ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY finished_at DESC, id DESC) - 1 AS age
            FROM {attempt}
            WHERE exam_id = %s AND status IN (%s, %s) AND user_id IN ({learner_sql})
        ), counted AS (
            SELECT a.user_id AS user_id, r.question_id AS question_id, r.domain_id AS domain_id,
                   r.is_correct AS is_correct, a.age AS age,
                   ROW_NUMBER() OVER (PARTITION BY a.user_id ORDER BY {MASTERY_STAMP} DESC, r.id DESC) AS n
            FROM {response} r JOIN a ON a.id = r.attempt_id
            WHERE a.age < %s AND {MASTERY_COUNTED}
        )
        SELECT user_id, question_id, domain_id, is_correct, age FROM counted WHERE n <= %s ORDER BY user_id, n
    """
    params = [exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, *learner_params, ABILITY_ATTEMPTS, ABILITY_WINDOW]
    windows: dict[int, list[tuple[int, int, bool, int]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for user_id, question_id, domain_id, right, age in cursor.fetchall():
            windows.setdefault(user_id, []).append((question_id, domain_id, bool(right), int(age)))
    reference = bank_reference(exam)
    index = {domain.pk: i for i, domain in enumerate(domains)}
    banks = [
        readiness.DomainBank(domain_id=domain.pk, weight=domain.weight, seats=0, reference=reference.pool(domain.pk)[1],
                             unseen=np.zeros(0), seen=np.zeros(0))
        for domain in domains
    ]
    return {
        user_id: readiness.domain_abilities(
            posterior=posterior_from(window=window, reference=reference, domain_index=index), domains=banks,
        )
        for user_id, window in windows.items()
        if all(domain_id in index for _, domain_id, _, _ in window)
    }
