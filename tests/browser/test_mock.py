"""A learner takes timed mocks in a real browser: by keyboard, against the clock, on a phone."""
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from exams.models import Attempt, AttemptStatus
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)


def is_answer_save(response) -> bool:
    return response.request.method == "POST" and "/q/" in response.url


def settled(page) -> None:
    """Wait until the page has sent everything it queued (the exam room's own queue)."""
    page.wait_for_function("!Number((document.getElementById('attempt') || {dataset: {}}).dataset.queued || 0)")


def test_a_whole_60_question_mock_by_keyboard(page, live_server, bank, screenshot):
    learner = UserFactory(username="keyboard")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/NCA-GENM/")
    assert_accessible(page)
    screenshot(page, "1-start-page")
    page.get_by_role("button", name="Start mock").click()
    expect(page.get_by_role("heading", name="Question 1 of 60")).to_be_visible()
    assert_accessible(page)

    for position in range(1, 61):
        legend = page.locator("legend#pick-rule").inner_text()
        picks = int(legend.split()[-1]) if legend.startswith("Choose ") and legend != "Choose one" else 1
        for key in "abc"[:picks]:
            with page.expect_response(is_answer_save) as saved:
                page.keyboard.press(key)
            assert saved.value.status == 200
        expect(page.get_by_role("status")).to_have_text("Saved")
        if position in (10, 40):
            # Strike out the fourth choice by keyboard (never one of the picks above).
            page.locator("#attempt-main input[name=choice][value='4']").focus()
            with page.expect_response(is_answer_save):
                page.keyboard.press("x")
            expect(page.get_by_role("button", name="Restore D")).to_be_visible()
        if position in (7, 23):
            with page.expect_response(is_answer_save):
                page.keyboard.press("f")
            expect(page.get_by_role("button", name="Flag", exact=True)).to_have_attribute("aria-pressed", "true")
        if position == 23:
            screenshot(page, "2-exam-page")
        if position < 60:
            with page.expect_response(is_answer_save):
                page.keyboard.press("n")
            expect(page.get_by_role("heading", name=f"Question {position + 1} of 60")).to_be_visible()
            settled(page)

    page.get_by_role("button", name="Review").click()
    expect(page.get_by_text("60 questions: 0 unanswered, 0 incomplete, 2 flagged.")).to_be_visible()
    assert_accessible(page)
    screenshot(page, "3-review")
    page.get_by_role("button", name="Submit").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Submit").click()

    expect(page.get_by_role("heading", name=re.compile("results"))).to_be_visible()
    assert_accessible(page)
    screenshot(page, "4-results")
    totals = [
        int(cell.split("/")[1])
        for cell in page.locator("table.domain-results tbody td:nth-child(3)").all_inner_texts()
    ]
    assert sum(totals) == 60
    attempt = Attempt.objects.get(user=learner)
    assert attempt.status == AttemptStatus.SUBMITTED
    assert attempt.responses.filter(answered_at__isnull=False).count() == 60
    assert attempt.responses.filter(flagged=True).count() == 2
    assert sorted(attempt.responses.filter(strikes__isnull=False).values_list("position", flat=True)) == [10, 40]
    assert page.locator("table.domain-results tfoot").inner_text().count(f"{attempt.right_count}/60") == 1


def test_the_deadline_passes_with_the_page_open(page, live_server, transactional_db):
    learner = UserFactory(username="late")
    exam = exam_with_bank(weights=(100,), per_domain=10, question_count=5)
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/")
    page.get_by_role("button", name="Start mock").click()
    expect(page.get_by_role("heading", name="Question 1 of 5")).to_be_visible()
    attempt = Attempt.objects.get(user=learner)
    # Bring the deadline close; the next page load tells the browser the new time left.
    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=6))
    page.reload()
    with page.expect_response(is_answer_save):
        page.get_by_text(re.escape("Choice"), exact=False).first.click()
    expect(page.get_by_role("status")).to_have_text("Saved")

    expect(page.get_by_role("heading", name=re.compile("results"))).to_be_visible(timeout=20_000)
    expect(page.get_by_text("Time ran out")).to_be_visible()
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.EXPIRED
    assert attempt.responses.filter(answered_at__isnull=False).count() == 1


