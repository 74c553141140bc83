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
        updated = []
        for attempt in Attempt.objects.filter(pk__in=chunk).only("pk", "right_count"):
            attempt.equated_score = equated(right=attempt.right_count, form=forms.get(attempt.pk, []), reference=reference)
            if attempt.equated_score is not None:
                updated.append(attempt)
        Attempt.objects.bulk_update(updated, ["equated_score"])
        filled += len(updated)
    return filled
