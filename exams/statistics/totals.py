"""Item statistics for a bank: counts and sums in SQL, formulas from exams.statistics.formulas.

The database ranks each question's observations (finished mocks) and returns per
question a handful of sums, and per question and choice three counts, so a bank of
millions of responses never comes back to Python row by row. `exams.statistics.formulas` holds the
formulas and the row-by-row reference the SQL is tested against.
"""
from collections import defaultdict

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connections, router, transaction
from django.db.models import QuerySet

from exams.models import Attempt, AttemptMode, Choice, Exam, Question, Response, ResponseChoice
from exams.statistics.formulas import ItemStatistics, ItemTotals, statistics_from_totals
from exams.tuning import local_work_mem


def statistics_for_exam(*, exam: Exam) -> dict[int, ItemStatistics]:
    """Statistics of every keyed question of the exam, retired ones included; two queries."""
    return _statistics(questions=Question.objects.filter(exam=exam))


def statistics_for_question(*, question: Question) -> ItemStatistics:
    statistics = _statistics(questions=Question.objects.filter(pk=question.pk))
    if question.pk not in statistics:
        raise ValueError(f"question {question.pk} has no key, so it has no item statistics")
    return statistics[question.pk]


def likely_miskeyed_ids(*, exam: Exam) -> set[int]:
    return {pk for pk, statistics in statistics_for_exam(exam=exam).items() if statistics.likely_miskeyed}


def statistics_for_questions(*, questions: QuerySet) -> dict[int, ItemStatistics]:
    """Statistics of just these questions (e.g. one admin page of them), in two queries."""
    return _statistics(questions=questions)


def _statistics(*, questions: QuerySet) -> dict[int, ItemStatistics]:
    all_choices: dict[int, list[int]] = defaultdict(list)
    keys: dict[int, set[int]] = defaultdict(set)
    for question_id, choice_id, is_correct in (
        Choice.objects.filter(question__in=questions)
        .order_by("question_id", "order", "pk")
        .values_list("question_id", "pk", "is_correct")
    ):
        all_choices[question_id].append(choice_id)
        if is_correct:
            keys[question_id].add(choice_id)
    totals = totals_for(questions=questions)
    empty = ItemTotals(n=0, right=0, upper_right=0, lower_right=0, sum_y=0, sum_yy=0, sum_xy=0,
                       choice_counts={}, upper_counts={}, lower_counts={})
    return {
        question_id: statistics_from_totals(
            totals.get(question_id, empty), key=frozenset(key), all_choices=all_choices[question_id]
        )
        # A question without a key cannot be graded, so there is nothing to measure.
        for question_id, key in keys.items()
    }


