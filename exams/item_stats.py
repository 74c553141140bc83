"""Item statistics for a bank: observations from finished mocks in SQL, formulas from exams.stats."""
from collections import defaultdict

from django.db.models import QuerySet

from exams.models import Attempt, AttemptMode, Choice, Exam, Question, Response
from exams.stats import ItemObservation, ItemStatistics, item_statistics


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

    # One row per pick (or one with no choice for an unanswered slot): the left join on
    # the picks gives every observation of the whole bank in a single query.
    rows = (
        Response.objects.filter(
            question__in=questions,
            attempt__mode=AttemptMode.MOCK,
            attempt__status__in=Attempt.FINISHED_STATUSES,
        )
        .order_by()
        .values_list("question_id", "attempt_id", "attempt__right_count", "is_correct", "picks__choice_id")
    )
    slots: dict[int, dict[int, tuple[int, bool, set[int]]]] = defaultdict(dict)
    for question_id, attempt_id, attempt_right, is_correct, choice_id in rows:
        # An unanswered slot, or a voided one (NULL), counts as wrong.
        _, _, picked = slots[question_id].setdefault(attempt_id, (attempt_right or 0, is_correct is True, set()))
        if choice_id is not None:
            picked.add(choice_id)

    return {
        question_id: item_statistics(
            observations=[
                ItemObservation(attempt_id=attempt_id, attempt_right=right_count, right=right, selected=frozenset(picked))
                for attempt_id, (right_count, right, picked) in sorted(slots[question_id].items())
            ],
            key=frozenset(key),
            all_choices=all_choices[question_id],
        )
        # A question without a key cannot be graded, so there is nothing to measure.
        for question_id, key in keys.items()
    }
