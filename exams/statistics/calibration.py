"""Calibrating the bank: a Rasch difficulty per question from the learners' counted first answers.

Run by the statistics refresh (exams.statistics.refresh). Which answers count (docs/MEASUREMENT.md):
- finished attempts only (submitted or expired; an abandoned practice never counts), every
  mode (mocks, practice, drills, reviews), the slot graded (a void slot has no verdict);
- answered slots only: a mock's unanswered slot says little about the item (time ran out,
  or the learner skipped it) and is left out here, though the mock's score counts it wrong;
- each learner's first answer to a question only: a re-answer follows the feedback the learner
  saw, so it would make the item look easier than it is to someone meeting it;
- answers to a version whose choices have since changed (text or set) are dropped: they
  answered a different item. A key corrected by an erratum keeps its answers, regraded.
Per question, not per version. Thin items are shrunk towards their domain's mean and their
author's level (`Question.difficulty`, exams.statistics.rasch.LEVEL_OFFSET).
"""
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, router

from django.db.models import BooleanField, ExpressionWrapper, F, FilteredRelation, Q

from exams.models import (
    Attempt, AttemptStatus, ExamStatistic, Question, QuestionVersion, Response, learner_questions,
)
from exams.statistics import rasch

# The bank counts as calibrated when this share of its ready questions has at least
# CALIBRATED_N first answers and an SE of at most CALIBRATED_SE (issue 24).
CALIBRATED_SHARE = 0.8
CALIBRATED_N = 30
CALIBRATED_SE = 0.35
FETCH_ROWS = 200_000


@dataclass(frozen=True)
class ExamCalibration:
    # question id -> (difficulty, se, n)
    items: dict[int, tuple[float, float, int]]
    ability_mean: float
    ability_sd: float
    calibrated: bool
    responses: int
    # The learners' drift per rasch.SLOPE_UNIT attempts (rasch.drift_population); None when too
    # few learners had enough attempts to learn it from.
    drift: rasch.DriftPopulation | None = None


def _changed_versions(exam) -> list[int]:
    """Versions whose choices (ids or texts) differ from their question's latest version's."""
    latest: dict[int, tuple] = {}
    versions = []
    for version_id, question_id, number, content in (
        QuestionVersion.objects.filter(question__exam=exam).order_by("question_id", "number")
        .values_list("pk", "question_id", "number", "content")
    ):
        choices = tuple(sorted((key, value.get("text")) for key, value in (content or {}).get("choices", {}).items()))
        versions.append((version_id, question_id, choices))
        latest[question_id] = choices
    return [version_id for version_id, question_id, choices in versions if choices != latest[question_id]]


def counted_first_answers(exam) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(learner id, question id, right, attempt's rank among the learner's finished attempts) per
    learner's first counted answer to each question, as arrays."""
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    changed = _changed_versions(exam)
    skip_changed = "AND NOT (r.version_id = ANY(%s))" if changed else ""
    # Each finished attempt's rank among its learner's (the clock of the learner's drift, as
    # exams.study.ability counts it: finished attempts, every mode).
    ranked = f"""
        SELECT id, user_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY finished_at, id) AS seq
        FROM {attempt} WHERE exam_id = %s AND status IN (%s, %s)
    """
    sql = f"""
        WITH a AS ({ranked})
        SELECT DISTINCT ON (a.user_id, r.question_id) a.user_id, r.question_id, r.is_correct, a.seq
        FROM {response} r JOIN a ON a.id = r.attempt_id
        WHERE r.is_correct IS NOT NULL AND r.answered_at IS NOT NULL {skip_changed}
        ORDER BY a.user_id, r.question_id, r.answered_at, r.id
    """
    params: list = [exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED]
    if changed:
        params.append(changed)
    using = router.db_for_read(Response) or DEFAULT_DB_ALIAS
    connection = connections[using]
    if connection.vendor != "postgresql":  # SQLite: no DISTINCT ON; the first row per pair by a window
        sql = f"""
            WITH a AS ({ranked})
            SELECT user_id, question_id, is_correct, seq FROM (
                SELECT a.user_id AS user_id, r.question_id AS question_id, r.is_correct AS is_correct, a.seq AS seq,
                       ROW_NUMBER() OVER (PARTITION BY a.user_id, r.question_id ORDER BY r.answered_at, r.id) AS k
                FROM {response} r JOIN a ON a.id = r.attempt_id
                WHERE r.is_correct IS NOT NULL
                  AND r.answered_at IS NOT NULL
                  {"AND r.version_id NOT IN (" + ",".join(["%s"] * len(changed)) + ")" if changed else ""}
            ) numbered WHERE k = 1
        """
        params = [exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, *changed]
    chunks = []
    # A server-side cursor where the database allows one: millions of rows arrive in chunks
    # instead of all at once in the client's memory.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(FETCH_ROWS):
            chunks.append(np.array(rows, dtype=np.int32))
    if not chunks:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    table = np.concatenate(chunks)
    return table[:, 0], table[:, 1], table[:, 2], table[:, 3]


