"""The plain answer save (exams.room.saving): what it stores, what it costs, and how it takes turns.

The view tests (test_mock, test_exam_room, test_sessions) hold its behaviour; these hold
its statement count on each database and, on PostgreSQL, its locks against a concurrent
save of the same slot and a concurrent submit.
"""
import re
import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from exams.models import Attempt, AttemptStatus, Response
from exams.room import saving, services
from tests.exams.room.test_mock import HTMX, question_url, start
from tests.factories import exam_with_bank

# The session's load and its user's read.
SESSION_OR_USER = re.compile(r"django_session|auth_user")
PAGE_SAVE = {"answer": "1", "choice": ["2"], "struck_sent": "1", "struck": ["4"], "flag": "on"}


def picks(slot: Response) -> list[int]:
    return sorted(slot.picks.values_list("choice_id", flat=True))


@pytest.mark.django_db
class TestWhatItStores:
    def test_the_pages_save_stores_picks_strike_outs_and_flag_together(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        reply = learner_client.post(question_url(attempt, 2), PAGE_SAVE, headers=HTMX)
        assert reply.status_code == 200 and reply["X-Answer-Saved"] == "1" and reply["X-Slot"] == "2"
        assert "flagged" in reply.content.decode() and "answered" in reply.content.decode()
        slot = attempt.responses.get(position=2)
        assert picks(slot) == [slot.choice_order[1]]
        assert list(slot.strikes.values_list("choice_id", flat=True)) == [slot.choice_order[3]]
        assert slot.flagged and slot.answered_at is not None

    def test_the_same_answer_again_changes_nothing_not_even_when_it_was_answered(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), PAGE_SAVE, headers=HTMX)
        first = attempt.responses.get(position=1).answered_at
        learner_client.post(question_url(attempt, 1), PAGE_SAVE, headers=HTMX)
        assert attempt.responses.get(position=1).answered_at == first

    def test_a_new_strike_out_of_the_picked_choice_removes_the_pick(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "3"}, headers=HTMX)
        learner_client.post(question_url(attempt, 1), {"struck_sent": "1", "struck": "3"}, headers=HTMX)
        slot = attempt.responses.get(position=1)
        assert picks(slot) == [] and slot.answered_at is None

    def test_picking_a_struck_choice_is_refused_by_the_general_path_with_its_reason(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"struck_sent": "1", "struck": "2"}, headers=HTMX)
        reply = learner_client.post(question_url(attempt, 1), {"answer": "1", "choice": "2", "struck_sent": "1", "struck": "2"},
                                    headers=HTMX)
        assert reply.status_code == 422 and "You struck out B" in reply.content.decode()
        assert picks(attempt.responses.get(position=1)) == []

    @pytest.mark.parametrize("choice", ["9", "02", " 1", "0", "a"])
    def test_a_position_the_slot_does_not_have_is_400_and_stores_nothing(self, learner_client, choice):
        attempt = start(learner_client, exam_with_bank())
        reply = learner_client.post(question_url(attempt, 1), {"choice": choice}, headers=HTMX)
        assert reply.status_code == 400
        assert picks(attempt.responses.get(position=1)) == []

    def test_only_plain_saves_are_taken(self):
        from django.http import QueryDict

        assert saving.plain_save(QueryDict("answer=1&choice=1&choice=3&struck_sent=1&struck=2&flag=off&walk=flagged")) == (
            saving.PlainSave(choices=(1, 3), carries_answer=True, struck=(2,), flag="off")
        )
        assert saving.plain_save(QueryDict("flag=toggle")) == saving.PlainSave((), False, None, "toggle")
        for general in ("go=next", "check=1", "strike=2", "choice=1&choice=1", "answer=yes", "flag=maybe", "walk=x", "other=1"):
            assert saving.plain_save(QueryDict(general)) is None, general


