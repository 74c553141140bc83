"""A learner with a mock running looks back at an older mock: its score, domains, the dashboard's
history, trend and mastery read "held until your mock ends", accessibly (issue 28, the key rule)."""
import pytest
from playwright.sync_api import expect

from exams.room.services import attempt_start, attempt_submit
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank

HELD = "held until your mock ends"


@pytest.fixture
def scene(transactional_db):
    exam = exam_with_bank(weights=(50, 50), per_domain=5, question_count=10, is_published=True)
    learner = UserFactory(username="holder")
    older = attempt_start(user=learner, exam=exam).attempt
    for slot in older.responses.select_related("question"):
        older.record_answer(response=slot, choice_ids=[slot.question.choices.get(label="A").pk])
    attempt_submit(user=learner, attempt_id=older.pk)
    attempt_start(user=learner, exam=exam)  # the running mock holds every question
    return exam, learner, older


def test_older_results_and_the_dashboard_hold_their_totals(page, live_server, scene, screenshot):
    exam, learner, older = scene
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{older.pk}/results/")
    expect(page.get_by_text(f"Score {HELD}")).to_be_visible()
    expect(page.locator("table.domain-results")).not_to_contain_text("5/5")
    assert_accessible(page)
    screenshot(page, "held-results")
    page.goto(f"{live_server.url}/dashboard/?exam={exam.code}")
    expect(page.locator("table.history")).to_contain_text(HELD)
    expect(page.locator("table.mastery")).to_contain_text(HELD)
    expect(page.locator(".trend-chart")).to_contain_text("held")
    assert_accessible(page)
    screenshot(page, "held-dashboard")
