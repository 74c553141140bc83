"""Statistics that keep themselves current: queued behind a running refresh, nightly, after imports
and regrades, from the admin's "Refresh statistics"; and captions where the attempts are too few."""
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.tasks import TaskResultStatus
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from exams.bank.errata.regrade import erratum_confirm
from exams.bank.formats.gift import parse_gift
from exams.bank.imports import import_bank
from exams.models import Erratum, ErratumStatus, ExamStatistic, ItemStatistic
from exams.statistics.refresh import item_statistics_refresh
from exams.statistics.tasks import (
    NIGHTLY_AT_HOUR,
    REFRESH_JOB,
    refresh_statistics,
    refresh_statistics_nightly,
    statistics_refresh_request,
)
from jobs.models import Job, JobStatus
from jobs.periodic import next_time_of_day
from jobs.services import BEHIND_RETRY, target_of
from tests.conftest import JOB_DATABASES
from tests.exams.statistics.test_totals import make_bank, record
from tests.factories import DomainFactory, ExamFactory

pytestmark = pytest.mark.django_db(databases=JOB_DATABASES)


def waiting_runs(task) -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path=task.module_path, status=TaskResultStatus.READY))


# --- one running, one queued, never refused ----------------------------------------------


def test_a_request_while_one_runs_queues_behind_it_and_later_ones_join_it(database_tasks, instructor):
    exam, bank = make_bank(questions=2)
    running = statistics_refresh_request(exam=exam, user=instructor)
    assert running.status == JobStatus.QUEUED
    assert statistics_refresh_request(exam=exam) == running, "a request while one waits joins it"
    Job.objects.filter(pk=running.pk).update(status=JobStatus.RUNNING)  # a worker has taken it

    behind = statistics_refresh_request(exam=exam)
    again = statistics_refresh_request(exam=exam)

    assert behind != running and behind.status == JobStatus.QUEUED and again == behind
    assert Job.objects.filter(kind=REFRESH_JOB, target=target_of(exam)).count() == 2
    # Its task, delivered while the first still runs, leaves it queued and looks again shortly.
    refresh_statistics.call(job_id=behind.pk)
    behind.refresh_from_db()
    assert behind.status == JobStatus.QUEUED and not ExamStatistic.objects.exists()
    runs = [run for run in waiting_runs(refresh_statistics) if run.args_kwargs["kwargs"] == {"job_id": behind.pk}]
    [later] = [run for run in runs if run.run_after.year < 9999]  # a run due at once has no run_after
    assert timedelta(0) < later.run_after - timezone.now() <= BEHIND_RETRY
    # The job page says what it waits for.
    page = instructor_client_for(instructor).get(reverse("admin:jobs_job_change", args=[behind.pk])).content.decode()
    assert f"Queued behind <a href=\"{reverse('admin:jobs_job_change', args=[running.pk])}\">job #{running.pk}</a>" in page

    Job.objects.filter(pk=running.pk).update(status=JobStatus.SUCCEEDED)
    refresh_statistics.call(job_id=behind.pk)

    behind.refresh_from_db()
    assert (behind.status, behind.done, behind.total) == (JobStatus.SUCCEEDED, 2, 2), "progress counts questions"
    assert ExamStatistic.objects.filter(exam=exam).count() == 2


