"""Learners starting the first mocks of a fresh exam at the same moment (a class starting together) all get one."""
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fault.learner import TRANSPORT_ERRORS, Learner

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]

CLASS = [f"learner{n}" for n in range(1, 5)]
# Draws waiting on a lock, directly on the holder or behind another draw (the questions'
# row locks make them queue behind the first).
WAITING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> %s
"""


def test_simultaneous_first_mocks_of_a_fresh_exam_all_start(cluster, start_gunicorn, new_exam, sessions_for):
    code = new_exam()
    server = start_gunicorn(workers=2, threads=4)
    sessions = sessions_for(CLASS)
    learners = []
    for name in CLASS:
        learner = Learner(server.url)
        learner.use_session(sessions[name])
        learner.csrf_token()  # fetched now, so the starts below are one request each
        learners.append(learner)

    def start(learner):
        try:
            reply = learner.post(f"/exams/{code}/mock/")
        except TRANSPORT_ERRORS as error:
            return f"{type(error).__name__}: {error}"
        return reply.status, reply.location

    with cluster.connect() as holder:
        # Line the draws up where they look for existing versions, then let them go together.
        holder.execute("LOCK TABLE exams_questionversion IN ACCESS EXCLUSIVE MODE")
        with ThreadPoolExecutor(max_workers=len(learners)) as pool:
            outcomes = pool.map(start, learners, timeout=60)
            try:
                deadline = time.monotonic() + 20
                while cluster.rows(WAITING, (holder.info.backend_pid,))[0][0] < len(learners):
                    assert time.monotonic() < deadline, "the draws never reached the question versions"
                    time.sleep(0.05)
            finally:
                holder.rollback()
            outcomes = list(outcomes)

    started = [o for o in outcomes if isinstance(o, tuple) and o[0] == 302 and re.fullmatch(r"/attempts/\d+/q/1/", o[1])]
    assert started == outcomes, f"every learner must get a mock: {outcomes}"
    counts = cluster.rows(
        "SELECT a.id, count(r.id) FROM exams_attempt a JOIN exams_exam x ON x.id = a.exam_id "
        "JOIN exams_response r ON r.attempt_id = a.id WHERE x.code = %s GROUP BY a.id",
        (code,),
    )
    assert sorted(n for _, n in counts) == [10] * len(learners), f"attempts and their slots: {counts}"
    versions = cluster.rows(
        "SELECT v.question_id, count(*) FROM exams_questionversion v JOIN exams_question q ON q.id = v.question_id "
        "JOIN exams_exam x ON x.id = q.exam_id WHERE x.code = %s GROUP BY v.question_id HAVING count(*) > 1",
        (code,),
    )
    assert versions == [], f"questions given more than one version by simultaneous draws: {versions}"
