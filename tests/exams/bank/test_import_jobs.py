"""Imports of more than 500 questions run as a background job, with progress on the import page."""
import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from exams.bank.admin_imports import BACKGROUND_IMPORT_OVER, IMPORT_JOB, SESSION_KEY
from exams.models import Question
from jobs.models import Job, JobStatus
from jobs.services import target_of
from tests.conftest import JOB_DATABASES
from tests.exams.bank.test_admin_imports import IMPORT_URL, upload
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(databases=JOB_DATABASES)


def bank(count: int, *, bad_at: int | None = None) -> bytes:
    # The question at bad_at has no key.
    questions = [f"::Q{n}::Question {n}?{{{'~' if n == bad_at else '='}right ~wrong ~other}}" for n in range(count)]
    return ("$CATEGORY: $course$/top/Data\n\n" + "\n\n".join(questions)).encode()


def confirm(client, exam, content: bytes):
    preview = client.get(upload(client, exam, content).url)
    return client.post(preview.context["confirm_url"], follow=True)


def test_an_import_of_more_than_500_questions_runs_as_a_job(instructor_client, instructor, exam):
    count = BACKGROUND_IMPORT_OVER + 1

    page = confirm(instructor_client, exam, bank(count))

    assert page.redirect_chain[-1][0] == IMPORT_URL
    job = Job.objects.get(kind=IMPORT_JOB)
    assert (job.target, job.status, job.created_by) == (target_of(exam), JobStatus.SUCCEEDED, instructor)
    assert (job.done, job.total) == (count, count), "progress counts questions, not steps"
    assert job.message == f"Created {count} questions in GENM. Data: {count}"
    assert Question.objects.filter(exam=exam).count() == count
    html = page.content.decode()
    assert "being imported in the background" in html
    assert f"Import {count} questions from bank.gift into GENM" in html and job.message in html
    assert SESSION_KEY not in instructor_client.session
    # The job's own page, and its progress partial: a finished job tells htmx to stop polling.
    assert instructor_client.get(reverse("admin:jobs_job_change", args=[job.pk])).status_code == 200
    progress = instructor_client.get(reverse("admin:jobs_job_progress", args=[job.pk]), headers={"HX-Request": "true"})
    assert progress.status_code == 286
    assert "Succeeded" in progress.content.decode() and "hx-get" not in progress.content.decode()


def test_an_import_of_500_stays_in_the_request(instructor_client, exam):
    page = confirm(instructor_client, exam, bank(BACKGROUND_IMPORT_OVER))

    assert "Created 500 questions in GENM" in page.content.decode()
    assert not Job.objects.exists()


def test_a_large_import_with_an_error_fails_and_imports_nothing(instructor_client, exam):
    confirm(instructor_client, exam, bank(BACKGROUND_IMPORT_OVER + 10, bad_at=7))

    job = Job.objects.get(kind=IMPORT_JOB)
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("Nothing was imported into GENM: 1 error (listed by line).")
    assert "line 17" in job.error.lower()
    assert job.error.endswith("Nothing was changed.")
    assert not Question.objects.exists()
    page = instructor_client.get(IMPORT_URL).content.decode()
    assert "Failed" in page and "Nothing was changed." in page


def test_a_second_large_import_into_the_exam_waits_for_the_first(instructor_client, exam):
    running = Job.objects.create(kind=IMPORT_JOB, target=target_of(exam), title="Import 900 questions", status=JobStatus.RUNNING, total=1800, done=600)

    page = confirm(instructor_client, exam, bank(BACKGROUND_IMPORT_OVER + 1))

    job_url = reverse("admin:jobs_job_change", args=[running.pk])
    assert page.redirect_chain[-1][0] == job_url
    html = page.content.decode()
    assert f"Nothing was started: “Import 900 questions” is already running (job #{running.pk})" in html
    # The running job's page polls its progress.
    assert f'hx-get="{reverse("admin:jobs_job_progress", args=[running.pk])}"' in html and "33%" in html
    assert Job.objects.count() == 1 and not Question.objects.exists()
    assert SESSION_KEY in instructor_client.session, "the upload still waits, to confirm once the first is done"
    polled = instructor_client.get(reverse("admin:jobs_job_progress", args=[running.pk]), headers={"HX-Request": "true"})
    body = polled.content.decode()
    assert polled.status_code == 200 and "Running" in body and 'value="600"' in body


def test_job_pages_need_the_view_permission(client, learner_client, exam):
    job = Job.objects.create(kind=IMPORT_JOB, target=target_of(exam), title="Import", status=JobStatus.RUNNING)
    urls = [reverse("admin:jobs_job_change", args=[job.pk]), reverse("admin:jobs_job_progress", args=[job.pk]),
            reverse("admin:jobs_job_changelist")]

    for url in urls:
        assert learner_client.get(url).url.startswith(reverse("admin:login"))
    staff = UserFactory(username="staff", is_staff=True)
    client.force_login(staff)
    assert [client.get(url).status_code for url in urls] == [403, 403, 403]
    staff.user_permissions.add(Permission.objects.get(codename="view_job"))
    assert [client.get(url).status_code for url in urls] == [200, 200, 200]
    assert client.get(reverse("admin:jobs_job_change", args=["nope"])).status_code == 404
