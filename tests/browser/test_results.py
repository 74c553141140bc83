"""Results to study from, in Chromium on a desktop and three phones: the page of a 65-question
mock stays within six screens at 390×844, its grid jumps to any question, filters keep the
place with and without JavaScript, and an exhibit opens full size."""
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from exams.models import AttemptMode, Exam, Question, Response
from exams.room import services
from tests.browser.conftest import assert_accessible, log_in_as, watch
from tests.factories import UserFactory

SIZES = {"desktop": (1280, 800), "phone": (390, 844), "small phone": (360, 640), "large phone": (414, 896)}


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)
    exam = Exam.objects.get(code="NCA-GENM")
    exam.question_count = 65
    exam.save(update_fields=["question_count"])
    return exam


def answer(attempt, slot, *, right: bool) -> None:
    choices = list(slot.question.choices.all())
    keys = [choice.pk for choice in choices if choice.is_correct]
    attempt.record_answer(response=slot, choice_ids=keys if right else [next(c.pk for c in choices if not c.is_correct)])


def finished_mock(learner, exam):
    """65 slots: every fifth unanswered, every third (else) wrong, the rest right; every seventh flagged."""
    attempt = services.attempt_start(user=learner, exam=exam).attempt
    for slot in attempt.responses.select_related("question").prefetch_related("question__choices"):
        if slot.position % 5:
            answer(attempt, slot, right=slot.position % 3 != 0)
    Response.objects.filter(attempt=attempt, position__in=range(7, 66, 7)).update(flagged=True)
    services.attempt_submit(user=learner, attempt_id=attempt.pk)
    attempt.refresh_from_db()
    return attempt


def practice_with_exhibits(learner, exam):
    """A finished practice of an image exhibit's question and a table exhibit's."""
    image = Question.objects.filter(exam=exam, is_active=True, exhibit__contains="](exhibit:").order_by("pk").first()
    table = Question.objects.filter(exam=exam, is_active=True, exhibit__startswith="|").order_by("pk").first()
    attempt = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, question_ids=[image.pk, table.pk]).attempt
    for slot in attempt.responses.select_related("question").prefetch_related("question__choices"):
        answer(attempt, slot, right=False)
    services.attempt_submit(user=learner, attempt_id=attempt.pk)
    return attempt, image


def test_results_to_study_from_on_a_desktop_and_three_phones(browser, live_server, bank, page_problems):
    learner = UserFactory(username="studies")
    mock = finished_mock(learner, bank)
    practice, image_question = practice_with_exhibits(learner, bank)
    results = f"{live_server.url}/attempts/{mock.pk}/results/"
    alt = re.search(r"!\[([^\]]*)\]", image_question.exhibit).group(1)
    flagged_domain = Response.objects.get(attempt=mock, position=7).domain_id
    heights = {}
    for name, (width, height) in SIZES.items():
        phone = name != "desktop"
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
        page = context.new_page()
        watch(page, page_problems)
        log_in_as(page, live_server, learner)
        page.goto(results)
        # Score, per-domain table and chart on top; the grid names all 65.
        expect(page.get_by_role("heading", name=re.compile("results"))).to_be_visible()
        assert page.locator("table.domain-results").bounding_box()["y"] < page.locator("#questions").bounding_box()["y"]
        grid = page.get_by_role("navigation", name="Jump to a question")
        expect(grid.get_by_role("link")).to_have_count(65)
        heights[name] = page.evaluate("document.body.scrollHeight")
        print(name, heights[name])
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if (width, height) == (390, 844):
            assert heights[name] <= 6 * 844, heights
        assert_accessible(page)

        # The grid jumps to question 37 inside its closed domain group, which opens.
        grid.get_by_role("link", name=re.compile(r"^Question 37: ")).click()
        article = page.locator("#q-37")
        expect(article).to_be_in_viewport()
        expect(article.get_by_role("heading", name=re.compile("^Question 37:"))).to_be_visible()
        assert page.url.endswith("#q-37")
        assert_accessible(page)

        # A filter swaps the list in place: no reload, the address says it, the list's top
        # at the top of the screen (where a plain link without JavaScript lands too).
        page.evaluate("window.notReloaded = true")
        page.get_by_role("link", name="Flagged", exact=True).click()
        expect(page.get_by_role("link", name="Flagged", exact=True)).to_have_attribute("aria-current", "page")
        expect(page.locator("#questions article.result-item")).to_have_count(9)
        assert page.evaluate("window.notReloaded") is True
        assert "show=flagged" in page.url
        assert abs(page.locator("#questions").bounding_box()["y"]) < 2
        # A domain that holds a flagged question (the draw decides which domains do).
        page.get_by_label("Domain", exact=True).select_option(value=str(flagged_domain))
        page.get_by_role("button", name="Show").click()
        expect(page.locator("#questions details.domain-group")).to_have_count(1)
        assert "domain=" in page.url and page.evaluate("window.notReloaded") is True
        # A cell the filter leaves out goes to the whole list at that question.
        page.get_by_role("navigation", name="Jump to a question").get_by_role("link", name=re.compile(r"^Question 5: ")).click()
        expect(page.locator("#q-5")).to_be_in_viewport()
        assert "show=all" in page.url
        assert_accessible(page)

        # An exhibit shows with its question, keeps its description, and opens full size.
        page.goto(f"{live_server.url}/attempts/{practice.pk}/results/")
        page.locator("details.domain-group > summary").first.click()
        for summary in page.locator("details.domain-group:not([open]) > summary").all():
            summary.click()
        image = page.get_by_role("img", name=alt)
        expect(image).to_be_visible()
        box = image.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        assert_accessible(page)
        with context.expect_page() as opened:
            page.get_by_role("link", name=re.compile("Open full size")).first.click()
        full = opened.value
        full.wait_for_load_state()
        assert full.url.endswith(".png")
        assert full.evaluate("document.images[0].naturalWidth") >= 600
        context.close()
    # Without JavaScript: a filter is a link that reloads at the list, a grid cell still jumps.
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = context.new_page()
    log_in_as(page, live_server, learner)
    page.goto(results)
    page.get_by_role("link", name="Wrong or unanswered").click()
    expect(page.get_by_role("link", name="Wrong or unanswered")).to_have_attribute("aria-current", "page")
    assert page.url.endswith("?show=wrong#questions")
    assert abs(page.locator("#questions").bounding_box()["y"]) < 2
    page.get_by_role("link", name=re.compile(r"^Question 10: ")).click()
    expect(page.locator("#q-10")).to_be_in_viewport()
    context.close()
    print("results page heights:", heights)
    assert page_problems == []