def is_calibrated(*, ready: list[int], items: dict[int, tuple[float, float, int]]) -> bool:
    """At least CALIBRATED_SHARE of the ready questions have n ≥ CALIBRATED_N and SE ≤ CALIBRATED_SE."""
    if not ready:
        return False
    good = sum(1 for pk in ready if pk in items and items[pk][2] >= CALIBRATED_N and items[pk][1] <= CALIBRATED_SE)
    return good >= CALIBRATED_SHARE * len(ready)


def calibrate_exam(exam) -> ExamCalibration:
    """Every question of the exam (retired ones too, their answers still inform their learners), calibrated."""
    questions = list(
        Question.objects.filter(exam=exam).order_by("pk")
        .annotate(ready=ExpressionWrapper(learner_questions(), output_field=BooleanField()))
        .values_list("pk", "domain_id", "difficulty", "ready")
    )
    learners, question_ids, right, sequence = counted_first_answers(exam)
    domains = {domain_id: i for i, domain_id in enumerate(sorted({d for _, d, _, _ in questions}))}
    # Each answer's question as its index in `questions` (ordered by pk), in numpy: at 6M answers
    # a Python list and dict lookup per answer cost seconds and hundreds of MiB (bench/scale).
    pks = np.array([pk for pk, _, _, _ in questions], dtype=np.int64)
    position = np.searchsorted(pks, question_ids)
    keep = position < len(pks)
    keep[keep] = pks[position[keep]] == question_ids[keep]
    learners, right, sequence, item = learners[keep], right[keep], sequence[keep], position[keep].astype(np.int64)
    _, person = np.unique(learners, return_inverse=True)
    result = rasch.calibrate(
        person=person.astype(np.int64), item=item, right=right,
        item_domain=np.array([domains[d] for _, d, _, _ in questions], dtype=np.int64),
        item_level=np.array([rasch.LEVEL_OFFSET.get(level, 0.0) for _, _, level, _ in questions]),
    )
    items = {
        pk: (float(result.difficulty[i]), float(result.se[i]), int(result.n[i]))
        for i, (pk, _, _, _) in enumerate(questions)
    }
    ready = [pk for pk, _, _, active in questions if active]
    return ExamCalibration(
        items=items, ability_mean=result.person_mean, ability_sd=result.person_sd,
        calibrated=is_calibrated(ready=ready, items=items), responses=len(right),
        drift=drift_of(person=person.astype(np.int64), difficulty=result.difficulty[item], right=right,
                       attempt=sequence, calibrated=result),
    )


def drift_of(*, person: np.ndarray, difficulty: np.ndarray, right: np.ndarray, attempt: np.ndarray,
             calibrated: rasch.Calibration) -> rasch.DriftPopulation | None:
    """The learners' drift (empirical Bayes): each learner's slope from their first answers given the
    difficulties just calibrated, then the population's mean and SD (rasch.drift_population)."""
    estimate, variance, attempts = rasch.learner_slopes(
        person=person, difficulty=difficulty, right=right, attempt=attempt,
        ability_mean=calibrated.person_mean, ability_sd=calibrated.person_sd,
    )
    return rasch.drift_population(estimate=estimate, variance=variance, attempts=attempts)


# Before the first calibration: the population prior of a learner's ability (logits).
DEFAULT_ABILITY_MEAN = 0.5
DEFAULT_ABILITY_SD = 1.5


@dataclass(frozen=True)
class Stored:
    """What the last refresh stored, as the pages and the draw read it."""

    # Every question of the exam: its Rasch difficulty, or before a calibration the prior's mean
    # (the author's level, rasch.LEVEL_OFFSET).
    difficulty: dict[int, float]
    domain: dict[int, int]
    # The questions learners meet (active and ready): the reference form's pool.
    active: frozenset[int]
    ability_mean: float
    ability_sd: float
    calibrated: bool
    # The prior of a learner's drift per rasch.SLOPE_UNIT attempts: the population's once the bank
    # is calibrated and the drift was learned, otherwise rasch.SLOPE_MEAN / rasch.SLOPE_SD.
    slope_mean: float = rasch.SLOPE_MEAN
    slope_sd: float = rasch.SLOPE_SD


