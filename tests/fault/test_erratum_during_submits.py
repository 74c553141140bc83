"""An erratum confirmed while attempts are being submitted leaves every score equal to grading from scratch."""
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fault import rows
from tests.fault.learner import TRANSPORT_ERRORS, Learner
from tests.fault.scoring import grade_from_scratch, stored_grade
from tests.fault.servers import PROJECT, SNIPPET_PREAMBLE, parse_emitted, run_snippet

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]

LEARNERS = [f"learner{n}" for n in range(6, 20)]
SUBMITTED_BEFORE = 4  # finished before the confirmation: the regrade must reach them

OPEN_ERRATUM = """
from exams.models import Erratum, Exam
question = Exam.objects.get(code={code!r}).questions.order_by("pk").first()
erratum = Erratum.objects.create(question=question, note="B is the right answer, not A.")
erratum.published_key.set(question.choices.filter(is_correct=True))
emit({{"erratum": erratum.pk, "question": question.pk, "b": question.choices.get(label="B").pk}})
"""

# Waits for "go" on stdin, so the process's start-up (seconds) is not part of the race.
CONFIRM_ON_GO = """
import sys
from exams.models import Erratum
from exams.bank.errata.regrade import erratum_confirm
erratum = Erratum.objects.get(pk={erratum})
print("ready", flush=True)
sys.stdin.readline()
event = erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=[{b}], note=None).event
emit({{"touched": event.attempts_touched, "changed": event.scores_changed}})
"""

WAITING_ON = """
SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND %s = ANY(pg_blocking_pids(pid))
"""


