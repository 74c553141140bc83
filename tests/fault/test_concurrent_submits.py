"""Twenty submits of one attempt at once (a double click times ten, several tabs) grade it once."""
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fault import rows
from tests.fault.learner import TRANSPORT_ERRORS
from tests.fault.scoring import grade_from_scratch, stored_grade

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]

SUBMITS = 20

# Every UPDATE of a finished attempt row is logged, so a second grading cannot hide.
FINISH_LOG = """
CREATE TABLE IF NOT EXISTS fault_finish_log (attempt_id bigint, old_status text, new_status text, at timestamptz);
CREATE OR REPLACE FUNCTION fault_log_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fault_finish_log VALUES (NEW.id, OLD.status, NEW.status, clock_timestamp());
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER fault_finish_log AFTER UPDATE ON exams_attempt
    FOR EACH ROW WHEN (NEW.status <> 'in_progress') EXECUTE FUNCTION fault_log_finish();
"""
DROP_FINISH_LOG = "DROP TRIGGER IF EXISTS fault_finish_log ON exams_attempt; DROP TABLE IF EXISTS fault_finish_log;"


@pytest.fixture
def finish_log(cluster):
    with cluster.connect(autocommit=True) as connection:
        connection.execute(FINISH_LOG)
    yield
    with cluster.connect(autocommit=True) as connection:
        connection.execute(DROP_FINISH_LOG)


def test_twenty_concurrent_submits_grade_the_attempt_once(cluster, start_gunicorn, new_exam, log_in, finish_log):
    code = new_exam()
    # Threads let all twenty requests reach the database at once, not two at a time.
    server = start_gunicorn(workers=2, threads=10)
    learner = log_in(server, "learner2")
    attempt_id = learner.start_mock(code)
    for position, slot in rows.slots(cluster, attempt_id).items():
        choice = slot.right_position() if position <= 7 else slot.wrong_position()
        assert learner.save(attempt_id, position, [choice]).status == 200, f"save {position}"

    start = threading.Barrier(SUBMITS, timeout=30)

    def submit(_):
        start.wait()
        try:
            reply = learner.submit(attempt_id)
        except TRANSPORT_ERRORS as error:
            return f"{type(error).__name__}: {error}"
        return (reply.status, reply.location)

    with ThreadPoolExecutor(max_workers=SUBMITS) as pool:
        outcomes = list(pool.map(submit, range(SUBMITS), timeout=120))

    results_redirect = (302, f"/attempts/{attempt_id}/results/")
    assert outcomes == [results_redirect] * SUBMITS, f"every submit must redirect to the results: {outcomes}"
    log = cluster.rows("SELECT old_status, new_status FROM fault_finish_log WHERE attempt_id = %s", (attempt_id,))
    assert log == [("in_progress", "submitted")], f"graded more than once (attempt updates after finishing: {log})"
    expected = grade_from_scratch(cluster, attempt_id)
    assert (expected.right, expected.total, expected.passed) == (7, 10, True)
    assert stored_grade(cluster, attempt_id) == expected, "the stored grade differs from grading from scratch"
    ((published,),) = cluster.rows("SELECT published_score FROM exams_attempt WHERE id = %s", (attempt_id,))
    assert published == expected.score
    assert learner.results(attempt_id).status == 200