@pytest.mark.django_db
def test_a_plain_save_costs_one_statement_on_postgresql_and_a_fixed_few_elsewhere(learner_client):
    attempt = start(learner_client, exam_with_bank())
    # The session settles, the strike-out and the flag are stored: the saves below change the picks.
    learner_client.post(question_url(attempt, 1), PAGE_SAVE | {"choice": ["1"]}, headers=HTMX)
    counts = []
    for choice in ("2", "3"):
        with CaptureQueriesContext(connection) as queries:
            assert learner_client.post(question_url(attempt, 1), PAGE_SAVE | {"choice": [choice]}, headers=HTMX).status_code == 200
        # (SAVEPOINTs are the test's own transaction: in production SQLite's is BEGIN … COMMIT.)
        app = [q["sql"] for q in queries.captured_queries if not SESSION_OR_USER.search(q["sql"]) and "SAVEPOINT" not in q["sql"]]
        counts.append(len(app))
    # Besides: the session and its user, once each; no BEGIN/COMMIT on PostgreSQL.
    others = [q["sql"] for q in queries.captured_queries if q["sql"] not in app and "SAVEPOINT" not in q["sql"]]
    assert len(others) == 2 and "session" in others[0] and "user" in others[1], others
    if connection.vendor == "postgresql":
        assert counts == [1, 1], app
        assert app[0].lstrip().startswith("WITH target AS"), app  # the one statement (prepared: tests/test_prepared.py)
    else:
        # Slot with its attempt and question, picks, strike-outs; delete, insert, stamp.
        assert counts == [6, 6], app


def wait_until_blocked_by(pid: int, timeout: float = 10) -> None:
    """Until some backend waits on a lock the backend `pid` holds."""
    with connection.cursor() as cursor:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", [pid])
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("nothing waited on the lock")


def in_thread(target) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run():
        try:
            outcome.append(target())
        except Exception as exc:  # reported by the test
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_save_that_waited_for_another_save_of_its_slot_reads_it_again(learner):
    """Without the re-read, the waiting save's DELETE would miss the pick committed while it
    waited (its statement reads as of its start) and the slot would hold both answers."""
    attempt = services.attempt_start(user=learner, exam=exam_with_bank()).attempt
    slot = attempt.responses.get(position=1)
    with transaction.atomic():
        held = Response.objects.select_for_update().get(pk=slot.pk)
        attempt.record_answer(response=held, choice_ids=[slot.choice_order[0]])
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        thread, outcome = in_thread(lambda: saving.save_plainly(
            user_id=learner.pk, attempt_id=attempt.pk, position=1,
            save=saving.PlainSave(choices=(3,), carries_answer=True, struck=None, flag=None)))
        wait_until_blocked_by(pid)
    thread.join(timeout=20)
    assert isinstance(outcome[0], saving.Saved), outcome
    assert picks(slot) == [slot.choice_order[2]]


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_save_waiting_on_a_submit_finds_the_attempt_ended_and_stores_nothing(learner):
    """The submit locks the attempt and grades (updating every slot's row); the save waits on
    the attempt's row without holding its slot's, so nobody deadlocks, and then writes nothing."""
    attempt = services.attempt_start(user=learner, exam=exam_with_bank()).attempt
    slot = attempt.responses.get(position=1)
    with transaction.atomic():
        locked = Attempt.objects.select_for_update().select_related("exam").with_clock().get(pk=attempt.pk)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        thread, outcome = in_thread(lambda: saving.save_plainly(
            user_id=learner.pk, attempt_id=attempt.pk, position=1,
            save=saving.PlainSave(choices=(2,), carries_answer=True, struck=None, flag=None)))
        wait_until_blocked_by(pid)
        services.attempt_finish(attempt=locked, expired=False)
    thread.join(timeout=20)
    assert outcome == [None]
    assert Attempt.objects.get(pk=attempt.pk).status == AttemptStatus.SUBMITTED
    assert picks(slot) == []
