"""A learner builds a timed practice from what they missed in their last two mocks, bookmarks two questions and writes a note."""
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, AttemptStatus, Bookmark, Domain, Question, Response
from exams.room.services import attempt_start, attempt_submit
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)


def is_save(response) -> bool:
    return response.request.method == "POST" and "/q/" in response.url


def is_count(response) -> bool:
    return response.request.method == "POST" and "/practice/" in response.url


def test_build_a_timed_practice_from_two_domains_and_my_last_two_mocks_then_bookmark_and_note(page, live_server, bank, screenshot):
    learner = UserFactory(username="builder")
    # Three mocks submitted blank: every slot missed. Only the last two are looked at.
    mocks = []
    for _ in range(3):
        mock = attempt_start(user=learner, exam=Domain.objects.first().exam).attempt
        attempt_submit(user=learner, attempt_id=mock.pk)
        mocks.append(mock)
    experimentation = Domain.objects.get(name="Experimentation")
    core = Domain.objects.get(name="Core ML and AI Knowledge")
    missed = set(
        Response.objects.filter(attempt__in=mocks[1:], domain__in=[experimentation, core]).values_list("question_id", flat=True)
    )
    # The count takes one question per exclusion group, as a draw does.
    groups = dict(Question.objects.filter(pk__in=missed).values_list("pk", "exclusion_group"))
    matching = sum(1 for group in groups.values() if not group) + len({group for group in groups.values() if group})
    assert matching > 20

    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/dashboard/")
    card = page.locator("#practice-builder")
    with page.expect_response(is_count):
        card.get_by_role("checkbox", name="Experimentation (25%)").check()
    with page.expect_response(is_count):
        card.get_by_role("checkbox", name="Core ML and AI Knowledge (20%)").check()
    with page.expect_response(is_count):
        card.get_by_role("radio", name="Missed in my last mocks").check()
    expect(card.get_by_label("Mocks to look back over")).to_have_value("2")  # the default
    with page.expect_response(is_count):
        card.get_by_role("radio", name="Timed", exact=True).check()
    with page.expect_response(is_count):
        card.get_by_label("Minutes, if timed").fill("40")
        card.get_by_label("Minutes, if timed").blur()
    # The count follows the form as it changes, before anything starts.
    expect(page.locator("#match-count")).to_contain_text(f"{matching} questions match")
    expect(page.locator("#match-count")).to_contain_text("the session will draw 20")
    assert_accessible(page)
    screenshot(page, "7-practice-builder")
    card.get_by_role("button", name="Start practice").click()

    expect(page.get_by_role("heading", name="Question 1 of 20")).to_be_visible()
    expect(page.locator("#timer")).to_be_visible()
    practice = Attempt.objects.get(user=learner, mode=AttemptMode.PRACTICE, status=AttemptStatus.IN_PROGRESS)
    assert set(practice.responses.values_list("question_id", flat=True)) <= missed
    assert Counter(practice.responses.values_list("domain_id", flat=True)) == {experimentation.pk: 11, core.pk: 9}
    assert abs((practice.deadline - practice.started_at) - timedelta(minutes=40)) < timedelta(seconds=5)

    slots = {slot.position: slot for slot in practice.responses.select_related("question")}
    for position in (1, 2):
        slot = slots[position]
        keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
        for index, choice_id in enumerate(slot.choice_order):
            if choice_id in keys:
                with page.expect_response(is_save):
                    page.locator("label.choice").nth(index).click()
        with page.expect_response(is_save):
            page.get_by_role("button", name="Check answer").click()
        expect(page.get_by_role("heading", name="Right", exact=True)).to_be_visible()
        page.get_by_role("button", name="Bookmark", exact=True).click()
        expect(page.get_by_text("Bookmarked. Add a private note")).to_be_visible()
        expect(page.get_by_role("heading", name=f"Question {position} of 20")).to_be_visible()
        if position == 1:
            with page.expect_response(is_save):
                page.get_by_role("button", name="Next", exact=True).click()
            expect(page.get_by_role("heading", name="Question 2 of 20")).to_be_visible()
            page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")
    assert set(Bookmark.objects.filter(user=learner).values_list("question_id", flat=True)) == {
        slots[1].question_id, slots[2].question_id
    }

    page.get_by_role("link", name="Bookmarks", exact=True).click()
    expect(page.get_by_role("heading", name="Bookmarked", exact=True)).to_be_visible()
    expect(page.locator("article.bookmark")).to_have_count(2)
    assert_accessible(page)
    page.get_by_role("link", name=f"Write a note on “{slots[1].question.title}”").click()
    page.get_by_label("Your note").fill("Remember: **guidance scale** trades diversity for fidelity.")
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_text("Your note is saved.")).to_be_visible()
    note = page.locator("article.bookmark", has_text=slots[1].question.title).locator(".note-text strong")
    expect(note).to_have_text("guidance scale")
    screenshot(page, "8-bookmarks")
    assert Bookmark.objects.get(question_id=slots[1].question_id).note.startswith("Remember:")
