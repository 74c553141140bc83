"""psycopg prepares what a connection runs often (DATABASES' `server_side_binding` and
`prepare_threshold`, config/settings.py): the four statements of the hot paths (the session
load, the user read, the answer save, the question page's read) are planned once per
connection and then run from that plan; a connection that lost its statements prepares them
again; behind PgBouncer nothing is prepared (tests/test_settings.py)."""
from contextlib import nullcontext

import pytest
from django.conf import settings
from django.db import connection, transaction

from exams.room import reading
from tests.exams.room.test_mock import HTMX, question_url, start
from tests.factories import exam_with_bank

pytestmark = pytest.mark.postgres_only
THRESHOLD = settings.DATABASES["default"].get("OPTIONS", {}).get("prepare_threshold")  # PostgreSQL only


def prepared_here() -> list[str]:
    """The statements this connection's server session holds prepared."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_parameters_are_bound_by_the_server_and_often_run_statements_prepared():
    options = settings.DATABASES["default"]["OPTIONS"]
    assert options["server_side_binding"] is True and options["prepare_threshold"] == 5
    assert connection.features.uses_server_side_binding


@pytest.mark.django_db
def test_the_four_statements_of_the_hot_paths_are_prepared(learner_client):
    attempt = start(learner_client, exam_with_bank())
    for choice in range(THRESHOLD + 1):
        reply = learner_client.post(question_url(attempt, 1), {"answer": "1", "choice": [str(choice % 4 + 1)]}, headers=HTMX)
        assert reply["X-Answer-Saved"] == "1"
        assert learner_client.get(question_url(attempt, 1 + choice % 2)).status_code == 200
    statements = prepared_here()
    for hot in ("FROM django_session", "FROM \"auth_user\"", "WITH target AS", "WITH shown AS"):
        assert any(hot in statement for statement in statements), (hot, statements)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_a_transaction", [False, True])
def test_a_connection_that_lost_its_statements_prepares_them_again(learner_client, learner, in_a_transaction):
    attempt = start(learner_client, exam_with_bank())

    def read():
        return reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=1)

    for _ in range(THRESHOLD + 1):
        assert read() is not None
    assert any("WITH shown AS" in statement for statement in prepared_here())
    with transaction.atomic() if in_a_transaction else nullcontext():
        with connection.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")  # as a pooler's or an operator's reset would
        assert read() is not None
        assert read() is not None
