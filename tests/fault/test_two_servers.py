"""Two gunicorn servers on one PostgreSQL: a mock taken alternating between them (stateless web servers)."""
import re

import pytest

from tests.fault import rows
from tests.fault.scoring import grade_from_scratch, stored_grade

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]


def test_one_mock_alternating_between_two_servers(cluster, start_gunicorn, new_exam, log_in):
    code = new_exam()
    server_a, server_b = start_gunicorn(), start_gunicorn()
    on_a = log_in(server_a, "learner1")
    on_b = on_a.on(server_b.url)  # the same browser: sessions live in the database

    attempt_id = on_a.start_mock(code)
    slots = rows.slots(cluster, attempt_id)
    # Right on odd positions, wrong on even ones, each save on the other server than the last.
    answers = {p: slot.right_position() if p % 2 else slot.wrong_position() for p, slot in slots.items()}
    for position, choice in answers.items():
        learner = on_b if position % 2 else on_a
        reply = learner.save(attempt_id, position, [choice])
        assert reply.status == 200 and "Saved" in reply.body, f"save {position} on {learner.base_url}: {reply.status}"
        # Navigating shows the answer the other server stored.
        other = on_a if learner is on_b else on_b
        page = other.show(attempt_id, position)
        assert page.status == 200, f"question {position} on {other.base_url}: {page.status}"
        assert re.search(rf'value="{choice}"[^>]*checked', page.body), f"question {position} lost its answer between servers"

    reply = on_b.submit(attempt_id)
    assert (reply.status, reply.location) == (302, f"/attempts/{attempt_id}/results/"), f"submit on B: {reply.status}"
    results = on_a.results(attempt_id)
    assert results.status == 200, f"results on A: {results.status}"

    expected = grade_from_scratch(cluster, attempt_id)
    assert (expected.right, expected.total) == (5, 10), "odd positions were answered right, even ones wrong"
    assert stored_grade(cluster, attempt_id) == expected, "the stored grade differs from grading from scratch"
    assert '<strong class="score">50.0%</strong>' in results.body, "the results page on A does not show the 50.0% score"
    assert rows.attempt_status(cluster, attempt_id)[0] == "submitted"
