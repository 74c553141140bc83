"""A gunicorn worker killed while it holds a learner's save: the page's retry succeeds, the answer is stored once."""
import os
import signal
import threading
import time

import pytest

from tests.fault import rows
from tests.fault.learner import TRANSPORT_ERRORS

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]

BLOCKED_SAVE = """
SELECT pid, client_port FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND %s = ANY(pg_blocking_pids(pid))
"""


def test_a_worker_killed_mid_save_loses_nothing_and_the_retry_succeeds(cluster, start_gunicorn, new_exam, log_in):
    code = new_exam()
    server = start_gunicorn()
    learner = log_in(server, "learner5")
    attempt_id = learner.start_mock(code)
    slots = rows.slots(cluster, attempt_id)
    assert learner.save(attempt_id, 1, [slots[1].right_position()]).status == 200
    choice = slots[2].wrong_position()

    # Hold the attempt's row lock, so the save below stops inside its worker, mid-transaction.
    with cluster.connect() as holder:
        holder.execute("SELECT id FROM exams_attempt WHERE id = %s FOR UPDATE", (attempt_id,))
        in_flight: dict[str, object] = {}

        def save():
            try:
                in_flight["reply"] = learner.save(attempt_id, 2, [choice])
            except TRANSPORT_ERRORS as error:
                in_flight["error"] = error

        saver = threading.Thread(target=save, name="save-in-flight")
        saver.start()
        try:
            blocked = []
            deadline = time.monotonic() + 15
            while not blocked and time.monotonic() < deadline:
                blocked = cluster.rows(BLOCKED_SAVE, (holder.info.backend_pid,))
                time.sleep(0.05)
            assert len(blocked) == 1, f"the save never reached the row lock: {blocked}\n{server.log_tail()}"
            ((_, client_port),) = blocked
            worker = server.worker_connected_from(client_port)
            assert worker is not None, f"no worker of {server.worker_pids()} owns database port {client_port}"
            os.kill(worker, signal.SIGKILL)
            saver.join(timeout=20)
            assert not saver.is_alive(), "the client never noticed its worker died"
        finally:
            holder.rollback()
            saver.join(timeout=20)

    assert "error" in in_flight, f"the save in flight should have failed with its worker, got {in_flight}"
    fresh = server.wait_for_workers(2, exclude={worker})
    retried = learner.save_with_retry(attempt_id, 2, [choice])
    assert retried.saved, f"the retry after the crash failed: {retried.failures} / {retried.reply}"

    assert rows.picks(cluster, attempt_id) == {
        1: [min(slots[1].key)],
        2: [slots[2].choice_order[choice - 1]],
    }, "the answer must be stored exactly once, and the earlier one kept"
    # The killed worker's database session ended with it: nothing is left waiting or locked.
    leftover = cluster.rows(
        "SELECT pid, state, wait_event_type FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'"
    )
    assert leftover == [], f"sessions still waiting on locks after the crash: {leftover}"
    print(f"killed worker {worker} (client saw {in_flight['error']!r}); workers now {fresh}; "
          f"retry confirmed after {retried.seconds:.1f} s with failures {retried.failures}")
