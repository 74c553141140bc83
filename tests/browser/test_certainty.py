"""How sure you were (issue 26): recorded with the pick, refused when changed late, and shown; desktop and phone."""
import pytest
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, Certainty
from exams.room.services import attempt_start
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank


def is_save(response) -> bool:
    return response.request.method == "POST" and "/q/" in response.url


@pytest.mark.parametrize("screen_size", ["desktop", "phone"])
def test_certainty_recorded_locked_after_check_and_shown(request, live_server, transactional_db, screen_size):
    page = request.getfixturevalue("page" if screen_size == "desktop" else "phone_page")
    exam = exam_with_bank(weights=(100,), per_domain=3, question_count=3)
    learner = UserFactory(username="learner")
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=2).attempt
    first = practice.responses.select_related("question").get(position=1)
    keys = set(first.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{practice.pk}/q/1/")

    sure = page.get_by_role("group", name="How sure are you?")
    expect(sure).to_be_visible()
    assert_accessible(page)
    with page.expect_response(is_save):
        page.locator("label.choice").nth(next(i for i, pk in enumerate(first.choice_order) if pk in keys)).click()
    with page.expect_response(is_save):
        sure.get_by_label("Sure", exact=True).check()
    first.refresh_from_db()
    assert first.certainty == Certainty.SURE and first.answered_at is not None
    # Changed before the check: the last one stands.
    with page.expect_response(is_save):
        sure.get_by_label("Fairly sure").check()
    with page.expect_response(is_save):
        page.get_by_role("button", name="Check answer").click()
    expect(page.get_by_role("heading", name="Right", exact=True)).to_be_visible()
    first.refresh_from_db()
    assert first.certainty == Certainty.FAIR and first.checked_at is not None

    # Locked once checked: the page disables it, and the server refuses a late change.
    locked = page.get_by_role("group", name="How sure are you?")
    expect(locked.get_by_label("Fairly sure")).to_be_checked()
    expect(locked.get_by_label("Sure", exact=True)).to_be_disabled()
    expect(page.get_by_text("How sure: fairly sure")).to_be_visible()
    csrf = page.locator("#attempt-main input[name=csrfmiddlewaretoken]").input_value()
    late = page.request.post(f"{live_server.url}/attempts/{practice.pk}/q/1/", form={
        "csrfmiddlewaretoken": csrf, "answer": "1", "choice": str(first.choice_order.index(next(iter(keys))) + 1),
        "certainty": "sure",
    }, headers={"HX-Request": "true", "X-CSRFToken": csrf, "Referer": page.url})
    assert late.status == 422 and "can no longer change" in late.text()
    first.refresh_from_db()
    assert first.certainty == Certainty.FAIR
    assert_accessible(page)

    # Shown in the results, once the session ends.
    page.goto(f"{live_server.url}/attempts/{practice.pk}/review/")
    page.get_by_role("button", name="Submit").first.click()
    page.locator("#confirm-ok").click()
    # Results group the questions by domain, closed: the grid's cell opens the question.
    page.locator(".grid-cell").first.click()
    expect(page.get_by_text("How sure: fairly sure")).to_be_visible()
    assert Attempt.objects.get(pk=practice.pk).has_ended
