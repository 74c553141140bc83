"""Locks between regrades, gradings and draws, exercised with real PostgreSQL transactions in threads.

Each test pauses one transaction at the point where the other used to interfere, and
checks the outcome: no lost update, no deadlock.
"""
import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from exams.bank.errata.regrade import erratum_confirm
from exams.models import Attempt, AttemptMode, Question, QuestionVersion, Response
from exams.room import services
from tests.exams.bank.errata.test_regrade import (
    backdate,
    choice_ids,
    finished_attempt,
    make_bank,
    report,
    start_attempt,
)
from tests.factories import UserFactory


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_regrades_sharing_an_attempt_lose_no_update():
    """Confirmations on two questions of one attempt: the second waits for the first (one
    regrade per exam at a time) instead of writing back counts computed before it."""
    learner = UserFactory(username="shared")
    exam, (q, q2) = make_bank(questions=2)
    attempt = finished_attempt(user=learner, exam=exam, answers={q: "A", q2: "A"})
    backdate(attempt)
    assert Attempt.objects.get(pk=attempt.pk).right_count == 2
    first, second = report(q), report(q2)
    computed, other_done = threading.Event(), threading.Event()
    errors: list = []

    def pause_after_grades(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if "regradechange" in sql and sql.lstrip().upper().startswith("INSERT"):
            computed.set()
            other_done.wait(timeout=5)
        return result

    def confirm_second() -> None:
        try:
            with connection.execute_wrapper(pause_after_grades):
                erratum_confirm(erratum=second, policy="credit_corrected", corrected_choice_ids=choice_ids(q2, "B"))
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    def confirm_first() -> None:
        try:
            erratum_confirm(erratum=first, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"))
        except Exception as exc:
            errors.append(exc)
        finally:
            other_done.set()
            connection.close()

    t2 = threading.Thread(target=confirm_second)
    t2.start()
    assert computed.wait(timeout=20)
    t1 = threading.Thread(target=confirm_first)
    t1.start()
    t1.join(timeout=20)
    t2.join(timeout=20)
    assert not errors, errors

    # Both answers are A, both keys are now B: the responses say 0 of 2.
    assert list(Response.objects.filter(attempt=attempt).values_list("is_correct", flat=True)) == [False, False]
    stored = Attempt.objects.get(pk=attempt.pk)
    assert (stored.right_count, stored.total_count, stored.passed) == (0, 2, False), (
        stored.right_count, stored.total_count, stored.score,
    )


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_last_check_and_a_draw_of_two_edited_questions_do_not_deadlock():
    """The last practice check grades the whole session: it share-locks every question of
    the session up front, in id order, so a draw locking two of them cannot deadlock it."""
    learner = UserFactory(username="practising")
    exam, (qa, qb) = make_bank(questions=2)
    attempt = start_attempt(user=learner, exam=exam, answers={qa: "A", qb: "A"}, mode=AttemptMode.PRACTICE)
    Response.objects.filter(attempt=attempt, question=qa).update(checked_at=timezone.now(), is_correct=True)
    # An instructor edits both questions: the next draw must make new versions, so it locks them.
    for q in (qa, qb):
        Question.objects.filter(pk=q.pk).update(stem=q.stem + " (edited)")

    shared, errors = threading.Event(), []

    def pause_after_first_share(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if "FOR SHARE" in sql and not shared.is_set():
            shared.set()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # until the draw waits on our share lock
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock' AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"
                    )
                    if cursor.fetchone()[0]:
                        break
                time.sleep(0.05)
        return result

    def check_last() -> None:
        try:
            with connection.execute_wrapper(pause_after_first_share), transaction.atomic():
                row = Attempt.objects.select_for_update().select_related("exam", "user").get(pk=attempt.pk)
                slot = Response.objects.prefetch_related("picks").get(attempt=attempt, question=qb)
                services.attempt_check(attempt=row, response=slot)
        except Exception as exc:
            errors.append(("check", exc))
        finally:
            connection.close()

    def draw() -> None:
        try:
            assert shared.wait(timeout=10)
            with transaction.atomic():
                QuestionVersion.objects.current_for(
                    Question.objects.filter(pk__in=[qa.pk, qb.pk]).prefetch_related("choices")
                )
        except Exception as exc:
            errors.append(("draw", exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=check_last), threading.Thread(target=draw)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
