"""An instructor confirms an erratum in admin; the learner who took the question sees the new score."""
import re

from playwright.sync_api import expect

from exams.bank.errata.disputes import dispute_report
from exams.models import Attempt
from exams.roles import instructors_group
from exams.room.services import attempt_start, attempt_submit
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank


def test_a_confirmed_erratum_regrades_and_the_learner_is_told(browser, live_server, transactional_db, page_problems, screenshot):
    from tests.browser.conftest import watch

    exam = exam_with_bank(weights=(100,), per_domain=10)
    learner = UserFactory(username="taker")
    attempt = attempt_start(user=learner, exam=exam).attempt
    for slot in attempt.responses.select_related("question"):
        attempt.record_answer(response=slot, choice_ids=[slot.question.choices.get(label="B").pk])
    attempt_submit(user=learner, attempt_id=attempt.pk)
    question = exam.questions.order_by("pk").first()
    slot = attempt.responses.get(question=question)
    dispute_report(user=learner, response=slot, choice_ids=[question.choices.get(label="B").pk], reason="B is the right statement.")

    teacher = UserFactory(username="teacher", is_staff=True)
    teacher.groups.add(instructors_group())
    staff = browser.new_context()
    admin_page = staff.new_page()
    watch(admin_page, page_problems)
    log_in_as(admin_page, live_server, teacher)
    admin_page.goto(f"{live_server.url}/admin/exams/erratum/")
    admin_page.get_by_role("link", name="Triage").first.click()
    expect(admin_page.get_by_text("B is the right statement.")).to_be_visible()
    assert_accessible(admin_page)
    screenshot(admin_page, "7-admin-triage")
    admin_page.get_by_label("Confirm").check()
    admin_page.get_by_label("Credit the corrected key").check()
    admin_page.get_by_role("checkbox", name=re.compile(r"A\. Choice A")).uncheck()
    admin_page.get_by_role("checkbox", name=re.compile(r"B\. Choice B")).check()
    admin_page.get_by_label("Note").fill("The published key named the wrong statement; B is right.")
    admin_page.get_by_label("Corrected explanation").fill("B is right: the statement in A is reversed.")
    admin_page.get_by_label("Feedback on A").fill("Not this one: the published key named it by mistake.")
    admin_page.get_by_role("button", name="Save decision").click()
    # The dry run first: nothing is saved until it is confirmed.
    preview = admin_page.locator("#regrade-preview")
    expect(preview.get_by_text("Dry run: what confirming will do")).to_be_visible()
    expect(preview).to_contain_text("Attempts regraded: 1")
    expect(preview).to_contain_text("Learners affected: 1")
    assert_accessible(admin_page)
    admin_page.get_by_role("button", name="Confirm and regrade").click()
    expect(admin_page.get_by_text("regraded 1 finished attempt(s); 1 score(s) changed, 0 pass/fail flip(s)")).to_be_visible()
    staff.close()

    learner_page = browser.new_context().new_page()
    watch(learner_page, page_problems)
    log_in_as(learner_page, live_server, learner)
    learner_page.goto(f"{live_server.url}/dashboard/")
    expect(learner_page.get_by_text(f"changed from 0.0% to 10.0% after a correction to “{question.title}”")).to_be_visible()
    learner_page.get_by_role("link", name=re.compile("timed mock of")).click()
    expect(learner_page.get_by_text("changed from 0.0% to 10.0% after a correction")).to_be_visible()
    # The question grid marks the corrected question and jumps to it, opening its domain's group.
    learner_page.get_by_role("link", name=re.compile("changed by a correction")).click()
    expect(learner_page.get_by_text("The published key named the wrong statement; B is right.")).to_be_visible()
    expect(learner_page.get_by_text("B is right: the statement in A is reversed.")).to_be_visible()
    expect(learner_page.get_by_text("Not this one: the published key named it by mistake.")).to_be_visible()
    as_shown = learner_page.locator("details.as-shown")
    expect(as_shown.get_by_text("Because the key is right.")).to_be_hidden()
    as_shown.get_by_text("As shown in your attempt").click()
    expect(as_shown.get_by_text("Because the key is right.")).to_be_visible()
    assert_accessible(learner_page)
    attempt.refresh_from_db()
    assert attempt.score == 10 and attempt.published_score == 0
    assert Attempt.objects.get(pk=attempt.pk).right_count == 1
    assert page_problems == []


def test_a_large_regrade_is_previewed_and_confirmed_in_the_background(page, live_server, instructor, database_tasks, monkeypatch, screenshot):
    """Over the threshold (lowered to 10 here) the dry run's job page brings in its numbers and the Confirm button."""
    from exams.bank.errata import regrade
    from exams.models import Erratum, ErratumStatus, RegradeEvent
    from tests.exams.bank.errata.test_regrade import generated_attempts, report
    from tests.jobs.test_worker import run_worker

    monkeypatch.setattr(regrade, "BACKGROUND_REGRADE_OVER", 10)
    exam, (question, *_), attempts = generated_attempts(seed=21, count=12)
    erratum = report(question)
    log_in_as(page, live_server, instructor)
    page.goto(f"{live_server.url}/admin/exams/erratum/{erratum.pk}/decide/")
    expect(page.get_by_text("the dry run and the regrade run in the background")).to_be_visible()
    page.get_by_label("Confirm").check()
    page.get_by_label("Credit the corrected key").check()
    page.get_by_role("checkbox", name=re.compile(r"A\. Choice A")).uncheck()
    page.get_by_role("checkbox", name=re.compile(r"B\. Choice B")).check()
    page.get_by_role("button", name="Save decision").click()

    expect(page.get_by_text("the dry run of the regrade runs in the background")).to_be_visible()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Queued")
    assert run_worker().returncode == 0

    # No reload: the polling brings in the dry run's numbers and the button.
    expect(status.locator("#regrade-preview")).to_contain_text("Attempts regraded: 12", timeout=15_000)
    assert_accessible(page)
    screenshot(page, "admin-regrade-preview-job")
    assert not RegradeEvent.objects.exists()
    status.get_by_role("button", name="Confirm and regrade").click()

    expect(page.get_by_text("the regrade runs in the background")).to_be_visible()
    assert run_worker().returncode == 0
    expect(page.get_by_role("status")).to_contain_text("Confirmed: regraded 12 finished attempt(s)", timeout=15_000)
    assert Erratum.objects.get(pk=erratum.pk).status == ErratumStatus.CONFIRMED
    assert RegradeEvent.objects.get().attempts_touched == 12
