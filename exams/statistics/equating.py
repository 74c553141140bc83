"""Equated mock scores: a mock's raw score on the bank's reference form, by IRT true-score equating.

A form that drew harder questions than average gives the same learner a lower raw score; the
equated score is what that learner would be expected to score on the *reference form* (each
domain's seats filled at evenly spaced quantiles of its active questions' difficulties): the
ability whose expected raw score on this form is the raw score (exams.statistics.rasch.equate),
then that ability's expected score on the reference form. Frozen at grading
(`Attempt.equated_score`), never changing `score` or `passed` (the real exam's scaling is
unknown); "—" until the bank is calibrated (exams.statistics.calibration.is_calibrated). An
erratum's regrade empties it and the statistics refresh that follows fills it again
(`equate_mocks`), as it fills past mocks once the bank is first calibrated.
"""
from decimal import Decimal

import numpy as np
from django.db import DEFAULT_DB_ALIAS, connections, router
from scipy.special import expit

from exams.models import Attempt, AttemptMode, Response
from exams.room import draw
from exams.statistics import calibration, rasch


def reference_form(*, exam, bank: calibration.Stored) -> np.ndarray:
    """The reference form's difficulties: each domain's seats at evenly spaced quantiles of its active pool."""
    domains = list(exam.domains.all())
    seats = draw.quotas(
        domains=[draw.DomainQuota(domain_id=d.pk, weight=d.weight, order=d.order) for d in domains],
        total=exam.question_count,
    )
    form = []
    for domain in domains:
        pool = [bank.difficulty[q] for q, d in bank.domain.items() if d == domain.pk and q in bank.active]
        if seats[domain.pk] and pool:
            form.extend(np.quantile(pool, (np.arange(seats[domain.pk]) + 0.5) / seats[domain.pk]))
    return np.array(form)


def equated(*, right: int, form: list[float], reference: np.ndarray) -> Decimal | None:
    if not form or not len(reference):
        return None
    return Decimal(f"{rasch.equate(right=right, form=np.array(form), reference=reference):.2f}")


def equated_many(*, rights: list[int], forms: list[list[float]], reference: np.ndarray) -> list[Decimal | None]:
    """`equated` of many mocks at once: rasch.equate's Newton steps (rasch.ability_for_score) run on
    every form together, each form stopping as its own would. What took the statistics refresh
    most of two minutes when a regrade (or the first calibration) left 100,000 mocks to equate."""
    result: list[Decimal | None] = [None] * len(forms)
    if not len(reference):
        return result
    inside = []  # the mocks neither empty, nor at 0 or all right
    for index, (right, form) in enumerate(zip(rights, forms, strict=True)):
        if not form:
            continue
        if right <= 0:
            result[index] = Decimal("0.00")
        elif right >= len(form):
            result[index] = Decimal("100.00")
        else:
            inside.append(index)
    if not inside:
        return result
    width = max(len(forms[i]) for i in inside)
    difficulty = np.zeros((len(inside), width))
    present = np.zeros((len(inside), width), dtype=bool)
    for row, index in enumerate(inside):
        difficulty[row, :len(forms[index])] = forms[index]
        present[row, :len(forms[index])] = True
    right = np.array([rights[i] for i in inside], dtype=np.float64)
    theta = np.zeros(len(inside))
    running = np.ones(len(inside), dtype=bool)
    for _ in range(60):
        rows = np.flatnonzero(running)
        if not len(rows):
            break
        p = expit(theta[rows, None] - difficulty[rows]) * present[rows]
        step = (right[rows] - p.sum(axis=1)) / np.maximum((p * (1 - p)).sum(axis=1), 1e-9)
        theta[rows] = np.clip(theta[rows] + np.clip(step, -2, 2), -rasch.LIMIT, rasch.LIMIT)
        running[rows[np.abs(step) < 1e-9]] = False
    shares = rasch.expected_share(theta, reference)
    for row, index in enumerate(inside):
        result[index] = Decimal(f"{float(100 * shares[row]):.2f}")
    return result


def equate_mocks(*, exam, attempts=None) -> int:
    """Fill `equated_score` of the exam's finished mocks that have none (all of them by default).

    Nothing while the bank is not calibrated. Three queries and one bulk update per 2,000 mocks.
    """
    bank = calibration.stored(exam)
    if not bank.calibrated:
        return 0
    reference = reference_form(exam=exam, bank=bank)
    mocks = attempts if attempts is not None else Attempt.objects.finished().filter(exam=exam, mode=AttemptMode.MOCK)
    mocks = mocks.filter(equated_score__isnull=True, right_count__isnull=False)
    filled = 0
    ids = list(mocks.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 2000):
        chunk = ids[start:start + 2000]
        forms: dict[int, list[float]] = {}
        # A void slot (no verdict) is not on the form: the form is what the score counts.
        for attempt_id, question_id in Response.objects.filter(
            attempt_id__in=chunk, is_correct__isnull=False
        ).order_by().values_list("attempt_id", "question_id"):
            forms.setdefault(attempt_id, []).append(bank.difficulty.get(question_id, 0.0))
        attempts_of_chunk = list(Attempt.objects.filter(pk__in=chunk).only("pk", "right_count"))
        scores = equated_many(
            rights=[attempt.right_count for attempt in attempts_of_chunk],
            forms=[forms.get(attempt.pk, []) for attempt in attempts_of_chunk], reference=reference,
        )
        updated = []
        for attempt, score in zip(attempts_of_chunk, scores, strict=True):
            attempt.equated_score = score
            if score is not None:
                updated.append(attempt)
        _store(updated)
        filled += len(updated)
    return filled


def _store(attempts: list[Attempt]) -> None:
    """Write the attempts' equated scores: on PostgreSQL one UPDATE from two arrays, elsewhere
    bulk_update. Django's bulk_update builds a CASE of one WHEN per attempt, which took two
    thirds of the refresh's equating of 100,000 mocks (bench/scale)."""
    if not attempts:
        return
    connection = connections[router.db_for_write(Attempt) or DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        Attempt.objects.bulk_update(attempts, ["equated_score"])
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Attempt._meta.db_table} AS a SET equated_score = v.score"
            " FROM unnest(%s::bigint[], %s::numeric[]) AS v(id, score) WHERE a.id = v.id",
            [[attempt.pk for attempt in attempts], [attempt.equated_score for attempt in attempts]],
        )
