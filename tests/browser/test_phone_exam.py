"""A phone-first exam page, on three phones (Playwright's device emulation: touch, mobile
viewport): on every question of a mock the exhibit's top, or the stem's first line, shows
without scrolling; the timer and the save status share one line; a tall exhibit folds
behind "Show exhibit"; an image opens full size on a tap; Next says it is busy while a move
waits; the mock-score chart keeps its "100%"."""
import random
import re
import time

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from exams.models import AttemptMode, Exam, Question
from exams.room import services
from tests.browser.conftest import assert_accessible, log_in_as, watch
from tests.factories import UserFactory

PHONES = {"390x844": (390, 844), "360x640": (360, 640), "414x896": (414, 896)}
LINE = 24  # a line of text, in CSS pixels: "visible" means at least this much of it is on screen


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)
    return Exam.objects.get(code="NCA-GENM")


def exhibit_mock(learner, exam):
    """A timed mock of 60 questions holding every exhibit of the bank (the rest the longest stems):
    the draw is bypassed so every exhibit is on it, whatever the seed."""
    active = Question.objects.filter(exam=exam, is_active=True)
    exhibits = list(active.exclude(exhibit="").values_list("pk", flat=True))
    others = sorted(active.filter(exhibit="").values_list("pk", "stem"), key=lambda row: -len(row[1]))
    question_ids = exhibits + [pk for pk, _ in others[: 60 - len(exhibits)]]
    random.Random(26).shuffle(question_ids)
    return services._create(user=learner, exam=exam, mode=AttemptMode.MOCK, domain=None, question_ids=question_ids,
                            rng=random.Random(26))


def phone(browser, page_problems, width, height):
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True)
    page = context.new_page()
    watch(page, page_problems)
    return context, page


def first_screen_problems(page, width: int, height: int) -> list[str]:
    """What the first screen of this question lacks."""
    problems = []
    fold = page.locator("#attempt-main details.exhibit-fold")
    stem = page.locator("#attempt-main .stem").bounding_box()
    if fold.count():
        folded = fold.get_attribute("open") is None
        top = page.locator("#attempt-main .exhibit-fold > summary" if folded else "#attempt-main .exhibit").bounding_box()
        if not (0 <= top["y"] and top["y"] + LINE <= height):
            problems.append(f"exhibit top at {top['y']:.0f}")
        if folded and stem["y"] + LINE > height:
            problems.append(f"folded exhibit, but the stem starts at {stem['y']:.0f}")
        figure = page.locator("#attempt-main .exhibit").bounding_box()
        if not folded and figure["x"] + figure["width"] > width + 0.5:
            problems.append("exhibit wider than the screen")
    elif not (0 <= stem["y"] and stem["y"] + LINE <= height):
        problems.append(f"stem starts at {stem['y']:.0f}")
    timer = page.locator("#timer").bounding_box()
    status = page.locator("#save-status").bounding_box()
    if abs((timer["y"] + timer["height"] / 2) - (status["y"] + status["height"] / 2)) > 8:
        problems.append(f"timer at {timer['y']:.0f}, save status at {status['y']:.0f}")
    if page.locator("#save-detail").bounding_box() is not None and page.locator("#save-detail").bounding_box()["height"] > 0:
        problems.append("the empty status line takes room")
    if page.locator("#question-actions").bounding_box()["height"] > 80:  # one row: 44 px and its padding
        problems.append("the button bar takes two rows")
    if page.evaluate("document.documentElement.scrollWidth") > width:
        problems.append("scrolls sideways")
    return problems


@pytest.mark.parametrize("size", list(PHONES))
def test_every_question_of_a_mock_starts_on_the_first_screen(browser, live_server, bank, page_problems, size):
    width, height = PHONES[size]
    learner = UserFactory(username=f"phone-{size}")
    attempt = exhibit_mock(learner, bank)
    context, page = phone(browser, page_problems, width, height)
    log_in_as(page, live_server, learner)
    tall, folded_seen = [], False
    failures = {}
    for position in range(1, 61):
        page.goto(f"{live_server.url}/attempts/{attempt.pk}/q/{position}/")
        expect(page.get_by_role("heading", name=f"Question {position} of 60")).to_be_visible()
        problems = first_screen_problems(page, width, height)
        if problems:
            failures[position] = problems
        if page.locator("#attempt-main details.exhibit-fold:not([open])").count():
            tall.append(position)
            if not folded_seen:
                folded_seen = True
                assert_accessible(page)
                page.get_by_text("Show exhibit").tap()
                expect(page.locator("#attempt-main .exhibit")).to_be_visible()
                expect(page.get_by_text("Hide exhibit")).to_be_visible()
                assert_accessible(page)
        if position == 1:
            assert_accessible(page)
    assert failures == {}
    assert tall, "no exhibit of the bank folds on this phone"
    print(size, "folded exhibits at positions", tall)
    context.close()
    assert page_problems == []


def test_an_exhibit_image_opens_full_size_and_next_is_busy_while_it_waits(browser, live_server, bank, page_problems):
    learner = UserFactory(username="phone-taps")
    attempt = exhibit_mock(learner, bank)
    context, page = phone(browser, page_problems, 390, 844)
    log_in_as(page, live_server, learner)
    image_at = next(
        slot.position for slot in attempt.responses.select_related("question").order_by("position")
        if "](exhibit:" in slot.question.exhibit
    )
    page.goto(f"{live_server.url}/attempts/{attempt.pk}/q/{image_at}/")
    image = page.locator("#attempt-main .exhibit img")
    expect(image).to_be_visible()
    box = image.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    with context.expect_page() as opened:
        image.tap()
    full = opened.value
    full.wait_for_load_state()
    assert full.url.endswith(".png") and full.evaluate("document.images[0].naturalWidth") > box["width"]
    full.close()

    # On a slow link Next says it is busy until the next question is drawn.
    held = []
    page.route(re.compile(r"/attempts/\d+/q/\d+/$"), lambda route: held.append(route) if route.request.method == "POST" else route.continue_())
    next_button = page.locator("#attempt-main button[value=next]")
    next_button.tap()
    expect(next_button).to_have_attribute("aria-busy", "true")
    time.sleep(0.3)
    assert held, "the move never left"
    held[0].continue_()
    expect(page.get_by_role("heading", name=f"Question {image_at + 1} of 60")).to_be_visible()
    expect(page.locator("#attempt-main [aria-busy]")).to_have_count(0)
    context.close()
    assert page_problems == []


def test_the_mock_score_chart_keeps_its_labels_on_a_phone(browser, live_server, bank, page_problems):
    learner = UserFactory(username="phone-chart")
    attempt = services.attempt_start(user=learner, exam=bank).attempt
    services.attempt_submit(user=learner, attempt_id=attempt.pk)
    for width, height in PHONES.values():
        context, page = phone(browser, page_problems, width, height)
        log_in_as(page, live_server, learner)
        page.goto(f"{live_server.url}/dashboard/")
        chart = page.locator("svg.trend-chart")
        expect(chart).to_be_visible()
        frame = chart.bounding_box()
        for label in ("0%", "50%", "100%"):
            text = chart.locator("text.chart-label", has_text=re.compile(rf"^{label}$")).bounding_box()
            assert text["x"] >= frame["x"] and text["y"] >= frame["y"], (label, text, frame)
            assert text["height"] >= 11, (label, text)
        context.close()
    assert page_problems == []
