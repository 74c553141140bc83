"""The exam room on a slow or broken link: every action lands on the question the learner
saw, the status tells the truth, and the candidate tools work by mouse, keyboard and touch.

Requests to the question URL are held by Playwright for a set delay (or aborted) and released
from the test's own clock, so actions overlap requests in flight as they do on a bad link.
The database is then compared with what the learner did, slot by slot.
"""
import random
import re
import time
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from exams.models import Attempt, AttemptMode, AttemptStatus
from exams.room.services import attempt_start
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank


@pytest.fixture
def bank(transactional_db):
    from django.core.management import call_command

    call_command("load_bank", verbosity=0)


SAVE_URL = re.compile(r"/attempts/\d+/q/\d+/(\?.*)?$")


class SlowLink:
    """Holds each POST to a question URL (or each `method` request to `pattern`) for `delay`
    seconds; aborts the ones `drop` picks."""

    def __init__(self, page, *, delay: float, drop=lambda number: False, pattern=SAVE_URL, method: str = "POST"):
        self.page, self.delay, self.drop, self.method = page, delay, drop, method
        self.held: list[tuple[float, object]] = []
        self.posts = 0
        page.route(pattern, self._hold)

    def _hold(self, route):
        if route.request.method != self.method:
            route.continue_()
            return
        self.posts += 1
        if self.drop(self.posts):
            route.abort("connectionreset")
            return
        self.held.append((time.monotonic() + self.delay, route))

    def wait(self, seconds: float) -> None:
        """Let `seconds` pass on the page, releasing each held request when its delay is up."""
        end = time.monotonic() + seconds
        while True:
            now = time.monotonic()
            for due, route in list(self.held):
                if due <= now:
                    self.held.remove((due, route))
                    try:
                        route.continue_()
                    except PlaywrightError:
                        pass  # the page left and took the request with it
            if now >= end:
                return
            self.page.wait_for_timeout(15)

    def settle(self, timeout: float = 60) -> None:
        """Wait until the page has nothing queued and nothing is held."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.wait(0.05)
            queued = self.page.evaluate("(document.getElementById('attempt') || {dataset: {}}).dataset.queued")
            if not self.held and queued in ("0", None):
                self.wait(0.3)
                if not self.held and self.page.evaluate("document.getElementById('attempt').dataset.queued") in ("0", None):
                    return
        raise AssertionError("the page never finished saving")


@dataclass
class Slot:
    pick: set = field(default_factory=set)  # positions shown, 1-based
    flagged: bool = False
    struck: set = field(default_factory=set)


class Learner:
    """Acts on the page and keeps what each action meant for the slot on screen at that moment."""

    def __init__(self, page, link: SlowLink, slots: int):
        self.page, self.link = page, link
        self.slots = {position: Slot() for position in range(1, slots + 1)}
        self.count = slots
        self.log: list[str] = []

    def shown(self) -> int:
        return int(self.page.locator("#attempt-main").get_attribute("data-position"))

    def acted_on(self) -> int:
        """The slot on screen when the page received the last click or key: a response may
        swap in the next question between reading the screen and acting, as for a person."""
        return int(self.page.evaluate("window.__actedOn"))

    def pick(self, choice: int, *, by: str = "mouse") -> None:
        if choice in self.slots[self.shown()].struck:
            return
        if by == "key":
            self.page.keyboard.press(str(choice))
        else:
            self.page.locator(f"#attempt-main input[name=choice][value='{choice}']").click(force=by == "tap")
        position = self.acted_on()
        slot = self.slots[position]
        self.log.append(f"pick {choice} on {position} by {by}")
        if choice not in slot.struck:
            slot.pick = {choice}

    def flag(self, *, by: str = "mouse") -> None:
        if by == "key":
            self.page.keyboard.press("f")
        else:
            self.page.locator("#attempt-main .flag-button").click()
        position = self.acted_on()
        self.log.append(f"flag on {position} by {by}")
        self.slots[position].flagged = not self.slots[position].flagged

    def strike(self, choice: int) -> None:
        self.page.locator(f"#attempt-main .choice-row[data-position='{choice}'] .strike-button").click()
        position = self.acted_on()
        slot = self.slots[position]
        self.log.append(f"strike {choice} on {position}")
        slot.struck ^= {choice}
        slot.pick -= slot.struck

    def move(self, how: str, *, by: str = "mouse") -> None:
        position = self.shown()
        self.log.append(f"{how} from {position} by {by}")
        if how == "next" and position < self.count:
            self.page.keyboard.press("n") if by == "key" else self.page.locator("#attempt-main button[value=next]").click()
        elif how == "prev" and position > 1:
            self.page.keyboard.press("p") if by == "key" else self.page.locator("#attempt-main button[value=prev]").click()
        elif how.startswith("jump"):
            target = int(how[4:])
            self.page.locator(f"#nav-{target}").click()

    def stored(self, attempt: Attempt) -> dict[int, Slot]:
        result = {}
        for response in attempt.responses.prefetch_related("picks", "strikes"):
            where = {choice_id: index for index, choice_id in enumerate(response.choice_order, start=1)}
            result[response.position] = Slot(
                pick={where[p.choice_id] for p in response.picks.all()},
                flagged=response.flagged,
                struck={where[s.choice_id] for s in response.strikes.all()},
            )
        return result


def start_mock(page, live_server, *, questions: int = 10, name: str = "slow"):
    learner = UserFactory(username=name)
    exam = exam_with_bank(weights=(100,), per_domain=questions, question_count=questions, code=f"X-{name}", is_published=True)
    attempt = attempt_start(user=learner, exam=exam).attempt
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{attempt.pk}/q/1/")
    expect(page.get_by_role("heading", name=f"Question 1 of {questions}")).to_be_visible()
    # Record, as each click or key arrives, which question is on screen (see Learner.acted_on).
    page.evaluate(
        """() => { for (const type of ['click', 'keydown']) document.addEventListener(type, () => {
             const form = document.getElementById('attempt-main');
             window.__actedOn = form ? form.dataset.position : null; }, true); }"""
    )
    return attempt


@pytest.mark.parametrize("delay", [0.5, 1.5])
def test_next_then_flag_then_a_pick_land_on_the_questions_they_were_made_on(page, live_server, delay):
    """The reported case: Next, 0.3 s later Flag, 0.3 s later a pick, all while a save is held."""
    attempt = start_mock(page, live_server, name=f"next-flag-pick-{int(delay * 10)}")
    link = SlowLink(page, delay=delay)
    learner = Learner(page, link, 10)
    learner.pick(2)
    learner.move("next")
    link.wait(0.3)
    learner.flag()
    link.wait(0.3)
    learner.pick(3)
    link.settle()
    expect(page.get_by_role("heading", name="Question 2 of 10")).to_be_visible()
    assert learner.stored(attempt) == learner.slots, learner.log
    expect(page.locator("#save-status")).to_have_text("Saved")


@pytest.mark.parametrize("seed", range(6))
def test_quick_random_sequences_under_delays_and_dropped_requests(page, live_server, page_problems, seed):
    rng = random.Random(seed)
    delay = (0.5, 1.5)[seed % 2]
    # Every fifth request is cut off once; the page must say "Not saved" and retry it.
    attempt = start_mock(page, live_server, name=f"random-{seed}")
    link = SlowLink(page, delay=delay, drop=lambda number: number % 5 == 3)
    learner = Learner(page, link, 10)
    for _ in range(14):
        action = rng.choice(["pick", "pick", "pick", "flag", "next", "next", "prev", "jump", "strike"])
        by = rng.choice(["mouse", "key"])
        if action == "pick":
            learner.pick(rng.randint(1, 4), by=by)
        elif action == "flag":
            learner.flag(by=by)
        elif action == "strike":
            learner.strike(rng.randint(1, 4))
        elif action == "jump":
            learner.move(f"jump{rng.randint(1, 10)}")
        else:
            learner.move(action, by=by)
        link.wait(rng.choice([0.1, 0.3, 0.6]))
    link.settle()
    assert learner.stored(attempt) == learner.slots, learner.log
    expect(page.locator("#save-status")).to_have_text("Saved")
    forget_dropped(page_problems)


def forget_dropped(problems: list[str]) -> None:
    """The requests this test cut off on purpose are not problems of the page."""
    problems[:] = [problem for problem in problems if "ERR_CONNECTION_RESET" not in problem]


def test_a_failed_save_says_not_saved_then_retries_until_saved(page, live_server, page_problems):
    attempt = start_mock(page, live_server, name="retry")
    link = SlowLink(page, delay=0.2, drop=lambda number: number <= 2)
    learner = Learner(page, link, 10)
    learner.pick(1)
    expect(page.locator("#save-status")).to_have_text("Not saved")
    expect(page.locator("#save-detail")).to_contain_text("retrying")
    link.settle()
    expect(page.locator("#save-status")).to_have_text("Saved")
    assert learner.stored(attempt) == learner.slots
    forget_dropped(page_problems)


def test_after_moves_and_flags_the_status_is_saved_not_saving(page, live_server):
    start_mock(page, live_server, name="status")
    link = SlowLink(page, delay=0.5)
    learner = Learner(page, link, 10)
    learner.pick(1)
    expect(page.locator("#save-status")).to_have_text("Saving…")
    link.settle()
    expect(page.locator("#save-status")).to_have_text("Saved")
    for act in (lambda: learner.move("next"), learner.flag, lambda: learner.move("prev"), lambda: learner.move("jump5")):
        act()
        link.settle()
        expect(page.locator("#save-status")).to_have_text("Saved")
        expect(page.locator("#save-detail")).to_have_text("")


def test_review_right_after_a_pick_stores_the_pick_and_flashes_no_failure(page, live_server):
    attempt = start_mock(page, live_server, name="review")
    link = SlowLink(page, delay=0.8)
    learner = Learner(page, link, 10)
    failures = []
    learner.pick(4)
    page.locator("#attempt-main .review-button").click()
    while "/review/" not in page.url:
        try:
            status = page.evaluate("[(document.getElementById('save-status') || {}).textContent, (document.getElementById('save-detail') || {}).textContent]")
        except PlaywrightError:
            status = None  # the page is leaving for the review
        if status and status[0] == "Not saved":
            failures.append(status[1])
        link.wait(0.05)
    expect(page.get_by_role("heading", name="Review your answers")).to_be_visible()
    assert failures == []
    assert learner.stored(attempt)[1].pick == {4}


def test_a_pick_then_a_header_link_is_stored_before_the_page_leaves(page, live_server):
    attempt = start_mock(page, live_server, name="leave")
    page.locator("#attempt-main input[name=choice][value='3']").click()
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name=re.compile("Dashboard|Your progress", re.I))).to_be_visible()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not attempt.responses.get(position=1).picks.exists():
        page.wait_for_timeout(100)
    slot = attempt.responses.get(position=1)
    assert [slot.choice_order.index(p.choice_id) + 1 for p in slot.picks.all()] == [3]


def test_after_a_move_the_new_heading_has_focus_and_sits_below_the_sticky_bar(page, live_server):
    start_mock(page, live_server, name="focus")
    page.set_viewport_size({"width": 1000, "height": 500})
    page.locator("#attempt-main input[name=choice][value='1']").click()
    page.mouse.wheel(0, 2000)
    page.locator("#attempt-main button[value=next]").click()
    expect(page.get_by_role("heading", name="Question 2 of 10")).to_be_focused()
    bar = page.locator(".attempt-bar").bounding_box()
    heading = page.locator("#question-heading").bounding_box()
    assert heading["y"] >= bar["y"] + bar["height"] - 1, (bar, heading)
    assert heading["y"] + heading["height"] <= 500


def test_strike_outs_by_button_and_key_survive_a_reload_and_block_picks(page, live_server):
    attempt = start_mock(page, live_server, name="strike")
    link = SlowLink(page, delay=0.0)
    learner = Learner(page, link, 10)
    learner.pick(2)
    learner.strike(2)
    expect(page.get_by_role("button", name="Restore B")).to_be_visible()
    expect(page.locator("#attempt-main input[value='2']")).to_be_disabled()
    page.locator("#attempt-main input[name=choice][value='3']").focus()
    page.keyboard.press("x")
    learner.slots[1].struck.add(3)
    link.settle()
    assert learner.stored(attempt) == learner.slots
    assert_accessible(page)
    page.reload()
    expect(page.get_by_role("button", name="Restore B")).to_be_visible()
    expect(page.get_by_role("button", name="Restore C")).to_be_visible()
    expect(page.get_by_role("button", name="Strike out A")).to_be_visible()


def test_at_zero_the_results_load_within_three_seconds_when_nothing_is_in_flight(page, live_server):
    attempt = start_mock(page, live_server, name="zero")
    page.locator("#attempt-main input[name=choice][value='1']").click()
    expect(page.locator("#save-status")).to_have_text("Saved")
    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=2))
    page.reload()
    started = time.monotonic()
    page.wait_for_url(re.compile(r"/results/"), timeout=15_000)
    assert time.monotonic() - started <= 2 + 3
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.EXPIRED and attempt.right_count is not None


def test_at_zero_with_a_save_in_flight_the_results_load_within_ten_seconds(page, live_server):
    attempt = start_mock(page, live_server, name="zero-busy")
    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=3))
    page.reload()
    link = SlowLink(page, delay=2.5)
    page.wait_for_timeout(1800)
    page.locator("#attempt-main input[name=choice][value='2']").click()
    zero = time.monotonic() + 1.2
    while "/results/" not in page.url and time.monotonic() < zero + 12:
        link.wait(0.05)
    assert "/results/" in page.url and time.monotonic() - zero <= 10
    slot = attempt.responses.get(position=1)
    assert slot.picks.count() == 1, "the pick made before zero was saved before the submit"


def test_timer_hides_and_comes_back_with_a_visible_banner_at_five_minutes(page, live_server):
    attempt = start_mock(page, live_server, name="timer")
    page.get_by_role("button", name="Hide timer").click()
    expect(page.locator("#timer")).to_have_class(re.compile("is-hidden"))
    Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=301))
    page.locator("#attempt-main input[name=choice][value='1']").click()  # the save resyncs the clock
    expect(page.locator("#time-banner")).to_have_text("5 minutes left.", timeout=8000)
    expect(page.locator("#timer")).not_to_have_class(re.compile("is-hidden"))
    assert_accessible(page)


def open_first_question(page, live_server, *, name: str, mode=AttemptMode.MOCK) -> Attempt:
    """A learner of their own, a 10-question exam, and its first question open in `page`."""
    learner = UserFactory(username=name)
    exam = exam_with_bank(weights=(100,), per_domain=10, code=f"X-{name.upper()}", is_published=True)
    attempt = attempt_start(user=learner, exam=exam, mode=mode).attempt
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{attempt.pk}/q/1/")
    return attempt


def test_without_javascript_a_pick_and_check_in_one_post_is_graded_right_and_refusals_are_pages(browser, live_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    attempt = open_first_question(page, live_server, name="nojs", mode=AttemptMode.PRACTICE)
    page.get_by_role("button", name="Check answer").click()
    expect(page.get_by_role("alert")).to_have_text("Pick an answer before checking it.")
    assert page.locator("h1").first.inner_text().startswith("Question 1")
    slot = attempt.responses.get(position=1)
    key = next(i for i, pk in enumerate(slot.choice_order, start=1) if slot.question.choices.get(pk=pk).is_correct)
    page.locator(f"input[name=choice][value='{key}']").check()
    page.get_by_role("button", name="Check answer").click()
    expect(page.get_by_role("heading", name="Right")).to_be_visible()
    slot.refresh_from_db()
    assert slot.is_correct is True
    expect(page.locator("#timer")).to_have_count(0)
    context.close()


def test_without_javascript_a_mock_shows_when_it_ends(browser, live_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    open_first_question(page, live_server, name="nojs-clock")
    expect(page.locator("#timer")).to_contain_text(re.compile(r"ends at \d\d:\d\d \w+"))
    context.close()


def test_with_debug_on_an_empty_check_shows_its_message_and_keeps_the_page(page, live_server, page_problems, settings):
    settings.DEBUG = True
    attempt = open_first_question(page, live_server, name="debug", mode=AttemptMode.PRACTICE)
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#pick-limit")).to_have_text("Pick an answer before checking it.")
    expect(page.get_by_role("heading", name="Question 1 of 10")).to_be_visible()
    expect(page.locator("#save-status")).not_to_have_text("Not saved")
    # The server's own refusal, past the page's check: a 422 shown in the page.
    status = page.evaluate(
        """() => fetch(location.pathname, {method: 'POST', headers: {'HX-Request': 'true', 'X-CSRFToken':
             document.querySelector('[name=csrfmiddlewaretoken]').value}, body: new URLSearchParams({check: '1'})})
             .then(r => r.status)"""
    )
    assert status == 422
    assert attempt.responses.get(position=1).checked_at is None
    page_problems[:] = [problem for problem in page_problems if "422" not in problem]


def test_a_whole_mock_on_a_phone_with_the_sticky_action_bar(phone_page, live_server, bank):
    page = phone_page
    learner = UserFactory(username="phone")
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/exams/NCA-GENM/")
    page.get_by_role("button", name="Start mock").tap()
    expect(page.get_by_role("heading", name="Question 1 of 60")).to_be_visible()
    expect(page.locator(".shortcut-help")).to_be_hidden()
    for position in range(1, 61):
        legend = page.locator("legend#pick-rule").inner_text()
        picks = int(legend.split()[-1]) if legend != "Choose one" else 1
        # The move that brought this question is done (nothing queued) before the picks; each
        # pick is then seen checked, since "Saved" alone may be the earlier questions' status.
        page.wait_for_function("['0', undefined].includes(document.getElementById('attempt').dataset.queued)")
        for choice in range(1, picks + 1):
            pick = page.locator(f"#attempt-main input[name=choice][value='{choice}']")
            pick.tap()
            expect(pick).to_be_checked()
        expect(page.locator("#save-status")).to_have_text("Saved")
        # Sticky: wherever the page is scrolled, Previous, Flag and Next stay on screen.
        page.evaluate("window.scrollTo(0, 0)")
        bar = page.locator("#question-actions").bounding_box()
        assert 0 <= bar["y"] and bar["y"] + bar["height"] <= 844 + 1, bar
        if position == 4:
            page.locator("#attempt-main .flag-button").tap()
            page.get_by_role("link", name="Questions").tap()
            expect(page.locator("#nav-7")).to_be_in_viewport()
            page.locator("#nav-2").tap()
            expect(page.get_by_role("heading", name="Question 2 of 60")).to_be_visible()
            page.locator("#nav-4").tap()
            expect(page.get_by_role("heading", name="Question 4 of 60")).to_be_visible()
        if position == 9:
            page.locator("#attempt-main .choice-row[data-position='4'] .strike-button").tap()
            expect(page.get_by_role("button", name="Restore D")).to_be_visible()
        if position in (1, 30):
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            assert_accessible(page)
        if position < 60:
            page.locator("#attempt-main button[value=next]").tap()
            expect(page.get_by_role("heading", name=f"Question {position + 1} of 60")).to_be_visible()
    page.locator("#attempt-main .review-button").tap()
    expect(page.get_by_text("60 questions: 0 unanswered, 0 incomplete, 1 flagged.")).to_be_visible()
    attempt = Attempt.objects.get(user=learner)
    assert attempt.responses.filter(answered_at__isnull=False).count() == 60
    assert list(attempt.responses.filter(strikes__isnull=False).values_list("position", flat=True)) == [9]


@pytest.mark.parametrize("delay", [0.5, 1.5])
def test_on_a_slow_link_a_pick_then_a_header_link_is_stored_by_keepalive(page, live_server, page_problems, delay):
    attempt = start_mock(page, live_server, name=f"leave-slow-{int(delay * 10)}")
    link = SlowLink(page, delay=delay)
    page.locator("#attempt-main input[name=choice][value='2']").click()
    page.get_by_role("link", name="Dashboard").click()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not attempt.responses.get(position=1).picks.exists():
        link.wait(0.1)
    slot = attempt.responses.get(position=1)
    assert [slot.choice_order.index(p.choice_id) + 1 for p in slot.picks.all()] == [2]
    expect(page.get_by_role("heading", name=re.compile("Dashboard|Your progress", re.I))).to_be_visible()
    page_problems[:] = [problem for problem in page_problems if "ERR_ABORTED" not in problem]


def test_a_redraw_of_the_question_on_screen_keeps_changes_still_queued(page, live_server):
    """A jump to the question already shown, then a pick and a flag while it is held."""
    attempt = start_mock(page, live_server, name="redraw")
    link = SlowLink(page, delay=1.0)
    learner = Learner(page, link, 10)
    learner.move("jump1")
    link.wait(0.2)
    learner.pick(3)
    link.settle()
    expect(page.locator("#attempt-main input[value='3']")).to_be_checked()
    learner.flag()
    link.settle()
    assert learner.stored(attempt) == learner.slots, learner.log


def test_after_check_answer_the_answer_locks_at_once_and_later_flags_and_strikes_are_kept(page, live_server):
    attempt = open_first_question(page, live_server, name="check-lock", mode=AttemptMode.PRACTICE)
    link = SlowLink(page, delay=1.0)
    page.locator("#attempt-main input[name=choice][value='1']").click()
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#attempt-main input[value='2']")).to_be_disabled()
    page.locator("#attempt-main .flag-button").click()
    link.settle()
    expect(page.locator("#checked-heading")).to_be_visible()
    expect(page.locator("#attempt-main .flag-button")).to_have_attribute("aria-pressed", "true")
    slot = attempt.responses.get(position=1)
    assert slot.flagged and slot.checked_at and slot.picks.count() == 1
    expect(page.locator("#save-status")).to_have_text("Saved")


def test_a_pick_made_after_pressing_review_is_stored_before_the_review_opens(page, live_server):
    attempt = start_mock(page, live_server, name="review-then-pick")
    link = SlowLink(page, delay=1.0)
    learner = Learner(page, link, 10)
    page.locator("#attempt-main .review-button").click()
    link.wait(0.2)
    learner.pick(2)
    while "/review/" not in page.url:
        link.wait(0.05)
    expect(page.get_by_role("heading", name="Review your answers")).to_be_visible()
    assert learner.stored(attempt)[1].pick == {2}


def test_back_after_next_shows_the_question_the_address_names(page, live_server):
    start_mock(page, live_server, name="back")
    page.locator("#attempt-main button[value=next]").click()
    expect(page.get_by_role("heading", name="Question 2 of 10")).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name="Question 1 of 10")).to_be_visible()
    assert page.url.endswith("/q/1/")


ACTIONS = ["pick", "next", "prev", "flag", "jump", "review"]
PAIRS = [(first, second) for first in ACTIONS for second in ACTIONS]


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_every_pair_of_quick_actions_lands_on_the_question_shown(page, live_server, page_problems, first, second):
    """Two actions 0.2 s apart while the first is held (0.5 or 1.5 s; every third pair also
    loses its first request once), then the database against what the learner did."""
    index = PAIRS.index((first, second))
    attempt = start_mock(page, live_server, name=f"pair-{index}")
    page.locator("#nav-5").click()
    expect(page.get_by_role("heading", name="Question 5 of 10")).to_be_visible()
    link = SlowLink(page, delay=(0.5, 1.5)[index % 2], drop=(lambda n: n == 1) if index % 3 == 0 else (lambda n: False))
    learner = Learner(page, link, 10)

    def act(action: str, choice: int) -> None:
        if "/review/" in page.url:
            return  # the review opened already: nothing of the question is left to act on
        if action == "pick":
            learner.pick(choice)
        elif action == "flag":
            learner.flag()
        elif action == "jump":
            learner.move("jump8")
        elif action == "review":
            page.locator("#attempt-main .review-button").click()
        else:
            learner.move(action)

    act(first, 2)
    link.wait(0.2)
    act(second, 3)
    if "review" in (first, second):
        deadline = time.monotonic() + 20
        while "/review/" not in page.url and time.monotonic() < deadline:
            link.wait(0.05)
        expect(page.get_by_role("heading", name="Review your answers")).to_be_visible()
    else:
        link.settle()
        expect(page.locator("#save-status")).to_have_text("Saved")
    assert learner.stored(attempt) == learner.slots, learner.log
    forget_dropped(page_problems)