def drift_prior(*, calibrated: bool, drift_mean: float | None, drift_sd: float | None) -> tuple[float, float]:
    """The drift prior the ability posterior takes: the learned one on a calibrated bank (its SD at
    least rasch.SLOPE_SD_FLOOR), otherwise the fixed fallback."""
    if not calibrated or drift_mean is None or drift_sd is None:
        return rasch.SLOPE_MEAN, rasch.SLOPE_SD
    return drift_mean, max(drift_sd, rasch.SLOPE_SD_FLOOR)


def stored(exam) -> Stored:
    """Two queries: the questions with their stored difficulty, and the exam's calibration row."""
    # One join, not a subquery per question: at 10,000 questions the per-row lookups took
    # most of the dashboard's reference read (bench/scale). At most one row matches
    # (the item_statistic_once constraint).
    rows = list(
        Question.objects.filter(exam=exam).order_by()
        .annotate(overall=FilteredRelation("statistics", condition=Q(statistics__first_mock_only=False)))
        .annotate(rasch=F("overall__rasch_difficulty"))
        .annotate(ready=ExpressionWrapper(learner_questions(), output_field=BooleanField()))
        .values_list("pk", "domain_id", "difficulty", "rasch", "ready")
    )
    test = ExamStatistic.objects.filter(exam=exam, first_mock_only=False).only(
        "ability_mean", "ability_sd", "calibrated", "drift_mean", "drift_sd"
    ).first()
    slope_mean, slope_sd = drift_prior(calibrated=bool(test and test.calibrated), drift_mean=test and test.drift_mean,
                                       drift_sd=test and test.drift_sd)
    return Stored(
        difficulty={pk: value if value is not None else rasch.LEVEL_OFFSET.get(level, 0.0) for pk, _, level, value, _ in rows},
        domain={pk: domain_id for pk, domain_id, _, _, _ in rows},
        active=frozenset(pk for pk, _, _, _, active in rows if active),
        ability_mean=test.ability_mean if test and test.ability_mean is not None else DEFAULT_ABILITY_MEAN,
        ability_sd=test.ability_sd if test and test.ability_sd is not None else DEFAULT_ABILITY_SD,
        calibrated=bool(test and test.calibrated),
        slope_mean=slope_mean, slope_sd=slope_sd,
    )


# Cached per process, keyed on what it was read from (stored_version): the bank's 10,000
# questions took a fifth of the 1,000-attempt dashboard (docs/BENCHMARKS.md), and they change
# only when the statistics refresh runs or the bank is edited. A day's timeout only lets the
# entries of past versions go.
BANK_CACHE_SECONDS = 24 * 3600


def cached(key: str, read, seconds: int = BANK_CACHE_SECONDS):
    """`read()`, cached per process under `key` (which must change whenever what `read` reads
    does): the one cache-aside of the dashboard's reads. A value of None is cached too."""
    found = cache.get(key)
    if found is None:
        found = (read(),)
        cache.set(key, found, seconds)
    return found[0]


def bank_cached(exam, name: str, read):
    """`read()`, cached per process under the bank's version (stored_version): one query when
    warm. Off PostgreSQL nothing is cached and `read()` runs every time."""
    version = stored_version(exam)
    if version is None:
        return read()
    return cached(f"certprep:{name}:{exam.pk}:{version}", read)


def stored_version(exam) -> str | None:
    """One query of two rows: a token that changes whenever `stored(exam)` would read something
    else, for caching what it read (exams.study.ability.bank_reference) and the builder's
    bank-sized reads (exams.study.views.practice). None off PostgreSQL (no caching).

    The refresh writes its item and exam statistics together and replaces the exam row (a new
    id and computed_at), so the exam row stands for the stored difficulties. The questions' own
    columns that the caches read (exam, domain, author's level, status, whether active, topic,
    exclusion group), and questions added or deleted, bump the bank version: a statement-level
    trigger on the questions' table sets it from a sequence (migration 0030), whatever wrote
    them. This replaced a hash summed over every question (a scan of 10,000 rows, ~7 ms a
    dashboard at bench/scale)."""
    if connections[router.db_for_read(Question)].vendor != "postgresql":
        return None
    statistic = ExamStatistic._meta.db_table
    sql = f"""
        SELECT (SELECT s.id || '@' || extract(epoch FROM s.computed_at) FROM {statistic} s WHERE s.exam_id = %s AND NOT s.first_mock_only),
               (SELECT v.version FROM exams_bankversion v WHERE v.id = 1)
    """
    with connections[router.db_for_read(Question)].cursor() as cursor:
        cursor.execute(sql, [exam.pk])
        statistic_row, version = cursor.fetchone()
    return f"{statistic_row}/{version}"
