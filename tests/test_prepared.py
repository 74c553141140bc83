"""config.prepared: the hot statements run prepared, once per connection, and survive a
session that lost them; off, they run as written."""
import pytest
from django.db import connection, connections
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from config import prepared

pytestmark = pytest.mark.postgres_only

ADD = prepared.Statement("certprep_test_add", "SELECT %(a)s + %(b)s, 7 %% 4, %(a)s", {"a": "integer", "b": "integer"})


def run(statement, **params):
    with connection.cursor() as cursor:
        statement.execute(cursor, params)
        return cursor.fetchone()


def test_every_parameter_needs_a_type():
    with pytest.raises(ValueError, match=r"no type for \['b'\]"):
        prepared.Statement("certprep_test_bad", "SELECT %(a)s, %(b)s", {"a": "integer"})


@pytest.mark.django_db(transaction=True)
def test_prepared_once_per_connection_then_only_executed():
    connections.close_all()  # a new connection, which has prepared nothing
    with CaptureQueriesContext(connection) as first:
        assert run(ADD, a=2, b=3) == (5, 3, 2)
    with CaptureQueriesContext(connection) as second:
        assert run(ADD, a=10, b=4) == (14, 3, 10)
    assert [q["sql"].split(" (")[0] for q in first] == ["PREPARE certprep_test_add", "EXECUTE certprep_test_add"]
    assert [q["sql"] for q in second] == ["EXECUTE certprep_test_add (10, 4)"]


@pytest.mark.django_db(transaction=True)
def test_a_session_that_lost_its_statements_prepares_them_again():
    run(ADD, a=1, b=1)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    assert run(ADD, a=4, b=4) == (8, 3, 4)
    assert run(ADD, a=5, b=4) == (9, 3, 5)


@pytest.mark.django_db
def test_inside_a_transaction_a_lost_statement_is_an_error_not_a_silent_retry():
    run(ADD, a=1, b=1)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    from django.db import DatabaseError

    with pytest.raises(DatabaseError):
        run(ADD, a=4, b=4)


@pytest.mark.django_db
@override_settings(PREPARED_STATEMENTS=False)
def test_off_it_runs_as_written():
    with CaptureQueriesContext(connection) as queries:
        assert run(ADD, a=2, b=3) == (5, 3, 2)
    assert [q["sql"] for q in queries] == ["SELECT 2 + 3, 7 % 4, 2"]