def instructor_client_for(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def test_other_kinds_of_job_are_still_refused_while_one_is_active():
    """Only work that queues behind (job_request) may have a running and a queued job at once."""
    from django.db import IntegrityError, transaction

    Job.objects.create(kind="import_questions", target="exams.exam:1", title="one", status=JobStatus.RUNNING)
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.create(kind="import_questions", target="exams.exam:1", title="two")
    Job.objects.create(kind=REFRESH_JOB, target="exams.exam:1", title="one", status=JobStatus.RUNNING, queues_behind=True)
    Job.objects.create(kind=REFRESH_JOB, target="exams.exam:1", title="two", queues_behind=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.create(kind=REFRESH_JOB, target="exams.exam:1", title="three", queues_behind=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.create(kind=REFRESH_JOB, target="exams.exam:1", title="four", status=JobStatus.RUNNING, queues_behind=True)


# --- the schedule -----------------------------------------------------------------------


def test_the_nightly_run_asks_for_every_exams_refresh_and_schedules_the_next_night(database_tasks):
    first, _ = make_bank(questions=1)
    second, _ = make_bank(questions=2)
    ExamFactory()  # no questions: nothing to refresh

    assert refresh_statistics_nightly.call() == 2

    assert set(Job.objects.filter(kind=REFRESH_JOB, status=JobStatus.QUEUED).values_list("target", flat=True)) == {
        target_of(first), target_of(second),
    }
    assert len(waiting_runs(refresh_statistics)) == 2
    [nightly] = waiting_runs(refresh_statistics_nightly)
    assert nightly.run_after == next_time_of_day(hour=NIGHTLY_AT_HOUR, after=timezone.now())
    assert timedelta(0) < nightly.run_after - timezone.now() <= timedelta(days=1)
    # A second run the same night keeps one chain and one waiting refresh per exam.
    refresh_statistics_nightly.call()
    assert len(waiting_runs(refresh_statistics_nightly)) == 1
    assert Job.objects.filter(kind=REFRESH_JOB).count() == 2


def test_the_nightly_run_is_a_periodic_task(settings):
    assert "exams.statistics.tasks.refresh_statistics_nightly" in settings.PERIODIC_TASKS


@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2026, 12, 3, 2, 59), datetime(2026, 12, 3, 3, 0)),
    (datetime(2026, 12, 3, 3, 0), datetime(2026, 12, 4, 3, 0)),
    (datetime(2026, 12, 31, 23, 0), datetime(2027, 1, 1, 3, 0)),
])
def test_the_next_night_is_the_next_three_oclock(now, expected):
    utc = ZoneInfo("UTC")
    assert next_time_of_day(hour=3, after=now.replace(tzinfo=utc)) == expected.replace(tzinfo=utc)


# --- after an import and a regrade -------------------------------------------------------

GIFT = "\n\n".join(f"::Q{n}::Question {n}?{{=a ~b ~c}}" for n in range(3))


def test_an_import_that_wrote_questions_refreshes_the_statistics(django_capture_on_commit_callbacks):
    exam = ExamFactory(code="IMP")
    DomainFactory(exam=exam, name="Data")

    with django_capture_on_commit_callbacks(execute=True):
        import_bank(exam=exam, result=parse_gift(GIFT), default_domain="Data", dry_run=True)
        import_bank(exam=exam, result=parse_gift(GIFT), default_domain="Nowhere")  # refused: writes nothing
    assert not Job.objects.exists(), "a dry run or a refused import asks for nothing"

    with django_capture_on_commit_callbacks(execute=True):
        import_bank(exam=exam, result=parse_gift(GIFT), default_domain="Data")

    job = Job.objects.get(kind=REFRESH_JOB)
    assert (job.target, job.status, job.done, job.total) == (target_of(exam), JobStatus.SUCCEEDED, 3, 3)
    assert ItemStatistic.objects.filter(question__exam=exam, first_mock_only=False).count() == 3


def test_with_the_worker_an_import_queues_the_refresh_once_it_commits(database_tasks, django_capture_on_commit_callbacks):
    exam = ExamFactory(code="IMP")
    DomainFactory(exam=exam, name="Data")

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        import_bank(exam=exam, result=parse_gift(GIFT), default_domain="Data")
        assert not Job.objects.exists(), "nothing is asked for before the import commits"
    assert len(callbacks) == 1

    job = Job.objects.get(kind=REFRESH_JOB)
    assert job.status == JobStatus.QUEUED and job.queues_behind
    assert [run.args_kwargs["kwargs"] for run in waiting_runs(refresh_statistics)] == [{"job_id": job.pk}]


def test_a_confirmed_erratum_refreshes_the_statistics(learner, django_capture_on_commit_callbacks):
    exam, (question, other) = make_bank(questions=2)
    record(user=learner, exam=exam, sheets=[{question: "B", other: "A"}])
    item_statistics_refresh(exam=exam)
    assert ItemStatistic.objects.get(question=question, first_mock_only=False).facility == 0
    erratum = Erratum.objects.create(question=question, status=ErratumStatus.REPORTED)

    corrected = list(question.choices.filter(label="B").values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=corrected, dry_run=True)
    assert not Job.objects.exists(), "a dry run changes nothing, so asks for nothing"

    with django_capture_on_commit_callbacks(execute=True):
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=corrected)

    assert Job.objects.get(kind=REFRESH_JOB).status == JobStatus.SUCCEEDED
    assert ItemStatistic.objects.get(question=question, first_mock_only=False).facility == 1


