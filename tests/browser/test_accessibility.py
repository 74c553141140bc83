"""Every page, learner and instructor, scanned by axe-core; a mock by keyboard alone; the countdown's voice."""
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, Bookmark, Erratum, Exam, Question
from exams.roles import instructors_group
from exams.room import services
from tests.browser.conftest import PHONE, assert_accessible, log_in_as, watch
from tests.factories import UserFactory, exam_with_bank


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)
    return Exam.objects.get(code="NCA-GENM")


def learner_pages(live_server, learner, exam) -> dict[str, str]:
    """Every learner page, with the data each needs to show its full content."""
    finished = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=3).attempt
    for slot in finished.responses.all():
        finished.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        services.attempt_check(attempt=finished, response=slot)
    # Practice first: none may start while a mock of the exam runs.
    practice = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=2).attempt
    checked = practice.responses.get(position=1)
    practice.record_answer(response=checked, choice_ids=[checked.choice_order[0]])
    services.attempt_check(attempt=practice, response=checked)
    mock = services.attempt_start(user=learner, exam=exam).attempt
    noted = Bookmark.objects.create(user=learner, question=checked.question, note="Remember **this** one:\n\n- a list\n- `code`")
    # One bookmark of a question of the running mock: shown without its key, explanation or note.
    Bookmark.objects.create(user=learner, question=mock.responses.get(position=1).question, note="hidden")
    base = live_server.url
    return {
        "catalogue": f"{base}/",
        "exam start": f"{base}/exams/{exam.code}/",
        "dashboard": f"{base}/dashboard/",
        "mock question": f"{base}/attempts/{mock.pk}/q/1/",
        "mock review": f"{base}/attempts/{mock.pk}/review/",
        "practice checked": f"{base}/attempts/{practice.pk}/q/1/",
        "results": f"{base}/attempts/{finished.pk}/results/",
        "report": f"{base}/attempts/{finished.pk}/q/1/report/",
        "practice builder": f"{base}/exams/{exam.code}/practice/",
        "bookmarks": f"{base}/bookmarks/",
        "bookmark note": f"{base}/bookmarks/{noted.pk}/",
        "bookmark remove": f"{base}/bookmarks/{noted.pk}/delete/",
        "profile": f"{base}/accounts/profile/",
        "password change": f"{base}/accounts/password_change/",
    }


PUBLIC_PAGES = ["/accounts/login/", "/accounts/signup/", "/accounts/password_reset/", "/accounts/password_reset/done/"]


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_every_learner_page_passes_axe_and_fits_a_phone(browser, live_server, bank, page_problems, viewport):
    learner = UserFactory(username=f"scan-{viewport}")
    context = browser.new_context(**({"viewport": PHONE, "is_mobile": True} if viewport == "phone" else {}))
    page = context.new_page()
    watch(page, page_problems)
    for path in PUBLIC_PAGES:
        page.goto(f"{live_server.url}{path}")
        assert_accessible(page)
    log_in_as(page, live_server, learner)
    for name, url in learner_pages(live_server, learner, bank).items():
        page.goto(url)
        assert_accessible(page)
        if viewport == "phone":
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} scrolls sideways on a phone ({width}px)"
    context.close()
    assert page_problems == []


def test_every_instructor_page_passes_axe(page, live_server, bank, learner_with_history):
    instructor = UserFactory(username="scan-teacher", is_staff=True)
    instructor.groups.add(instructors_group())
    question = Question.objects.get(pk=3)
    log_in_as(page, live_server, instructor)
    base = f"{live_server.url}/admin"
    pages = [
        f"{base}/", f"{base}/exams/exam/", f"{base}/exams/exam/{bank.pk}/change/",
        f"{base}/exams/question/", f"{base}/exams/question/?open_erratum=yes",
        f"{base}/exams/question/{question.pk}/change/", f"{base}/exams/question/add/",
        f"{base}/exams/erratum/", f"{base}/exams/erratum/{Erratum.objects.first().pk}/change/",
        f"{base}/exams/attempt/", f"{base}/exams/question/import/", f"{base}/jobs/job/",
    ]
    for url in pages:
        page.goto(url)
        expect(page.locator("#content")).to_be_visible()
        assert_accessible(page)


@pytest.fixture
def learner_with_history(bank):
    learner = UserFactory(username="history")
    attempt = services.attempt_start(user=learner, exam=bank).attempt
    services.attempt_submit(user=learner, attempt_id=attempt.pk)
    return learner


