"""Recompute and store an exam's item and test statistics (the rows the admin reads).

A plain function, so tests call it directly and a background task can wrap it. The sums
come from the database (exams.statistics.totals), the formulas from
exams.statistics.formulas; the old rows are replaced in one transaction, so a reader
sees either the previous statistics or the new ones, never half of each.
"""
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from exams.models import Attempt, AttemptMode, Choice, Exam, ExamStatistic, ItemStatistic, Question
from exams.statistics import calibration, equating, formulas
from exams.statistics.totals import totals_for


@dataclass(frozen=True)
class RefreshSummary:
    exam: str
    computed_at: datetime
    questions: int
    attempts: int
    likely: int
    very_likely: int
    kr20: float | None


def _first_mock_filter(queryset):
    """Each learner's first finished mock of the exam (ties by id), as bank.totals_for keeps them."""
    earlier = Attempt.objects.finished().filter(
        user=OuterRef("user"), exam=OuterRef("exam"), mode=AttemptMode.MOCK,
    ).filter(Q(finished_at__lt=OuterRef("finished_at")) | Q(finished_at=OuterRef("finished_at"), pk__lt=OuterRef("pk")))
    return queryset.filter(~Exists(earlier))


def _rows_for(*, exam: Exam, first_mock_only: bool, now) -> tuple[list[ItemStatistic], ExamStatistic]:
    questions = Question.objects.filter(exam=exam)
    choices_by_question: dict[int, list[Choice]] = {}
    for choice in Choice.objects.filter(question__exam=exam).order_by("question_id", "order", "pk").only(
        "pk", "question_id", "label", "is_correct", "order"
    ):
        choices_by_question.setdefault(choice.question_id, []).append(choice)
    totals = totals_for(questions=questions, first_mock_only=first_mock_only)
    empty = formulas.ItemTotals(n=0, right=0, upper_right=0, lower_right=0, sum_y=0, sum_yy=0, sum_xy=0,
                                choice_counts={}, upper_counts={}, lower_counts={})
    mocks = Attempt.objects.finished().filter(exam=exam, mode=AttemptMode.MOCK)
    if first_mock_only:
        mocks = _first_mock_filter(mocks)
    right_counts = {
        row["right"] or 0: row["attempts"]
        for row in mocks.values(right=Coalesce("right_count", 0)).annotate(attempts=Count("pk")).order_by()
    }
    attempts = sum(right_counts.values())
    items, sum_npq = [], 0.0
    for question_id, choices in choices_by_question.items():
        key = frozenset(c.pk for c in choices if c.is_correct)
        if not key:  # no key, nothing to measure
            continue
        item = totals.get(question_id, empty)
        statistics = formulas.statistics_from_totals(item, key=key, all_choices=[c.pk for c in choices])
        if item.n:
            sum_npq += item.right * (item.n - item.right) / item.n  # n·p·q
        labels = {c.pk: c.label for c in choices}
        items.append(ItemStatistic(
            question_id=question_id, first_mock_only=first_mock_only, computed_at=now, n=item.n,
            facility=statistics.facility, sd=formulas.item_sd(n=item.n, right=item.right),
            random_guess_score=formulas.random_guess_score(choices=len(choices), keys=len(key)),
            discrimination_index=statistics.point_biserial,
            discriminative_efficiency=formulas.discriminative_efficiency(item),
            d_upper_lower=statistics.discrimination, group_size=statistics.group_size,
            miskey=statistics.miskey or "",
            choices=[
                {
                    "choice_id": c.choice_id, "label": labels.get(c.choice_id, "?"), "is_key": c.is_key,
                    "picked": c.picked, "upper": c.upper, "lower": c.lower, "share": c.share,
                    "option_discrimination": c.option_discrimination, "non_functioning": c.non_functioning_reason,
                }
                for c in formulas.choice_statistics(item, key=key, all_choices=[c.pk for c in choices])
            ],
        ))
    score = formulas.score_statistics(
        right_counts=right_counts, question_count=exam.question_count,
        # The mean over attempts of Σ p_i·q_i over the items each held = Σ_i n_i·p_i·q_i / attempts.
        sum_pq=sum_npq / attempts if attempts else 0.0,
    )
    test = ExamStatistic(
        exam=exam, first_mock_only=first_mock_only, computed_at=now, attempts=score.attempts,
        question_count=exam.question_count, mean=score.mean, median=score.median, sd=score.sd,
        skewness=score.skewness, kr20=score.kr20, sem=score.sem,
    )
    return items, test


def item_statistics_refresh(*, exam: Exam) -> RefreshSummary:
    """Recompute the exam's item statistics (all mocks, and first mocks only) and its test statistics; store them."""
    now = timezone.now()
    rows, tests = [], []
    for first_mock_only in (False, True):
        items, test = _rows_for(exam=exam, first_mock_only=first_mock_only, now=now)
        rows += items
        tests.append(test)
    calibrated = calibration.calibrate_exam(exam)
    for row in rows:
        if not row.first_mock_only and row.question_id in calibrated.items:
            row.rasch_difficulty, row.rasch_se, row.rasch_n = calibrated.items[row.question_id]
    tests[0].ability_mean, tests[0].ability_sd = calibrated.ability_mean, calibrated.ability_sd
    tests[0].calibrated = calibrated.calibrated
    if calibrated.drift is not None:
        tests[0].drift_mean, tests[0].drift_sd = calibrated.drift.mean, calibrated.drift.sd
    with transaction.atomic():
        ItemStatistic.objects.filter(question__exam=exam).delete()
        ExamStatistic.objects.filter(exam=exam).delete()
        ItemStatistic.objects.bulk_create(rows, batch_size=1000)
        ExamStatistic.objects.bulk_create(tests)
    # Mocks without an equated score (graded before the bank was calibrated, or regraded since)
    # get one from the difficulties just stored.
    equating.equate_mocks(exam=exam)
    overall = [row for row in rows if not row.first_mock_only]
    return RefreshSummary(
        exam=exam.code, computed_at=now, questions=len(overall), attempts=tests[0].attempts,
        likely=sum(row.miskey == "likely" for row in overall),
        very_likely=sum(row.miskey == "very likely" for row in overall),
        kr20=tests[0].kr20,
    )


def statistics_refresh_job(*, job, progress) -> str:
    """The refresh_statistics job's work (jobs.services.job_run): item_statistics_refresh of the job's exam."""
    exam = Exam.objects.get(pk=job.payload["exam"])
    # Progress in questions, the figure an instructor knows; the work is a few set-based
    # queries, so it jumps from none to all.
    questions = Question.objects.filter(exam=exam).count()
    progress(0, total=questions, stage=f"Recomputing the item statistics of {questions:,} questions of {exam.code}")
    summary = item_statistics_refresh(exam=exam)
    progress(questions)
    flagged = summary.likely + summary.very_likely
    return (
        f"Stored the item statistics of {summary.questions:,} questions of {exam.code} over {summary.attempts:,} "
        f"finished mocks; {flagged:,} flagged as possibly mis-keyed."
    )