# --- the admin's button ------------------------------------------------------------------


def test_refresh_statistics_from_the_exams_page_and_the_question_list(instructor_client):
    exam, _ = make_bank(questions=2)
    other, _ = make_bank(questions=1)
    button = ">Refresh statistics</button>"

    exam_page = instructor_client.get(reverse("admin:exams_exam_change", args=[exam.pk])).content.decode()
    assert button in exam_page and f'name="exam" value="{exam.pk}"' in exam_page
    questions = instructor_client.get(reverse("admin:exams_question_changelist")).content.decode()
    assert button in questions and f'<option value="{other.pk}">{other.code}</option>' in questions
    filtered = instructor_client.get(reverse("admin:exams_question_changelist"), {"exam__id__exact": exam.pk})
    assert f'name="exam" value="{exam.pk}"' in filtered.content.decode()

    response = instructor_client.post(reverse("admin:exams_exam_refresh_statistics"), {"exam": exam.pk}, follow=True)

    job = Job.objects.get(kind=REFRESH_JOB)
    assert response.redirect_chain[-1][0] == reverse("admin:jobs_job_change", args=[job.pk])
    assert (job.status, job.target, job.created_by.username) == (JobStatus.SUCCEEDED, target_of(exam), "teacher")
    assert f"Refresh the item statistics of {exam.code}: succeeded." in response.content.decode()


def test_refresh_statistics_refuses_a_get_and_an_unknown_exam(instructor_client):
    url = reverse("admin:exams_exam_refresh_statistics")
    assert instructor_client.get(url).status_code == 405
    response = instructor_client.post(url, {"exam": "9999"}, follow=True)
    assert "Choose an exam whose statistics to refresh; nothing was started." in response.content.decode()
    assert instructor_client.post(url, {"exam": "x"}).status_code == 302
    assert not Job.objects.exists()


def test_no_admin_page_tells_an_instructor_to_use_a_shell(instructor_client):
    exam, bank = make_bank(questions=1)
    pages = [
        reverse("admin:exams_question_changelist"),
        reverse("admin:exams_question_change", args=[bank[0].pk]),
        reverse("admin:exams_exam_change", args=[exam.pk]),
    ]
    for url in pages:
        page = instructor_client.get(url).content.decode()
        assert "manage.py" not in page and "refresh_item_statistics" not in page, url
        assert "refreshed every night, after an import or a regrade" in page, url


# --- too few attempts --------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 29, 30, 50])
def test_figures_from_too_few_attempts_show_a_caption(instructor_client, learner, n):
    exam, (question, other) = make_bank(questions=2)
    # A third pick B (one right answer in two), nobody C or D: distractors that do no work.
    record(user=learner, exam=exam, sheets=[{question: "B" if i % 3 == 0 else "A", other: "A"} for i in range(n)])
    item_statistics_refresh(exam=exam)

    panel = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
    listing = instructor_client.get(reverse("admin:exams_question_changelist"), {"exam__id__exact": exam.pk}).content.decode()
    exam_page = instructor_client.get(reverse("admin:exams_exam_change", args=[exam.pk])).content.decode()

    caption = f"too few attempts (n = {n})"
    facility = f"<td>{(n - (n + 2) // 3) / n:.2f}</td>"
    if n < 30:
        assert caption in panel and facility not in panel
        assert caption in listing
        assert "not functioning" not in panel
    else:
        assert caption not in panel and facility in panel
        assert f'<td class="field-statistics_n">{n}</td>' in listing
        assert "not functioning: picked by under 5%" in panel
    # Test figures (KR-20, SEM) need 50 attempts.
    assert (caption in exam_page) == (n < 50)
    assert f"<td>{n}</td>" in exam_page  # every figure with its n
