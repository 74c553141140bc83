"""Jobs: one active job per kind and target, progress, a failure that changes nothing."""
import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError
from django.tasks import task

from exams.models import ExamStatistic
from jobs.models import Job, JobStatus
from jobs.periodic import schedule_next, start_periodic_tasks
from jobs.services import JobAlreadyActive, JobError, job_enqueue, job_run, target_of
from tests.conftest import JOB_DATABASES
from tests.factories import ExamFactory

# Progress commits on the "jobs" connection while the job's transaction is open.
pytestmark = pytest.mark.django_db(databases=JOB_DATABASES)


def rename_exam(*, job, progress) -> str:
    progress(0, total=2, stage="Renaming")
    ExamFactory._meta.model.objects.filter(pk=job.payload["exam"]).update(title="Renamed")
    progress(1)
    if job.payload.get("fail"):
        raise JobError("The exam refused its new name.")
    if job.payload.get("crash"):
        raise ZeroDivisionError("division by zero")
    return "Renamed the exam."


@task()
def rename_exam_task(*, job_id: int) -> None:
    job_run(job_id=job_id, work=rename_exam)


@task()
def do_nothing_task(*, job_id: int) -> None:
    """Leaves its job queued, as a job waiting for the worker is."""


def test_a_job_runs_and_records_its_outcome(instructor):
    exam = ExamFactory(title="Old")

    job = job_enqueue(
        kind="rename", target=target_of(exam), title="Rename", task=rename_exam_task, payload={"exam": exam.pk}, user=instructor
    )

    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.message) == (JobStatus.SUCCEEDED, 2, 2, "Renamed the exam.")
    assert job.started_at and job.finished_at and job.created_by == instructor
    assert job.payload == {}, "the input is dropped once the job has finished"
    exam.refresh_from_db()
    assert exam.title == "Renamed"


@pytest.mark.parametrize(
    ("flag", "error"),
    [("fail", "The exam refused its new name. Nothing was changed."),
     ("crash", "ZeroDivisionError: division by zero. Nothing was changed.")],
)
def test_a_failed_job_shows_its_error_and_changes_nothing(flag, error):
    exam = ExamFactory(title="Old")

    job = job_enqueue(kind="rename", target=target_of(exam), title="Rename", task=rename_exam_task,
                      payload={"exam": exam.pk, flag: True})

    job.refresh_from_db()
    assert (job.status, job.error, job.message) == (JobStatus.FAILED, error, "")
    exam.refresh_from_db()
    assert exam.title == "Old"


def test_a_second_job_for_the_same_target_is_refused_while_one_is_active():
    exam, other = ExamFactory(), ExamFactory()
    waiting = job_enqueue(kind="rename", target=target_of(exam), title="Rename", task=do_nothing_task)

    with pytest.raises(JobAlreadyActive) as refused:
        job_enqueue(kind="rename", target=target_of(exam), title="Rename again", task=do_nothing_task)

    assert refused.value.job == waiting
    assert str(refused.value) == f"“Rename” is already queued (job #{waiting.pk}): wait for it to finish."
    # Another target, or another kind on the same target, is free.
    job_enqueue(kind="rename", target=target_of(other), title="Rename", task=do_nothing_task)
    job_enqueue(kind="refresh", target=target_of(exam), title="Refresh", task=do_nothing_task)
    # Once the first has finished, the target takes a new job.
    Job.objects.filter(pk=waiting.pk).update(status=JobStatus.SUCCEEDED)
    job_enqueue(kind="rename", target=target_of(exam), title="Rename again", task=do_nothing_task)
    assert Job.objects.filter(kind="rename", target=target_of(exam)).count() == 2


def test_the_database_refuses_two_running_jobs_directly():
    Job.objects.create(kind="k", target="t", title="one", status=JobStatus.RUNNING)
    with pytest.raises(IntegrityError):
        Job.objects.create(kind="k", target="t", title="two", status=JobStatus.QUEUED)


def test_a_job_runs_once_even_if_its_task_is_delivered_twice():
    exam = ExamFactory(title="Old")
    job = job_enqueue(kind="rename", target=target_of(exam), title="Rename", task=rename_exam_task, payload={"exam": exam.pk})

    assert job_run(job_id=job.pk, work=rename_exam) is None
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED


def test_with_the_immediate_backend_a_periodic_task_keeps_no_chain():
    assert schedule_next(do_nothing_task, every=__import__("datetime").timedelta(minutes=1)) is False
    assert start_periodic_tasks() == []


def test_instructors_may_see_jobs_but_not_change_them(instructor):
    group = Group.objects.get(name="Instructors")
    codenames = set(group.permissions.filter(content_type__app_label="jobs").values_list("codename", flat=True))
    assert codenames == {"view_job"}


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True, databases=["default", "jobs"])
def test_progress_is_visible_to_others_while_the_jobs_transaction_is_open():
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    seen = []

    def work(*, job, progress) -> str:
        progress(3, total=10, stage="Halfway")
        with psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"]) as onlooker:
            seen.append(onlooker.execute("SELECT done, total, stage FROM jobs_job WHERE id = %s", [job.pk]).fetchone())
        return "done"

    job = Job.objects.create(kind="k", target="t", title="Watched")
    job_run(job_id=job.pk, work=work)

    assert seen == [(3, 10, "Halfway")]
    assert Job.objects.get(pk=job.pk).done == 10


def test_the_exam_admin_refreshes_statistics_as_a_job(instructor_client):
    from django.urls import reverse

    exam = ExamFactory()
    data = {"action": "refresh_statistics_in_background", "_selected_action": [exam.pk]}

    response = instructor_client.post(reverse("admin:exams_exam_changelist"), data, follow=True)

    job = Job.objects.get(kind="refresh_statistics")
    assert (job.target, job.status, job.done, job.total) == (target_of(exam), JobStatus.SUCCEEDED, 0, 0)  # no questions
    assert job.message == f"Stored the item statistics of 0 questions of {exam.code} over 0 finished mocks; 0 flagged as possibly mis-keyed."
    assert ExamStatistic.objects.filter(exam=exam).count() == 2, "the stored refresh ran"
    assert f"Refresh the item statistics of {exam.code}: succeeded." in response.content.decode()


def test_a_superuser_marks_a_stuck_job_failed_and_the_target_is_free_again(client, instructor):
    from django.urls import reverse

    from tests.factories import UserFactory

    exam = ExamFactory()
    stuck = Job.objects.create(kind="rename", target=target_of(exam), title="Rename", status=JobStatus.RUNNING)
    done = Job.objects.create(kind="rename", target="other", title="Done", status=JobStatus.SUCCEEDED)
    data = {"action": "mark_failed", "_selected_action": [stuck.pk, done.pk]}
    changelist = reverse("admin:jobs_job_changelist")

    client.force_login(instructor)  # may see jobs, not mark them
    assert "mark_failed" not in client.get(changelist).content.decode()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    response = client.post(changelist, data, follow=True)

    assert "Marked 1 queued or running job as failed." in response.content.decode()
    stuck.refresh_from_db()
    assert stuck.status == JobStatus.FAILED and stuck.error.startswith("Marked as failed by root: its worker stopped")
    assert Job.objects.get(pk=done.pk).status == JobStatus.SUCCEEDED
    job_enqueue(kind="rename", target=target_of(exam), title="Rename again", task=do_nothing_task)
