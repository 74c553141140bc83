"""PostgreSQL restarted in the middle of a mock: confirmed answers survive, saves resume on their own."""
import threading
import time

import pytest

from tests.fault import rows

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]


def test_answers_survive_a_database_restart_and_saves_resume(cluster, start_gunicorn, new_exam, log_in):
    code = new_exam()
    server = start_gunicorn()
    learner = log_in(server, "learner4")
    attempt_id = learner.start_mock(code)
    slots = rows.slots(cluster, attempt_id)
    wanted = {p: slot.wrong_position() if p % 4 == 0 else slot.right_position() for p, slot in slots.items()}
    outcomes = {}

    for position in (1, 2, 3):
        reply = learner.save(attempt_id, position, [wanted[position]])
        assert reply.status == 200, f"save {position} before the restart: {reply.status}"

    # 1. Restart while the learner goes on answering: a save in flight may fail, and is
    #    retried with the page's backoff until confirmed.
    restart_errors: list[BaseException] = []

    def restart():
        try:
            cluster.restart()
        except BaseException as error:  # reported in the test's own thread below
            restart_errors.append(error)

    restarter = threading.Thread(target=restart, name="pg-restart")
    restarter.start()
    try:
        for position in (4, 5, 6):
            outcomes[position] = learner.save_with_retry(attempt_id, position, [wanted[position]])
    finally:
        restarter.join(timeout=90)
    assert not restarter.is_alive(), "pg_ctl restart did not finish in 90 s"
    assert not restart_errors, f"pg_ctl restart failed: {restart_errors[0]}"

    # 2. Restart again with nothing in flight: every pooled connection of both workers is
    #    now dead, and the next saves must still go through (the pool checks and replaces them).
    began = time.monotonic()
    cluster.restart()
    print(f"pg_ctl restart took {time.monotonic() - began:.1f} s")
    for position in (7, 8, 9, 10):
        outcomes[position] = learner.save_with_retry(attempt_id, position, [wanted[position]])

    unsaved = {p: (o.failures, o.reply and o.reply.status) for p, o in outcomes.items() if not o.saved}
    assert not unsaved, f"saves never confirmed within the page's retry budget: {unsaved}"
    stored = rows.picks(cluster, attempt_id)
    expected = {position: [slots[position].choice_order[choice - 1]] for position, choice in wanted.items()}
    assert stored == expected, f"answers lost across the restarts: stored {stored}, confirmed {expected}"

    reply = learner.submit(attempt_id)
    assert reply.status == 302, f"submit after the restarts: {reply.status}"
    ((right,),) = cluster.rows("SELECT right_count FROM exams_attempt WHERE id = %s", (attempt_id,))
    assert right == sum(1 for position in wanted if position % 4), "graded with answers other than those confirmed"
    print("each save: seconds to confirmation, failures before it:",
          {p: (round(o.seconds, 1), o.failures) for p, o in outcomes.items()})
