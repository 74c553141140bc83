"""The pages outside the exam room on a slow or broken link: results filters, bookmark notes,
the practice builder's count, and certainty in the exam room.

A request cut off on its way (Playwright aborts it) swaps nothing and the page says so beside
what asked, in a live region; the same action then works, and the message goes. A note whose
save was cut off is not in the database and stays in its box to be saved again.
"""
import re

import pytest
from playwright.sync_api import expect

from exams.models import AttemptMode, Bookmark, Certainty
from exams.room.services import attempt_start, attempt_submit
from tests.browser.conftest import log_in_as
from tests.browser.test_exam_room import SlowLink
from tests.factories import UserFactory, exam_with_bank

FAILED = "Could not reach certprep: nothing changed"


def CutOnce(page, pattern, *, method: str, delay: float = 0.8) -> SlowLink:
    """Requests matching `pattern` with `method`: the first cut off, the others held `delay` s."""
    return SlowLink(page, delay=delay, drop=lambda number: number == 1, pattern=pattern, method=method)


def forget_dropped(problems: list[str]) -> None:
    """The requests these tests cut off on purpose, and htmx's own console report of them."""
    problems[:] = [p for p in problems if "ERR_CONNECTION_RESET" not in p and not p.startswith(("htmx:sendError", "htmx:afterRequest"))]


def finished_practice(learner, exam, *, wrong: int):
    attempt = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=6).attempt
    for slot in attempt.responses.select_related("question").prefetch_related("question__choices"):
        choices = list(slot.question.choices.all())
        right = slot.position > wrong
        pick = [c.pk for c in choices if c.is_correct] if right else [next(c.pk for c in choices if not c.is_correct)]
        attempt.record_answer(response=slot, choice_ids=pick)
    attempt_submit(user=learner, attempt_id=attempt.pk)
    return attempt


def test_a_results_filter_cut_off_says_so_and_works_on_the_next_click(page, live_server, transactional_db, page_problems):
    exam = exam_with_bank(weights=(100,), per_domain=8, question_count=6, code="X-FILTER", is_published=True)
    learner = UserFactory(username="filters")
    practice = finished_practice(learner, exam, wrong=2)
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{practice.pk}/results/")
    listed = page.locator("#questions article.result-item")
    before = listed.count()
    assert before == 6

    link = CutOnce(page, re.compile(r"/attempts/\d+/results/\?show=wrong"), method="GET")
    filters = page.get_by_role("navigation", name="Filter questions")
    filters.get_by_role("link", name="Wrong or unanswered").click()
    failure = page.get_by_role("alert")
    expect(failure).to_contain_text(FAILED)
    assert listed.count() == before  # nothing swapped
    expect(filters).not_to_have_attribute("aria-busy", "true")

    filters.get_by_role("link", name="Wrong or unanswered").click()
    expect(filters).to_have_attribute("aria-busy", "true")  # the request is held on the slow link
    link.wait(1.0)
    expect(page).to_have_url(re.compile(r"show=wrong"))
    expect(listed).to_have_count(2)
    expect(page.get_by_role("alert")).to_have_count(0)
    forget_dropped(page_problems)


def test_a_bookmark_note_whose_save_is_cut_off_is_not_shown_saved_and_saves_on_retry(page, live_server, transactional_db, page_problems):
    exam = exam_with_bank(weights=(100,), per_domain=8, question_count=6, code="X-NOTE", is_published=True)
    learner = UserFactory(username="notes")
    practice = finished_practice(learner, exam, wrong=1)
    bookmark = Bookmark.objects.create(user=learner, question=practice.responses.get(position=1).question)
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/bookmarks/")

    link = CutOnce(page, re.compile(rf"/bookmarks/{bookmark.pk}/$"), method="POST")
    page.get_by_role("link", name=re.compile("Write a note")).click()
    box = page.get_by_role("textbox")
    box.fill("Check the flag's default before the exam.")
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_role("alert")).to_contain_text(FAILED)
    expect(box).to_have_value("Check the flag's default before the exam.")  # still there to save again
    expect(page.get_by_text("Your note is saved.")).to_have_count(0)
    bookmark.refresh_from_db()
    assert bookmark.note == ""

    page.get_by_role("button", name="Save note").click()
    link.wait(1.0)
    expect(page.get_by_text("Your note is saved.")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)
    bookmark.refresh_from_db()
    assert bookmark.note == "Check the flag's default before the exam."
    forget_dropped(page_problems)


def test_the_builders_count_cut_off_says_so_and_the_next_change_counts(page, live_server, transactional_db, page_problems):
    exam = exam_with_bank(weights=(50, 50), per_domain=8, question_count=6, code="X-BUILD", is_published=True)
    learner = UserFactory(username="builder")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/practice/")
    count = page.locator("#match-count")
    shown = count.inner_text()

    link = CutOnce(page, re.compile(rf"/exams/{exam.code}/practice/$"), method="POST", delay=0.3)
    boxes = page.locator("input[name=domains]")
    boxes.first.check()
    expect(page.get_by_role("alert")).to_contain_text(FAILED)
    assert count.inner_text() == shown

    boxes.first.uncheck()
    link.wait(0.5)
    boxes.nth(1).check()
    link.wait(0.5)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(count).not_to_have_text(shown)
    forget_dropped(page_problems)


def test_certainty_cut_off_on_a_slow_link_lands_on_its_question(page, live_server, transactional_db, page_problems):
    exam = exam_with_bank(weights=(100,), per_domain=6, question_count=6, code="X-SURE", is_published=True)
    learner = UserFactory(username="certain")
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=4).attempt
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{practice.pk}/q/1/")
    expect(page.get_by_role("group", name="How sure are you?")).to_be_visible()

    # 1.5 s a request, the second one (the certainty) cut off: the page retries it.
    link = SlowLink(page, delay=1.5, drop=lambda number: number == 2)
    page.locator("#attempt-main input[name=choice][value='2']").click()
    link.wait(0.2)
    page.get_by_role("group", name="How sure are you?").get_by_label("Guessing").check()
    link.wait(0.2)
    page.locator("#attempt-main button[value=next]").click()
    link.wait(0.3)
    # Still on question 1 while Next is held: nothing is acted on until question 2 is shown.
    expect(page.locator("#attempt-main")).to_have_attribute("data-position", "1")
    link.settle()  # the cut-off certainty is retried, then Next lands
    expect(page.locator("#attempt-main")).to_have_attribute("data-position", "2")
    page.locator("#attempt-main input[name=choice][value='1']").click()
    link.wait(0.2)
    page.get_by_role("group", name="How sure are you?").get_by_label("Sure", exact=True).check()
    link.settle()
    expect(page.locator("#save-status")).to_have_text("Saved")

    first, second = practice.responses.order_by("position")[:2]
    assert (first.certainty, second.certainty) == (Certainty.GUESS, Certainty.SURE)
    assert first.picks.count() == 1 and second.picks.count() == 1
    forget_dropped(page_problems)
