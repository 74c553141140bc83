"""The admin an instructor works in, at 1,280 px in Chromium: what was off-screen or cut off is in view."""
import re

from playwright.sync_api import expect

from exams.bank.errata.disputes import dispute_report
from exams.roles import instructors_group
from exams.room.services import attempt_finish, attempt_start
from exams.statistics.refresh import item_statistics_refresh
from tests.browser.conftest import assert_accessible, log_in_as, watch
from tests.factories import UserFactory, exam_with_bank

DESKTOP = {"width": 1280, "height": 800}
LONG_CHOICE = (
    "A deliberately long choice that states a whole sentence about classifier-free guidance scales, "
    "so that a label cut at sixty characters or clipped by a fixed-width column would lose its ending: END"
)


def right_edge(locator) -> float:
    box = locator.bounding_box()
    return box["x"] + box["width"]


def test_the_errata_queue_triage_and_question_list_fit_1280_px(browser, live_server, transactional_db, page_problems, screenshot):
    exam = exam_with_bank(weights=(100,), per_domain=10, code="NCA-GENM-LONG-CODE", title="A long exam title " * 4)
    question = exam.questions.order_by("pk").first()
    question.choices.filter(label="C").update(text=LONG_CHOICE)
    learner = UserFactory(username="taker")
    attempt = attempt_start(user=learner, exam=exam).attempt
    for slot in attempt.responses.select_related("question"):
        attempt.record_answer(response=slot, choice_ids=[slot.question.choices.get(label="B").pk])
    from django.db import transaction

    with transaction.atomic():
        attempt_finish(attempt=type(attempt).objects.select_for_update().get(pk=attempt.pk), expired=False)
    dispute_report(user=learner, response=attempt.responses.get(question=question),
                   choice_ids=[question.choices.get(label="B").pk], reason="B is right.")
    item_statistics_refresh(exam=exam)

    teacher = UserFactory(username="teacher", is_staff=True)
    teacher.groups.add(instructors_group())
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    watch(page, page_problems)
    log_in_as(page, live_server, teacher)

    # The queue: open errata by default, Triage in view on every row.
    page.goto(f"{live_server.url}/admin/exams/erratum/")
    expect(page.locator("#changelist-filter li.selected").first).to_have_text("Reported")
    triage = page.get_by_role("link", name="Triage").first
    expect(triage).to_be_in_viewport()
    assert right_edge(triage) <= DESKTOP["width"]
    assert page.locator("#changelist .results").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert_accessible(page)
    triage.click()

    # Triage: real breadcrumbs, and each choice's whole text beside its checkbox.
    expect(page.locator("nav ol.breadcrumbs li[aria-current=page]")).to_contain_text("Triage")
    label = page.locator(".field-corrected_key label", has_text="END")
    expect(label).to_contain_text(LONG_CHOICE)
    assert label.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert right_edge(label) <= DESKTOP["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    assert_accessible(page)
    screenshot(page, "admin-1280-triage")

    # The question list: every column in view at 1,280 px.
    page.goto(f"{live_server.url}/admin/exams/question/?exam__id__exact={exam.pk}")
    headers = page.locator("#result_list thead th")
    expect(headers.last).to_contain_text(re.compile("Mis-key", re.I))
    results = page.locator("#changelist .results")
    # Nothing scrolled out of the list's own box, and the box within the window.
    assert results.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    for index in range(headers.count()):
        assert right_edge(headers.nth(index)) <= right_edge(results) + 1, headers.nth(index).inner_text()
    assert right_edge(results) <= DESKTOP["width"]
    expect(page.locator("#result_list tbody td.field-exam_code").first).to_have_text(exam.code)
    expect(page.locator("#result_list tbody td.field-statistics_n").first).to_have_text("too few attempts (n = 1)")
    assert_accessible(page)
    screenshot(page, "admin-1280-questions")

    # The question: one compact row per choice, no Delete offered.
    page.goto(f"{live_server.url}/admin/exams/question/{question.pk}/change/")
    rows = page.locator(".inline-group .tabular tr.form-row.has_original")
    expect(rows).to_have_count(4)
    for index in range(4):
        assert rows.nth(index).bounding_box()["height"] < 120
    expect(page.get_by_role("link", name="Delete")).to_have_count(0)
    screenshot(page, "admin-1280-question")
    context.close()
    assert page_problems == []
