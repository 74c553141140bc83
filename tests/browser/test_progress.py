"""A new learner drills the weakest domain and watches mastery change."""
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, Exam, Response
from exams.study import progress
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)


def is_save(response) -> bool:
    return response.request.method == "POST" and "/q/" in response.url


def test_a_drill_from_the_weakest_domain_moves_mastery_and_reviews(page, live_server, bank, screenshot):
    learner = UserFactory(username="newcomer")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.get_by_role("heading", name="Start here")).to_be_visible()
    expect(page.get_by_text("Not enough data yet: 0 of 20")).to_be_visible()
    assert_accessible(page)

    # With no answers yet, the heaviest domain is the one to drill.
    page.get_by_role("button", name="Drill Experimentation").click()
    expect(page.get_by_role("heading", name="Question 1 of 10")).to_be_visible()
    drill = Attempt.objects.get(user=learner, mode=AttemptMode.DRILL)
    slots = {slot.position: slot for slot in drill.responses.select_related("question")}

    for position in range(1, 11):
        slot = slots[position]
        keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
        want_right = position > 3
        # A Choose-N check needs N picks (a short one is refused), so a wrong answer
        # picks N choices led by wrong ones.
        indexes = sorted(range(len(slot.choice_order)), key=lambda i: (slot.choice_order[i] in keys) != want_right)
        for index in indexes[: slot.question.choose]:
            with page.expect_response(is_save):
                page.locator("label.choice").nth(index).click()
        with page.expect_response(is_save):
            page.get_by_role("button", name="Check answer").click()
        expect(page.get_by_role("heading", name="Right" if want_right else "Wrong", exact=True)).to_be_visible()
        if position == 1:
            assert_accessible(page)
            screenshot(page, "6-practice-check-answer")
        if position < 10:
            with page.expect_response(is_save):
                page.get_by_role("button", name="Next", exact=True).click()
            expect(page.get_by_role("heading", name=f"Question {position + 1} of 10")).to_be_visible()
            page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")

    page.get_by_role("link", name="Session complete: see results").click()
    expect(page.get_by_text("7 of 10 right")).to_be_visible()

    # The questions sit in their domain's group, closed until opened.
    page.locator("details.domain-group > summary").first.click()
    page.get_by_role("link", name="Report a problem with this question").first.click()
    expect(page.get_by_role("heading", name="Report a problem")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("What is wrong with this question?").fill("I think the wording allows two answers.")
    page.get_by_role("button", name="Send report").click()
    expect(page.get_by_text("your report is with the instructors")).to_be_visible()

    page.get_by_role("link", name="Dashboard").click()
    row = page.get_by_role("row", name=re.compile("^Experimentation"))
    expect(row).to_contain_text("7/10")
    expect(row).to_contain_text("70.0%")
    # Every checked answer is a review; FSRS brings none back the same day (tests/browser/test_review.py).
    expect(page.get_by_text("Nothing due now.")).to_be_visible()
    assert_accessible(page)


def test_the_demo_history_fills_the_dashboard(page, live_server, bank, screenshot):
    learner = UserFactory(username="learner")
    call_command("create_demo_history", username="learner")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.get_by_text("Your next mock", exact=True)).to_be_visible()
    expect(page.get_by_text(re.compile(r"\d+–\d+ of 60 right, 9 times in 10"))).to_be_visible()
    expect(page.locator("svg.trend-chart circle")).to_have_count(3)
    # Mastery over time: one small chart per domain, a point after each of the three mocks,
    # each recomputed from the rows (finished up to that mock, the last 50 per domain).
    expect(page.locator("svg.multiple-chart")).to_have_count(7)
    exam = Exam.objects.get(code="NCA-GENM")
    for history in progress.mastery_history(user=learner, exam=exam, mocks=progress.mock_trend(user=learner, exam=exam)):
        chart = page.get_by_role("img", name=re.compile(f"^Mastery in {re.escape(history.name)} after each mock"))
        expect(chart.locator("circle")).to_have_count(3)
        for index, mock in enumerate(progress.mock_trend(user=learner, exam=exam)):
            # Counted as docs/MEASUREMENT.md says: a mock's every graded slot (unanswered =
            # wrong, at the mock's finish), elsewhere the answered ones; newest 50.
            rows = Response.objects.filter(
                attempt__user=learner, attempt__finished_at__lte=mock.finished_at, domain_id=history.domain_id,
                is_correct__isnull=False,
            ).values_list("pk", "is_correct", "answered_at", "attempt__mode", "attempt__finished_at")
            counted = sorted(
                ((answered_at or finished_at, pk, right) for pk, right, answered_at, mode, finished_at in rows
                 if mode == AttemptMode.MOCK or answered_at is not None),
                reverse=True,
            )[:50]
            right, answered = sum(right for _, _, right in counted), len(counted)
            expect(chart.locator("circle title").nth(index)).to_contain_text(f"({right}/{answered})")
    expect(page.get_by_role("button", name=re.compile(r"Review due \(\d+\)"))).to_be_visible()
    expect(page.get_by_role("button", name="Drill Performance Optimization")).to_be_visible()
    assert page.locator("table.history tbody tr").count() == 6
    assert_accessible(page)
    screenshot(page, "5-dashboard")