class Confirmation:
    """An instructor confirming the erratum (credit_corrected, key B) from another process, on cue."""

    def __init__(self, env: dict[str, str], erratum: dict):
        self.process = subprocess.Popen(
            [sys.executable, "-c", SNIPPET_PREAMBLE + CONFIRM_ON_GO.format(**erratum)],
            cwd=PROJECT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.out = self.err = ""
        line: list[str] = []
        # readline alone could hang on a process that never starts: read in a thread, bounded.
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(60)
        if not line or line[0].strip() != "ready":
            if self.process.poll() is None:
                self.process.kill()
            self.out, self.err = self.process.communicate(timeout=10)
            raise AssertionError(f"the confirming process did not start:\n{self.err[-3000:]}")

    def go(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def wait(self) -> int:
        self.out, self.err = self.process.communicate(timeout=60)
        return self.process.returncode

    @property
    def deadlocked(self) -> bool:
        return "deadlock detected" in self.err

    def stop(self) -> None:
        """Kill the process if it is still running (a failed or abandoned test)."""
        if self.process.poll() is None:
            self.process.kill()
            self.out, self.err = self.process.communicate(timeout=10)


def _signed_in(server, session_key: str) -> Learner:
    learner = Learner(server.url)
    learner.use_session(session_key)
    return learner


def _wait_for_waiters(cluster, blocker_pid: int, message: str, timeout: float = 15, at_least: int = 1) -> list[int]:
    """Backends waiting on a lock `blocker_pid` holds (polled: pg_stat_activity has no notify)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = [pid for (pid,) in cluster.rows(WAITING_ON, (blocker_pid,))]
        if len(waiting) >= at_least:
            return waiting
        time.sleep(0.05)
    raise AssertionError(message)


def test_an_erratum_confirmed_during_submits_leaves_every_score_as_graded_from_scratch(
    cluster, app_env, start_gunicorn, new_exam, sessions_for
):
    code = new_exam()
    erratum = run_snippet(app_env, OPEN_ERRATUM.format(code=code))
    server = start_gunicorn(workers=2, threads=8)
    sessions = sessions_for(LEARNERS)
    rng = random.Random(20260)

    # Started one after the other: simultaneous first draws of a fresh exam are the next file's
    # subject (test_concurrent_starts.py), not this one's.
    mocks = []
    for name in LEARNERS:
        learner = _signed_in(server, sessions[name])
        mocks.append((learner, learner.start_mock(code)))

    def answer(index_and_mock):
        """Half pick the published key A on the erratum question, half the corrected B."""
        index, (learner, attempt_id) = index_and_mock
        for position, slot in rows.slots(cluster, attempt_id).items():
            if slot.question_id == erratum["question"]:
                choice = slot.position_of_label("A" if index % 2 else "B")
            else:
                choice = slot.right_position() if (index + position) % 3 else slot.wrong_position()
            reply = learner.save(attempt_id, position, [choice])
            assert reply.status == 200, f"attempt {attempt_id} save {position}: {reply.status}"

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(answer, enumerate(mocks), timeout=180))
    for learner, attempt_id in mocks[:SUBMITTED_BEFORE]:
        assert learner.submit(attempt_id).status == 302

    racing = mocks[SUBMITTED_BEFORE:]
    start = threading.Barrier(len(racing) + 1, timeout=30)

    def submit(mock):
        learner, attempt_id = mock
        start.wait()
        # Spread the submits over the moment of the confirmation.
        time.sleep(rng.uniform(0, 0.4))
        try:
            return learner.submit(attempt_id).status
        except TRANSPORT_ERRORS as error:
            return f"{type(error).__name__}: {error}"

    confirmation = Confirmation(app_env, erratum)
    try:
        with ThreadPoolExecutor(max_workers=len(racing)) as pool:
            statuses = pool.map(submit, racing, timeout=120)
            start.wait()
            time.sleep(0.1)
            confirmation.go()
            statuses = list(statuses)
        returncode = confirmation.wait()
    finally:
        confirmation.stop()
    # The lock-order deadlock pinned by the next test picks a victim: the confirmation or
    # one racing submit. Each side then does what a person would, once: try again. Any
    # other failure fails this test.
    deadlocks = []
    if returncode != 0 and confirmation.deadlocked:
        deadlocks.append("confirmation")
        confirmation = Confirmation(app_env, erratum)
        try:
            confirmation.go()
            returncode = confirmation.wait()
        finally:
            confirmation.stop()
    assert returncode == 0, f"erratum_confirm failed:\n{confirmation.err[-3000:]}"
    assert set(statuses) <= {302, 500}, f"submits racing the confirmation: {statuses}"
    failed_submits = [mock for mock, status in zip(racing, statuses) if status == 500]
    assert len(failed_submits) <= server.log_text().count("deadlock detected"), (
        f"submits failed for another reason than the deadlock: {statuses}\n{server.log_tail(40)}"
    )
    for learner, attempt_id in failed_submits:
        deadlocks.append(f"submit of attempt {attempt_id}")
        assert learner.submit(attempt_id).status == 302, f"attempt {attempt_id}: the second submit failed too"
    assert cluster.rows("SELECT status, policy FROM exams_erratum WHERE id = %s", (erratum["erratum"],)) == [
        ("confirmed", "credit_corrected")
    ]
    key = cluster.rows("SELECT id FROM exams_choice WHERE question_id = %s AND is_correct", (erratum["question"],))
    assert key == [(erratum["b"],)], f"the corrected key must be B alone, got {key}"
    wrong = {}
    for _, attempt_id in mocks:
        status, _ = rows.attempt_status(cluster, attempt_id)
        expected, stored = grade_from_scratch(cluster, attempt_id), stored_grade(cluster, attempt_id)
        if status != "submitted" or stored != expected:
            wrong[attempt_id] = (status, stored, expected)
    assert not wrong, f"attempts whose stored grade is not the grade from scratch (status, stored, expected): {wrong}"
    assert deadlocks == [], f"the confirmation and the submits deadlocked: {deadlocks}"
    print(f"regrade: {parse_emitted(confirmation.out)}; racing submits: {statuses}")


# Where the submit is stopped: before grading takes its share lock on the questions (reading
# the picks), or after (recording the reviews on the learner's cards once graded).
STOPS = {
    "before its share lock": "exams_responsechoice",
    "after its share lock": "exams_reviewcard",
}


@pytest.mark.parametrize("stop", list(STOPS))
def test_a_submit_in_flight_when_the_erratum_is_confirmed_does_not_deadlock(
    cluster, app_env, start_gunicorn, new_exam, sessions_for, stop
):
    """The interleavings a race may miss. The submit has locked its attempt when the
    confirmation locks the question. Stopped before grading share-locks its questions, the
    submit must wait for the confirmation and grade by the new key; stopped after, the
    confirmation must wait for the submit and then regrade it. Either way, no deadlock."""
    code = new_exam()
    erratum = run_snippet(app_env, OPEN_ERRATUM.format(code=code))
    server = start_gunicorn(workers=2, threads=4)
    learner = _signed_in(server, sessions_for(["learner20"])["learner20"])
    attempt_id = learner.start_mock(code)
    for position, slot in rows.slots(cluster, attempt_id).items():
        # B on the erratum question: wrong by the published key, so grading schedules it for review.
        choice = slot.position_of_label("B") if slot.question_id == erratum["question"] else slot.right_position()
        assert learner.save(attempt_id, position, [choice]).status == 200

    submitted: dict[str, object] = {}

    def submit():
        try:
            submitted["status"] = learner.submit(attempt_id).status
        except TRANSPORT_ERRORS as error:
            submitted["error"] = error

    submitter = threading.Thread(target=submit, name="submit")
    confirmation = Confirmation(app_env, erratum)
    try:
        with cluster.connect() as holder:
            holder.execute(f"LOCK TABLE {STOPS[stop]} IN ACCESS EXCLUSIVE MODE")
            submitter.start()
            (submit_pid,) = _wait_for_waiters(cluster, holder.info.backend_pid, "the submit never reached its grading")
            confirmation.go()
            if stop == "after its share lock":
                _wait_for_waiters(cluster, submit_pid, "the confirmation never waited for the graded attempt")
            else:
                # The confirmation holds the question and reads the picks, held back like the submit.
                _wait_for_waiters(
                    cluster, holder.info.backend_pid, "the confirmation never started",
                    at_least=2,
                )
            holder.rollback()
        submitter.join(timeout=60)
        returncode = confirmation.wait()
    finally:
        confirmation.stop()
        if submitter.ident is not None:
            submitter.join(timeout=60)
    assert not submitter.is_alive(), "the submit never answered"
    assert returncode == 0, f"erratum_confirm failed:\n{confirmation.err[-1500:]}"
    assert submitted.get("status") == 302, f"the submit failed: {submitted}\n{server.log_tail(30)}"
    assert stored_grade(cluster, attempt_id) == grade_from_scratch(cluster, attempt_id)