def totals_for(*, questions: QuerySet, first_mock_only: bool = False) -> dict[int, ItemTotals]:
    """ItemTotals per question in one statement (see exams.statistics.formulas.ItemTotals for the terms).

    Each finished mock's slot is one observation: x = 1 when graded right (unanswered and
    voided slots count as wrong), the attempt's score ranks it within its question (ties
    by attempt id), and the ranks give the ceil(27%) upper and lower groups; a second
    ranking by rest-score gives Σ y over the best `right` of them. The first half of the
    UNION sums per question; the second counts picks (and their rest-scores) per choice.
    `first_mock_only` keeps each learner's first finished mock of the exam alone.
    """
    response, attempt, pick = Response._meta.db_table, Attempt._meta.db_table, ResponseChoice._meta.db_table
    # Raw SQL bypasses the router, so ask it: inside statistics_reads() this is the replica.
    using = router.db_for_read(Response) or DEFAULT_DB_ALIAS
    try:
        question_sql, question_params = questions.order_by().values("pk").query.get_compiler(using=using).as_sql()
    except EmptyResultSet:  # e.g. an admin page with no questions on it
        return {}
    first_only = ""
    if first_mock_only:
        first_only = f"""AND NOT EXISTS (
                SELECT 1 FROM {attempt} e
                WHERE e.user_id = a.user_id AND e.exam_id = a.exam_id AND e.mode = %s AND e.status IN (%s, %s)
                  AND (e.finished_at < a.finished_at OR (e.finished_at = a.finished_at AND e.id < a.id))
            )"""
    sql = f"""
        WITH observed AS (
            SELECT r.id AS response_id, r.question_id AS question_id,
                   CASE WHEN r.is_correct THEN 1 ELSE 0 END AS x,
                   COALESCE(a.right_count, 0) AS score,
                   ROW_NUMBER() OVER (
                       PARTITION BY r.question_id ORDER BY COALESCE(a.score, 0) DESC, r.attempt_id
                   ) AS rank,
                   COUNT(*) OVER (PARTITION BY r.question_id) AS n,
                   SUM(CASE WHEN r.is_correct THEN 1 ELSE 0 END) OVER (PARTITION BY r.question_id) AS right_n
            FROM {response} r
            JOIN {attempt} a ON a.id = r.attempt_id
            WHERE r.question_id IN ({question_sql}) AND a.mode = %s AND a.status IN (%s, %s) {first_only}
        ),
        grouped AS (
            SELECT response_id, question_id, x, score - x AS y, n,
                   CASE WHEN rank <= (27 * n + 99) / 100 THEN 1 ELSE 0 END AS upper,
                   CASE WHEN rank > n - (27 * n + 99) / 100 THEN 1 ELSE 0 END AS lower,
                   CASE WHEN ROW_NUMBER() OVER (PARTITION BY question_id ORDER BY score - x DESC, response_id) <= right_n
                        THEN score - x ELSE 0 END AS top_y
            FROM observed
        )
        SELECT question_id, NULL, MAX(n), SUM(x), SUM(x * upper), SUM(x * lower), SUM(y), SUM(y * y), SUM(x * y),
               SUM(top_y)
        FROM grouped GROUP BY question_id
        UNION ALL
        SELECT g.question_id, p.choice_id, COUNT(*), SUM(g.upper), SUM(g.lower), SUM(g.y), 0, 0, 0, 0
        FROM grouped g JOIN {pick} p ON p.response_id = g.response_id
        GROUP BY g.question_id, p.choice_id
    """
    statuses = list(Attempt.FINISHED_STATUSES)
    params = [*question_params, AttemptMode.MOCK, *statuses]
    if first_mock_only:
        params += [AttemptMode.MOCK, *statuses]
    sums: dict[int, tuple[int, ...]] = {}
    counts: dict[int, tuple[dict, dict, dict, dict]] = defaultdict(lambda: ({}, {}, {}, {}))
    connection = connections[using]
    # A whole bank's ranking sorts millions of rows: let PostgreSQL do it in memory.
    with transaction.atomic(using=using), local_work_mem("256MB", connection=connection), connection.cursor() as cursor:
        cursor.execute(sql, params)
        for question_id, choice_id, *values in cursor.fetchall():
            values = [int(value or 0) for value in values]
            if choice_id is None:
                sums[question_id] = tuple(values)
            else:
                every, upper, lower, sum_y = counts[question_id]
                every[choice_id], upper[choice_id], lower[choice_id], sum_y[choice_id] = values[:4]
    totals = {}
    for question_id, (n, right, upper_right, lower_right, sum_y, sum_yy, sum_xy, sum_top_y) in sums.items():
        every, upper, lower, choice_sum_y = counts[question_id]
        totals[question_id] = ItemTotals(
            n=n, right=right, upper_right=upper_right, lower_right=lower_right,
            sum_y=sum_y, sum_yy=sum_yy, sum_xy=sum_xy,
            choice_counts=every, upper_counts=upper, lower_counts=lower,
            sum_top_y=sum_top_y, choice_sum_y=choice_sum_y,
        )
    return totals