def test_a_mock_on_a_phone_screen(phone_page, live_server, transactional_db):
    learner = UserFactory(username="phone")
    exam = exam_with_bank(weights=(60, 40), per_domain=10, question_count=10)
    log_in_as(phone_page, live_server, learner)
    phone_page.goto(f"{live_server.url}/exams/{exam.code}/")
    phone_page.get_by_role("button", name="Start mock").click()
    expect(phone_page.get_by_role("heading", name="Question 1 of 10")).to_be_visible()
    for position in range(1, 4):
        with phone_page.expect_response(is_answer_save):
            phone_page.locator("label.choice").nth(1).tap()
        expect(phone_page.get_by_role("status")).to_have_text("Saved")
        assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_accessible(phone_page)
        with phone_page.expect_response(is_answer_save):
            phone_page.get_by_role("button", name="Next").tap()
        expect(phone_page.get_by_role("heading", name=f"Question {position + 1} of 10")).to_be_visible()
    phone_page.get_by_role("navigation", name="Questions").get_by_role("button", name="Question 2, answered").tap()
    expect(phone_page.get_by_role("heading", name="Question 2 of 10")).to_be_visible()
    phone_page.get_by_role("button", name="Review").tap()
    # Wait for the review page itself: measuring the width mid-navigation has no page to ask.
    expect(phone_page.get_by_role("heading", name="Review your answers")).to_be_visible()
    expect(phone_page.get_by_text("10 questions: 7 unanswered, 0 incomplete, 0 flagged.")).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    phone_page.get_by_role("button", name="Submit").tap()
    phone_page.get_by_role("dialog").get_by_role("button", name="Submit").tap()
    expect(phone_page.get_by_role("heading", name=re.compile("results"))).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    assert_accessible(phone_page)


def test_without_javascript_the_mock_still_works(browser, live_server, transactional_db):
    learner = UserFactory(username="nojs")
    exam = exam_with_bank(weights=(100,), per_domain=5, question_count=3)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/")
    page.get_by_role("button", name="Start mock").click()
    for position in range(1, 4):
        expect(page.get_by_role("heading", name=f"Question {position} of 3")).to_be_visible()
        page.locator("label.choice").first.click()
        page.get_by_role("button", name="Next" if position < 3 else "Review").click()
    expect(page.get_by_text("3 questions: 0 unanswered")).to_be_visible()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_role("heading", name="Submit your answers?")).to_be_visible()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_role("heading", name=re.compile("results"))).to_be_visible()
    attempt = Attempt.objects.get(user=learner)
    assert attempt.status == AttemptStatus.SUBMITTED
    assert attempt.responses.filter(answered_at__isnull=False).count() == 3
    context.close()


def test_arrow_keys_move_through_the_choices_as_usual(page, live_server, transactional_db):
    learner = UserFactory(username="arrows")
    exam = exam_with_bank(weights=(100,), per_domain=5, question_count=3)
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/")
    page.get_by_role("button", name="Start mock").click()
    radios = page.locator("input[name=choice]")
    with page.expect_response(is_answer_save):
        page.locator("label.choice").nth(2).click()
    with page.expect_response(is_answer_save):
        page.keyboard.press("ArrowDown")
    expect(radios.nth(3)).to_be_checked()
    page.keyboard.press("Backspace")
    page.keyboard.press("CapsLock")
    page.wait_for_timeout(300)
    expect(radios.nth(3)).to_be_checked()
    slot = Attempt.objects.get(user=learner).responses.get(position=1)
    assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[3]]
