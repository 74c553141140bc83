"""Each page of a mock costs a fixed, small number of SQL statements, whatever the exam's size.

Counted without SAVEPOINT/RELEASE (the test's own transaction turns a view's atomic block
into savepoints; in production they are BEGIN/COMMIT, or nothing for a page that only reads).
The figures per request (CPU, throughput) are measured by bench/load (docs/BENCHMARKS.md).
"""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.exams.room.test_mock import HTMX, key_positions, question_url, start, wrong_position
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db

# statements per request: (PostgreSQL, SQLite); the session and its user are 2 of each.
COSTS = {
    "catalogue": (5, 5),
    "exam start page": (7, 7),
    "start mock (resume)": (5, 5),
    "question page": (3, 7),
    "question partial": (3, 7),
    "a move (the partial of another slot)": (3, 8),
    "answer save": (3, 7),
    "answer save + next": (9, 12),
    "review": (4, 4),
    "submit": (18, 17),  # the equated score: the bank's calibration read (two statements)
    # + what the running mock holds back from totals (held_back), + whether the bank is calibrated
    "results": (16, 16),
}


def statements(request) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert request().status_code in (200, 302)
    return [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]


def costs(client, size: int) -> dict[str, int]:
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=size, question_count=size)
    attempt = start(client, exam)
    slots = {response.position: response for response in attempt.responses.prefetch_related("question__choices")}
    client.post(question_url(attempt, 1), {"choice": key_positions(slots[1])[0], "flag": "on"}, headers=HTMX)
    client.post(question_url(attempt, 2), {"choice": wrong_position(slots[2])}, headers=HTMX)
    client.get(question_url(attempt, 3))
    wrong = wrong_position(slots[3])
    moves = iter(range(size, 4, -1))
    pages = {
        "catalogue": lambda: client.get(reverse("exams:catalogue")),
        "exam start page": lambda: client.get(reverse("exams:exam", args=[exam.code])),
        "start mock (resume)": lambda: client.post(reverse("exams:start_mock", args=[exam.code])),
        "question page": lambda: client.get(question_url(attempt, 3)),
        "question partial": lambda: client.get(question_url(attempt, 3), headers=HTMX),
        # Each time to another slot, so each moves the resume point.
        "a move (the partial of another slot)": lambda: client.get(question_url(attempt, next(moves)), headers=HTMX),
        "answer save": lambda: client.post(question_url(attempt, 3), {"choice": wrong}, headers=HTMX),
        "answer save + next": lambda: client.post(question_url(attempt, 3), {"choice": wrong, "go": "next"}, headers=HTMX),
        "review": lambda: client.get(reverse("exams:review", args=[attempt.pk])),
        "submit": lambda: client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"}),
        "results": lambda: client.get(reverse("exams:results", args=[attempt.pk])),
    }
    return {label: len(statements(request)) for label, request in pages.items()}


def test_every_page_of_a_mock_costs_a_fixed_number_of_statements(learner_client):
    small, large = costs(learner_client, 10), costs(learner_client, 60)
    assert small == large, (small, large)
    column = 0 if connection.vendor == "postgresql" else 1
    assert small == {label: cost[column] for label, cost in COSTS.items()}
