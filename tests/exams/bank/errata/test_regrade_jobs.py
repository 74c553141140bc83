"""Confirming an erratum held by more than BACKGROUND_REGRADE_OVER finished attempts: the dry run and the regrade as jobs."""
import re

import pytest
from django.db import transaction
from django.urls import reverse

from exams.bank.errata import regrade
from exams.bank.errata.regrade import PREVIEW_JOB, REGRADE_JOB, RegradeSummary, decision_json, erratum_confirm
from exams.models import (
    Attempt,
    Choice,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    Question,
    RegradeChange,
    RegradeEvent,
    Response,
    ReviewCard,
)
from exams.tasks import regrade_erratum
from jobs.models import Job, JobStatus
from jobs.services import job_enqueue, target_of
from tests.conftest import JOB_DATABASES
from tests.exams.bank.errata.test_regrade import (
    choice_ids,
    everything_stored,
    finished_attempt,
    generated_attempts,
    report,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(databases=JOB_DATABASES)


@pytest.fixture
def background_over_10(monkeypatch):
    """Ten attempts stand for 500: the suite does not generate 500 attempts per test."""
    monkeypatch.setattr(regrade, "BACKGROUND_REGRADE_OVER", 10)


def decide_url(erratum: Erratum) -> str:
    return reverse("admin:exams_erratum_decide", args=[erratum.pk])


def form_data(question: Question, policy: str) -> dict:
    b = question.choices.get(label="B")
    return {
        "decision": "confirm", "policy": policy, "note": "B was right.",
        "corrected_key": [] if policy == ErratumPolicy.VOID else [b.pk],
        "explanation": "B is right: the docs say so.",
        **{f"feedback_{choice.pk}": f"Corrected feedback on {choice.label}." for choice in question.choices.all()},
    }


def outcome(question: Question) -> tuple:
    """Everything a confirmation writes, without the ids and times that differ from run to run."""
    erratum = Erratum.objects.select_related("corrected_version").get(question=question)
    return (
        list(Attempt.objects.order_by("pk").values_list("pk", "right_count", "total_count", "score", "passed")),
        list(Response.objects.order_by("pk").values_list("pk", "is_correct")),
        list(Choice.objects.order_by("pk").values_list("pk", "is_correct", "feedback")),
        list(Question.objects.order_by("pk").values_list("pk", "is_active", "explanation")),
        (erratum.status, erratum.policy, erratum.note, erratum.decided_by_id, erratum.corrected_version.content),
        list(RegradeEvent.objects.values_list("erratum_id", "policy", "attempts_touched", "scores_changed", "pass_flips", "created_by_id")),
        sorted(RegradeChange.objects.values_list("attempt_id", "old_score", "new_score", "old_passed", "new_passed")),
        sorted(ReviewCard.objects.values_list("user_id", "question_id", "stability")),
    )


def confirm_in_request(client, erratum: Erratum, data: dict):
    preview = client.post(decide_url(erratum), {**data, "action": "preview"})
    assert "Dry run: what confirming will do" in preview.content.decode()
    digest = re.search(r'name="preview" value="([0-9a-f]+)"', preview.content.decode()).group(1)
    return client.post(decide_url(erratum), {**data, "action": "confirm", "preview": digest}, follow=True)


@pytest.mark.parametrize("policy", ErratumPolicy.values)
def test_a_large_regrade_runs_as_two_jobs_with_the_outcome_of_the_request(policy, instructor_client, instructor, monkeypatch):
    exam, (question, *_), attempts = generated_attempts(seed=len(policy), count=12)
    erratum = report(question)
    data = form_data(question, policy)
    before = everything_stored()
    # The in-request path, rolled back after its outcome is noted.
    with transaction.atomic():
        page = confirm_in_request(instructor_client, erratum, data)
        assert "Confirmed: regraded 12 finished attempt(s)" in page.content.decode()
        in_request = outcome(question)
        transaction.set_rollback(True)
    assert everything_stored() == before and not Job.objects.exists()

    monkeypatch.setattr(regrade, "BACKGROUND_REGRADE_OVER", 11)
    page = instructor_client.post(decide_url(erratum), {**data, "action": "preview"}, follow=True)

    preview = Job.objects.get(kind=PREVIEW_JOB)
    assert page.redirect_chain[-1][0] == reverse("admin:jobs_job_change", args=[preview.pk])
    assert (preview.target, preview.status, preview.created_by, preview.error) == (
        target_of(erratum), JobStatus.SUCCEEDED, instructor, "",
    )
    assert everything_stored() == before, "a dry run in the background keeps nothing either"
    html = page.content.decode()
    assert "12 finished attempts hold this question, more than 11" in html
    assert "Dry run: what confirming will do" in html and "Attempts regraded: <strong>12</strong>" in html
    assert f'name="preview_job" value="{preview.pk}"' in html and "Confirm and regrade" in html
    summary = RegradeSummary.from_json(preview.payload["summary"])
    assert summary.digest() == preview.payload["digest"]
    # The finished job's polled partial shows the same numbers and button, and stops the polling.
    polled = instructor_client.get(reverse("admin:jobs_job_progress", args=[preview.pk]), headers={"HX-Request": "true"})
    assert polled.status_code == 286 and f'name="preview_job" value="{preview.pk}"' in polled.content.decode()

    page = instructor_client.post(decide_url(erratum), {"preview_job": preview.pk}, follow=True)

    job = Job.objects.get(kind=REGRADE_JOB)
    assert page.redirect_chain[-1][0] == reverse("admin:jobs_job_change", args=[job.pk])
    assert (job.status, job.error, job.payload) == (JobStatus.SUCCEEDED, "", {"erratum": erratum.pk})
    assert (job.done, job.total, job.stage) == (4, 4, "")
    assert job.message == regrade.confirmed_message(summary)
    assert job.message in page.content.decode() and "Confirm and regrade" not in page.content.decode()
    assert outcome(question) == in_request
    assert RegradeEvent.objects.get().created_by == instructor


def test_a_large_confirm_whose_numbers_moved_fails_keeps_nothing_and_offers_the_new_numbers(
    instructor_client, background_over_10
):
    exam, (question, *rest), attempts = generated_attempts(seed=7, count=12)
    erratum = report(question)
    data = form_data(question, ErratumPolicy.CREDIT_CORRECTED)
    instructor_client.post(decide_url(erratum), {**data, "action": "preview"})
    preview = Job.objects.get(kind=PREVIEW_JOB)
    finished_attempt(user=UserFactory(username="latecomer"), exam=exam, answers={question: "B", **{q: "A" for q in rest}})
    before = everything_stored()

    page = instructor_client.post(decide_url(erratum), {"preview_job": preview.pk}, follow=True).content.decode()

    failed = Job.objects.get(kind=REGRADE_JOB)
    assert failed.status == JobStatus.FAILED
    assert failed.error.startswith("The numbers changed since the preview") and failed.error.endswith("Nothing was changed.")
    assert everything_stored() == before
    assert "The numbers changed since your preview" in page and "Attempts regraded: <strong>13</strong>" in page
    assert f'name="preview_job" value="{failed.pk}"' in page

    # Confirming the new numbers regrades.
    instructor_client.post(decide_url(erratum), {"preview_job": failed.pk})

    assert Job.objects.filter(kind=REGRADE_JOB, status=JobStatus.SUCCEEDED).count() == 1
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.CONFIRMED and RegradeEvent.objects.get().attempts_touched == 13


def test_a_failed_regrade_job_shows_its_error_and_changes_nothing(instructor_client, instructor, background_over_10):
    exam, (question, *_), attempts = generated_attempts(seed=3, count=12)
    erratum = report(question)
    before = everything_stored()
    decision = decision_json(policy="credit_corrected", corrected_choice_ids=choice_ids(question, "BC"),
                             note=None, explanation="Changed.", feedback={})

    job = job_enqueue(kind=REGRADE_JOB, target=target_of(erratum), title="Regrade", task=regrade_erratum, total=1,
                      payload={"erratum": erratum.pk, "decision": decision, "expected": "0" * 16}, user=instructor)

    assert job.status == JobStatus.FAILED
    assert job.error == (
        "A single-answer question needs exactly 1 correct choice(s), got 2. Nothing was changed."
    )
    assert everything_stored() == before and job.payload == {}
    page = instructor_client.get(reverse("admin:jobs_job_change", args=[job.pk])).content.decode()
    assert "Failed" in page and "got 2. Nothing was changed." in page and "Confirm and regrade" not in page


def test_up_to_the_threshold_the_dry_run_stays_in_the_request(instructor_client, monkeypatch):
    exam, (question, *_), attempts = generated_attempts(seed=5, count=12)
    erratum = report(question)
    monkeypatch.setattr(regrade, "BACKGROUND_REGRADE_OVER", 12)

    page = instructor_client.post(decide_url(erratum), {**form_data(question, "credit_either"), "action": "preview"})

    assert page.status_code == 200 and "Dry run: what confirming will do" in page.content.decode()
    assert not Job.objects.exists()


def test_one_dry_run_per_erratum_at_a_time(instructor_client, background_over_10):
    exam, (question, *_), attempts = generated_attempts(seed=9, count=12)
    erratum = report(question)
    running = Job.objects.create(kind=PREVIEW_JOB, target=target_of(erratum), title="Dry run", status=JobStatus.RUNNING)

    page = instructor_client.post(
        decide_url(erratum), {**form_data(question, "credit_either"), "action": "preview"}, follow=True
    ).content.decode()

    assert f"Nothing was started: “Dry run” is already running (job #{running.pk})" in page
    assert Job.objects.count() == 1
    # The triage page follows it too.
    triage = instructor_client.get(decide_url(erratum)).content.decode()
    assert "In the background" in triage
    assert f'hx-get="{reverse("admin:jobs_job_progress", args=[running.pk])}"' in triage


def test_a_confirm_names_a_finished_preview_of_this_erratum(instructor_client, background_over_10):
    exam, (question, other, _), attempts = generated_attempts(seed=11, count=12)
    erratum, elsewhere = report(question), report(other)
    instructor_client.post(decide_url(elsewhere), {**form_data(other, "credit_either"), "action": "preview"})
    foreign = Job.objects.get(kind=PREVIEW_JOB)
    before = everything_stored()

    for bad in (str(foreign.pk), "nope", ""):
        page = instructor_client.post(decide_url(erratum), {"preview_job": bad}, follow=True).content.decode()
        assert "That preview is not one of this erratum’s" in page or "That preview is not one of this erratum&#x27;s" in page

    assert Job.objects.count() == 1 and everything_stored() == before


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True, databases=["default", "jobs"])
def test_a_worker_process_runs_the_dry_run(database_tasks, instructor):
    from tests.jobs.test_worker import run_worker

    exam, (question, *_), attempts = generated_attempts(seed=13, count=12)
    erratum = report(question)
    arguments = {"policy": "credit_corrected", "corrected_choice_ids": choice_ids(question, "B"), "note": None,
                 "explanation": "Fixed.", "feedback": {}}
    expected = erratum_confirm(erratum=erratum, **arguments, dry_run=True).summary
    job = job_enqueue(kind=PREVIEW_JOB, target=target_of(erratum), title="Dry run", task=regrade_erratum, total=1,
                      payload={"erratum": erratum.pk, "decision": decision_json(**arguments)}, user=instructor)
    assert job.status == JobStatus.QUEUED

    finished = run_worker()

    assert finished.returncode == 0, finished.stdout + finished.stderr
    job.refresh_from_db()
    assert (job.status, job.error, job.done, job.total) == (JobStatus.SUCCEEDED, "", 4, 4)
    assert RegradeSummary.from_json(job.payload["summary"]) == expected
    assert not RegradeEvent.objects.exists()


def test_the_regrade_tells_its_progress_step_by_step(db):
    exam, (question, *_), attempts = generated_attempts(seed=17, count=3)
    heard = []

    erratum_confirm(
        erratum=report(question), policy="credit_corrected", corrected_choice_ids=choice_ids(question, "B"),
        dry_run=True, progress=lambda done, *, total=None, stage=None: heard.append((done, total, stage)),
    )

    assert [(done, total) for done, total, _ in heard] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert heard[1][2] == "Step 2 of 4: Working out each attempt's new grade"
