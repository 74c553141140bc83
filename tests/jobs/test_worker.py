"""A real `manage.py worker` process runs a queued import job, the minutely finalize task and statistics refreshes."""
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.tasks import TaskResultStatus
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from exams.bank.admin_imports import IMPORT_JOB
from exams.models import Attempt, AttemptStatus, Question
from exams.room.services import attempt_start
from exams.tasks import finalize_expired_attempts, import_questions
from jobs.models import Job, JobStatus
from jobs.services import job_enqueue, target_of
from tests.factories import DomainFactory, exam_with_bank

ROOT = Path(__file__).resolve().parents[2]
# The worker and the test share the database, so the test commits what the worker reads.
pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True, databases=["default", "jobs"])]


def run_worker() -> subprocess.CompletedProcess:
    """`manage.py worker --batch`: run every task that is due, then exit (bounded wait)."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {**os.environ, "DATABASE_URL": url, "DATABASE_POOL": "0"}
    return subprocess.run(
        [sys.executable, "manage.py", "worker", "--batch", "--no-startup-delay", "--no-reload"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_the_worker_runs_a_large_import_and_finishes_expired_attempts(database_tasks, learner):
    exam = exam_with_bank()
    attempt = attempt_start(user=learner, exam=exam).attempt
    DomainFactory(exam=exam, name="Data", order=9)
    Attempt.objects.filter(pk=attempt.pk).update(
        started_at=timezone.now() - timedelta(hours=2), deadline=timezone.now() - timedelta(minutes=5)
    )
    count = 600
    text = "$CATEGORY: $course$/top/Data\n\n" + "\n\n".join(f"::W{n}::Worker question {n}?{{=a ~b ~c}}" for n in range(count))
    job = job_enqueue(
        kind=IMPORT_JOB, target=target_of(exam), title="Import 600", task=import_questions, total=count,
        payload={"exam": exam.pk, "format": "gift", "default_domain": None, "skip_unsupported": False,
                 "filename": "w.gift", "text": text},
    )
    assert Job.objects.get(pk=job.pk).status == JobStatus.QUEUED, "nothing runs until a worker does"

    finished = run_worker()

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "Scheduled exams.tasks.finalize_expired_attempts." in finished.stdout
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == (JobStatus.SUCCEEDED, count, count, "")
    assert job.message.startswith(f"Created {count} questions in {exam.code}.")
    assert Question.objects.filter(exam=exam, title__startswith="W").count() == count
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.EXPIRED
    # The finalize run scheduled the next one a minute on, and only one.
    waiting = DBTaskResult.objects.filter(task_path=finalize_expired_attempts.module_path, status=TaskResultStatus.READY)
    assert waiting.count() == 1
    assert timedelta(seconds=50) < waiting.get().run_after - timezone.now() <= timedelta(seconds=60)
    # A second worker start does not start a second chain.
    assert "Scheduled" not in run_worker().stdout
    assert waiting.count() == 1


def test_the_worker_refreshes_statistics_behind_a_running_refresh_and_after_an_import(database_tasks, instructor):
    """The button's refresh waits behind one running elsewhere; an import the worker runs asks for another."""
    from django.test import Client

    from exams.models import ExamStatistic, ItemStatistic
    from exams.statistics.tasks import REFRESH_JOB, refresh_statistics

    exam = exam_with_bank()
    DomainFactory(exam=exam, name="Data", order=9)
    ahead = Job.objects.create(
        kind=REFRESH_JOB, target=target_of(exam), title="Refresh elsewhere", status=JobStatus.RUNNING, queues_behind=True,
    )
    client = Client()
    client.force_login(instructor)
    client.post(reverse("admin:exams_exam_refresh_statistics"), {"exam": exam.pk})
    behind = Job.objects.get(kind=REFRESH_JOB, status=JobStatus.QUEUED)

    finished = run_worker()

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "Scheduled exams.statistics.tasks.refresh_statistics_nightly." in finished.stdout
    behind.refresh_from_db()
    assert behind.status == JobStatus.QUEUED, "it waits while the other refresh runs"
    assert not ExamStatistic.objects.filter(exam=exam).exists()
    assert Job.objects.filter(kind=REFRESH_JOB, target=target_of(exam)).count() == 2, "the nightly run joined it"

    # The other refresh ends; a little later (moved on here, not waited for) the queued one runs.
    Job.objects.filter(pk=ahead.pk).update(status=JobStatus.SUCCEEDED)
    DBTaskResult.objects.filter(task_path=refresh_statistics.module_path, status=TaskResultStatus.READY).update(
        run_after=timezone.now()
    )
    assert run_worker().returncode == 0
    behind.refresh_from_db()
    assert behind.status == JobStatus.SUCCEEDED, behind.error
    assert ExamStatistic.objects.filter(exam=exam).count() == 2

    # An import run by the worker asks for a refresh, which the same worker run does.
    text = "$CATEGORY: $course$/top/Data\n\n" + "\n\n".join(f"::R{n}::Refresh question {n}?{{=a ~b ~c}}" for n in range(3))
    job_enqueue(
        kind=IMPORT_JOB, target=target_of(exam), title="Import 3", task=import_questions, total=3,
        payload={"exam": exam.pk, "format": "gift", "default_domain": None, "skip_unsupported": False,
                 "filename": "r.gift", "text": text},
    )
    assert run_worker().returncode == 0
    latest = Job.objects.filter(kind=REFRESH_JOB, target=target_of(exam)).order_by("-created_at", "-id").first()
    assert latest != behind and latest.status == JobStatus.SUCCEEDED
    assert ItemStatistic.objects.filter(question__exam=exam, first_mock_only=False).count() == exam.questions.count()
