"""A mock taken with JavaScript off (issue 26): leaving by a header link after a pick loses nothing."""
import re

import pytest
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, QuestionKind, Response
from tests.browser.conftest import PHONE, assert_accessible, log_in_as
from tests.factories import QuestionFactory, UserFactory, exam_with_bank


def assert_accessible_without_script(page, checker) -> None:
    """axe on the page as the no-script browser drew it (<noscript> content shown, no script run).

    axe cannot run in a page whose scripts are off (it waits on timers that never fire), so the
    drawn document is checked in `checker`, a page with scripts on at the same origin: its
    <noscript> elements as the plain blocks the no-script browser showed, its scripts left out.
    """
    html = re.sub(r"<script\b[^>]*>.*?</script>", "", page.content(), flags=re.S)
    html = html.replace("<noscript>", '<div class="was-noscript">').replace("</noscript>", "</div>")
    checker.goto(page.url.split("/", 3)[0] + "//" + page.url.split("/", 3)[2] + "/accounts/login/")
    checker.set_content(html)
    assert checker.locator(".site-header .with-script").count() == 0 or checker.locator(".site-header .with-script").is_hidden()
    assert_accessible(checker)


def counter(page) -> str:
    """The choice counter's text as drawn without script (its <noscript> part included)."""
    return " ".join(page.locator("#pick-count").text_content().split())


@pytest.fixture
def no_script(browser, page_problems):
    contexts = []

    def open_page(**options):
        context = browser.new_context(java_script_enabled=False, **options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.mark.parametrize("screen_size", ["desktop", "phone"])
def test_leaving_by_a_header_link_after_a_pick_keeps_the_pick(no_script, browser, live_server, transactional_db, screen_size):
    checker = browser.new_context().new_page()
    page = no_script(**({"viewport": PHONE, "is_mobile": True, "has_touch": True} if screen_size == "phone" else {}))
    exam = exam_with_bank(weights=(100,), per_domain=2, question_count=3)
    QuestionFactory(domain=exam.domains.get(), kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "C"])
    learner = UserFactory(username="learner")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/")
    page.get_by_role("button", name="Start mock").click()
    mock = Attempt.objects.get(user=learner, mode=AttemptMode.MOCK)
    # (Playwright's text and role queries skip <noscript>; the browser shows its content, so CSS finds it.)
    expect(page.locator(".no-script-note")).to_contain_text("your pick is saved only when you press Save, Next, Previous or Review")
    expect(page.locator(".no-script-note")).to_be_visible()
    expect(page.locator(".site-header .with-script")).to_be_hidden()
    assert_accessible_without_script(page, checker)

    # A pick on a one-choice question, then on to the "Choose 2" question by the navigator: saved on the way.
    single = Response.objects.filter(attempt=mock, question__kind=QuestionKind.SINGLE).order_by("position").first()
    multiple = Response.objects.get(attempt=mock, question__kind=QuestionKind.MULTIPLE)
    page.goto(f"{live_server.url}/attempts/{mock.pk}/q/{single.position}/")
    page.locator("label.choice").nth(0).click()
    page.get_by_role("button", name=f"Question {multiple.position}, unanswered").click()
    expect(page.get_by_role("heading", name=f"Question {multiple.position} of 3")).to_be_visible()
    assert single.picks.count() == 1
    assert counter(page) == "0 of 2 chosen (as last saved)"
    page.locator("label.choice").nth(1).click()
    page.locator("button[name=go][value=stay]:not([hidden])").click()
    expect(page.locator("label.choice input").nth(1)).to_be_checked()
    assert counter(page) == "1 of 2 chosen: incomplete (as last saved)"

    # A second pick, then away by the header's Dashboard: saved first, then there.
    page.locator("label.choice").nth(3).click()
    leave = page.locator(".leave-links button[value=dashboard]")
    expect(leave).to_have_text("Save this answer and go to Dashboard")
    leave.click()
    expect(page).to_have_url(re.compile(r"/dashboard/$"))
    multiple.refresh_from_db()
    chosen = sorted(multiple.picks.values_list("choice_id", flat=True))
    assert chosen == sorted([multiple.choice_order[1], multiple.choice_order[3]])
    assert_accessible_without_script(page, checker)

    # Back in the mock: the picks are there and the server's counter says so.
    page.goto(f"{live_server.url}/attempts/{mock.pk}/q/{multiple.position}/")
    expect(page.locator("label.choice input").nth(1)).to_be_checked()
    assert counter(page) == "2 of 2 chosen (as last saved)"
    expect(page.locator("label.choice input").nth(3)).to_be_checked()
    # Out by Log out: the pick changed on the way is saved too.
    page.locator("label.choice").nth(3).click()
    page.locator("label.choice").nth(2).click()
    page.locator(".leave-links button[value=logout]").click()
    expect(page.get_by_role("heading", name="Logged out")).to_be_visible()
    assert sorted(multiple.picks.values_list("choice_id", flat=True)) == sorted([multiple.choice_order[1], multiple.choice_order[2]])