def focus_by_tab(page, name: str, *, limit: int = 120) -> None:
    """Press Tab until the focused control's accessible name is `name` (a keyboard user's path)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement; return (e.getAttribute('aria-label') || e.innerText || e.value || '').trim(); }"
        )
        if focused == name:
            return
    raise AssertionError(f"{name!r} was not reached with Tab")


def test_a_whole_mock_with_the_keyboard_alone(page, live_server, transactional_db):
    learner = UserFactory(username="keys-only")
    exam = exam_with_bank(weights=(60, 40), per_domain=8, question_count=8)
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/{exam.code}/")
    focus_by_tab(page, "Start mock")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    for position in range(1, 9):
        with page.expect_response(lambda r: r.request.method == "POST" and "/q/" in r.url):
            page.keyboard.press(str(1 + position % 4))
        expect(page.get_by_role("status")).to_have_text("Saved")
        if position < 8:
            with page.expect_response(lambda r: r.request.method == "POST" and "/q/" in r.url):
                page.keyboard.press("n")
            expect(page.get_by_role("heading", name=f"Question {position + 1} of 8")).to_be_visible()
            page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")
    focus_by_tab(page, "Review")
    page.keyboard.press("Enter")
    expect(page.get_by_text("8 questions: 0 unanswered")).to_be_visible()
    focus_by_tab(page, "Submit")
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    focus_by_tab(page, "Submit", limit=5)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("results"))).to_be_visible()
    assert Attempt.objects.get(user=learner).responses.filter(answered_at__isnull=False).count() == 8


def test_the_countdown_speaks_only_at_its_warnings(page, live_server, transactional_db):
    learner = UserFactory(username="listener")
    exam = exam_with_bank()
    attempt = services.attempt_start(user=learner, exam=exam).attempt
    log_in_as(page, live_server, learner)
    timer = page.locator("#timer")
    alert = page.locator("#timer-alert")

    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(minutes=5, seconds=3))
    page.goto(f"{live_server.url}/attempts/{attempt.pk}/q/1/")
    assert timer.get_attribute("role") == "timer" and timer.get_attribute("aria-live") is None
    assert alert.get_attribute("aria-live") == "assertive"
    expect(alert).to_have_text("")
    expect(alert).to_have_text("5 minutes left.", timeout=8000)
    # The countdown keeps ticking without a word to screen readers in between.
    first = page.locator("#timer-value").inner_text()
    page.wait_for_timeout(1500)
    assert page.locator("#timer-value").inner_text() != first
    expect(alert).to_have_text("5 minutes left.")

    # Opened with the 5-minute mark already past: nothing is announced until 1 minute.
    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=63))
    page.reload()
    expect(alert).to_have_text("")
    page.wait_for_timeout(1000)
    expect(alert).to_have_text("")
    expect(alert).to_have_text("1 minute left.", timeout=8000)


# What sticks out: the first elements whose right edge passes the screen's.
WIDEST = """() => [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > 391)
  .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def test_every_question_of_the_bank_fits_a_phone(browser, live_server, bank):
    """Long flags, paths and identifiers in questions wrap: no page of any question scrolls sideways."""
    learner = UserFactory(username="every-question")
    # Layout only: one session must hold every question, so exclusion groups are set aside.
    bank.questions.update(exclusion_group="")
    count = bank.questions.filter(is_active=True).count()
    checked = services.attempt_start(user=learner, exam=bank, mode=AttemptMode.PRACTICE, count=count).attempt
    for slot in checked.responses.all():
        checked.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        services.attempt_check(attempt=checked, response=slot)
    open_session = services.attempt_start(user=learner, exam=bank, mode=AttemptMode.PRACTICE, count=count).attempt
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    page = context.new_page()
    log_in_as(page, live_server, learner)
    # Results show every stem, choice, feedback and explanation at once; the question
    # pages show the choices as the controls a learner taps.
    urls = [f"{live_server.url}/attempts/{checked.pk}/results/"]
    urls += [f"{live_server.url}/attempts/{open_session.pk}/q/{position}/" for position in range(1, count + 1)]
    too_wide = {}
    for url in urls:
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[url] = (width, page.evaluate(WIDEST))
    assert too_wide == {}
    assert open_session.responses.count() == count
    context.close()
