"""A job outlives its worker: a real `manage.py worker` killed with SIGKILL mid-import leaves
its job running; once its lease runs out a worker that starts queues it again (once), with
its django-tasks-db row, and a second kill fails it "interrupted twice". Nothing is ever
half-applied (the attack: a killed worker's import read "running" forever and blocked
every new import of that exam)."""
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.tasks import TaskResultStatus
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from exams.bank.admin_imports import IMPORT_JOB
from exams.models import Question
from exams.tasks import import_questions
from jobs.models import Job, JobStatus
from jobs.services import INTERRUPTED_TWICE, job_enqueue, job_reclaim_interrupted, job_run, target_of
from tests.factories import DomainFactory, exam_with_bank

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True, databases=["default", "jobs"])]
# Short enough for a test, in the ratio the defaults keep (15 s beats, a 60 s lease).
LEASE, HEARTBEAT = 3, 1
COUNT = 8000


def worker_env() -> dict:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return {**os.environ, "DATABASE_URL": url, "DATABASE_POOL": "0",
            "JOB_LEASE_SECONDS": str(LEASE), "JOB_HEARTBEAT_SECONDS": str(HEARTBEAT)}


def worker(*extra: str, **kwargs):
    command = [sys.executable, "manage.py", "worker", "--no-startup-delay", "--no-reload", "--interval", "0.2", *extra]
    return subprocess.Popen(command, cwd=ROOT, env=worker_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def kill_mid_job(job: Job, *, run: int) -> None:
    """Start a worker, wait until it is inside the job's work and has renewed its lease, kill -9 it."""
    process = worker()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.status != JobStatus.QUEUED and job.runs == run:
                assert job.status == JobStatus.RUNNING, (job.status, job.error)
                if job.heartbeat_at and job.heartbeat_at > job.started_at and job.done > 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the worker never got inside the job")
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and 0 < job.done < COUNT, "killed mid-import"
    assert not Question.objects.filter(title__startswith="K").exists(), "nothing half-applied"


def run_due_tasks() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "worker", "--batch", "--no-startup-delay", "--no-reload"],
        cwd=ROOT, env=worker_env(), capture_output=True, text=True, timeout=180,
    )


def exam_to_import_into():
    exam = exam_with_bank()
    DomainFactory(exam=exam, name="Data", order=9)
    return exam


def queue_import(exam) -> Job:
    text = "$CATEGORY: $course$/top/Data\n\n" + "\n\n".join(f"::K{n}::Killed question {n}?{{=a ~b ~c}}" for n in range(COUNT))
    return job_enqueue(
        kind=IMPORT_JOB, target=target_of(exam), title=f"Import {COUNT}", task=import_questions, total=COUNT,
        payload={"exam": exam.pk, "format": "gift", "default_domain": None, "skip_unsupported": False,
                 "filename": "k.gift", "text": text},
    )


def task_rows(job: Job):
    return DBTaskResult.objects.filter(args_kwargs__kwargs__job_id=job.pk)


def test_a_job_whose_worker_was_killed_is_retried_once_and_finishes(database_tasks):
    exam = exam_to_import_into()
    job = queue_import(exam)
    kill_mid_job(job, run=1)
    assert task_rows(job).get().status == TaskResultStatus.RUNNING, "the dead worker's task row"
    # Before the lease runs out, the job is left alone: its worker may be alive.
    assert job_reclaim_interrupted() == [] and Job.objects.get(pk=job.pk).status == JobStatus.RUNNING
    time.sleep(LEASE + 0.5)

    finished = run_due_tasks()

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert f"Job #{job.pk} (Import {COUNT}) lost its worker: queued." in finished.stdout
    job.refresh_from_db()
    assert (job.status, job.runs, job.done, job.error) == (JobStatus.SUCCEEDED, 2, COUNT, "")
    assert job.retried_at is not None and job.lease_until is None
    assert Question.objects.filter(exam=exam, title__startswith="K").count() == COUNT, "applied once"
    # django-tasks-db's row followed: the same row ran again and succeeded.
    row = task_rows(job).get()
    assert row.status == TaskResultStatus.SUCCESSFUL and len(row.worker_ids) == 2


def test_a_job_interrupted_twice_fails_and_frees_its_exam(database_tasks, client):
    exam = exam_to_import_into()
    job = queue_import(exam)
    kill_mid_job(job, run=1)
    time.sleep(LEASE + 0.5)
    # The next worker queues it again at its start and takes it: killed again.
    kill_mid_job(job, run=2)
    assert job.retried_at is not None
    time.sleep(LEASE + 0.5)

    finished = run_due_tasks()

    assert finished.returncode == 0, finished.stdout + finished.stderr
    job.refresh_from_db()
    assert (job.status, job.runs, job.error, job.payload) == (JobStatus.FAILED, 2, INTERRUPTED_TWICE, {})
    assert not Question.objects.filter(title__startswith="K").exists()
    row = task_rows(job).get()
    assert row.status == TaskResultStatus.FAILED and row.exception_class_path == "jobs.services.JobInterrupted"
    # The exam is free for a new import.
    assert queue_import(exam).status == JobStatus.QUEUED
    # The admin says what happened.
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123456")
    client.force_login(admin)
    listing = client.get(reverse("admin:jobs_job_changelist")).content.decode()
    assert "(interrupted, retried at " in listing
    page = client.get(reverse("admin:jobs_job_change", args=[job.pk])).content.decode()
    assert "Interrupted, retried at" in page and "Interrupted twice" in page


def rename_then_lose_the_lease(*, job, progress) -> str:
    """Renames the exam, then (from another connection, as another worker would) the job's
    lease runs out and it is reclaimed while this run is still inside its transaction."""
    from exams.models import Exam

    Exam.objects.filter(pk=job.payload["exam"]).update(title="Renamed")

    def another_worker():
        try:
            Job.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
            job_reclaim_interrupted()
        finally:
            connection.close()

    thread = threading.Thread(target=another_worker)
    thread.start()
    thread.join()
    return "Renamed the exam."


def test_a_run_whose_job_was_reclaimed_meanwhile_rolls_its_work_back():
    """A worker that froze rather than died must not apply work that is being run again."""
    exam = exam_with_bank(title="Old")
    job = Job.objects.create(kind="rename", target=target_of(exam), title="Rename", payload={"exam": exam.pk})
    job_run(job_id=job.pk, work=rename_then_lose_the_lease)
    job.refresh_from_db()
    # Run without a task backend's row, nothing could run it again, so the reclaim failed it.
    assert job.status == JobStatus.FAILED and "no task was left to run it again" in job.error
    exam.refresh_from_db()
    assert exam.title == "Old", "the frozen run's work was rolled back"
