"""Learners taking timed mocks against certprep, with the floor (/bench/hello) in the same run.

Driven by bench/load/run.py, which seeds the accounts, starts gunicorn and reads what this
file writes; it also runs on its own (`locust -f bench/load/locustfile.py --host ...`).

User classes:
  Learner        logs in (one POST per account), then takes mocks in a loop: start, the
                 question page, for each of the 60 slots an answer save and a move to the
                 next slot (go=next), review, submit, results. Think time: THINK_TIME
                 before each request. The first mock opens at a random slot (warm start).
  Floor          GET /bench/hello (hello world behind the full middleware stack), same
                 think time: the floor's latency under the same load, side by side.
  HelloCapacity  GET /bench/hello with no think time: the floor's throughput at saturation.
  SaveCapacity   answer saves with no think time, two answers alternating on the slot the
                 learner is on: the answer save's throughput at saturation.
  PageCapacity / PartialCapacity
                 the question page with no think time, whole (a reload) or as the htmx
                 partial (a move in the navigator).
  SpikeStarter   a learner already signed in who presses "Start mock" once, at a random
                 moment within BENCH_SPIKE_WINDOW seconds (default 5) of the moment every
                 user was ready, and follows the redirect to the question page.
  WriteFloorCapacity
                 POST /write/ on the write floor (bench/floor, its own gunicorn: database
                 session, user, CSRF, lock one row and UPDATE it), with no think time;
                 signed-in sessions from BENCH_FLOOR_SESSIONS (bench/floor/seed.py).

Written to BENCH_OUT (a directory) when the test stops:
  requests.csv  every request: start time, name, response time (ms), ok, status
  saves.csv     every answer sent: attempt, position, choices (1-based, as shown), and
                whether the server confirmed it ("Saved", HTTP 200); in send order
  ready.json    when every user had logged in and was on its first page (the measured
                window starts there; ready-now is written at that moment)
Sessions are cached in BENCH_SESSION_CACHE so an account logs in once per benchmark,
however many runs use it (a login costs ~1 s of CPU: PBKDF2 with 1,500,000 iterations).
"""
import csv
import itertools
import json
import os
import random
import re
import time
from http.cookiejar import Cookie
from pathlib import Path
from urllib.parse import urlencode

import gevent
from locust import FastHttpUser, between, constant, events, task
from locust.exception import StopUser

EXAM = os.environ.get("BENCH_EXAM", "NCA-GENM")
PASSWORD = os.environ.get("BENCH_PASSWORD", "bench-learner-passphrase")
ACCOUNT_PREFIX = os.environ.get("BENCH_ACCOUNT_PREFIX", "learner")
ACCOUNT_OFFSET = int(os.environ.get("BENCH_ACCOUNT_OFFSET", "0"))
ACCOUNT_COUNT = int(os.environ.get("BENCH_ACCOUNT_COUNT", "100000"))
OUT = Path(os.environ.get("BENCH_OUT", "bench-load-out"))
SESSION_CACHE = os.environ.get("BENCH_SESSION_CACHE")
EXPECTED_USERS = int(os.environ.get("BENCH_EXPECTED_USERS", "0"))
MEASURE_SECONDS = float(os.environ.get("BENCH_MEASURE_SECONDS", "0"))
# A fast learner: ~3 s before each request, so a question every ~6 s where the exam allows 60.
THINK_TIME = (float(os.environ.get("BENCH_THINK_MIN", "1")), float(os.environ.get("BENCH_THINK_MAX", "5")))

QUESTION_URL = re.compile(r"/attempts/(\d+)/q/(\d+)/$")
CHOOSE = re.compile(r'data-choose="(\d+)"')
CHOICE_INPUT = re.compile(r'name="choice"')
HEADING = re.compile(r"Question (\d+) of (\d+)")
SLOTS = 60  # NCA-GENM's question_count
FORM = {"Content-Type": "application/x-www-form-urlencoded"}

_accounts = itertools.count(ACCOUNT_OFFSET)
_requests: list[tuple] = []
_saves: list[tuple] = []
_ready = {"count": 0, "at": None}
_sessions: dict[str, list[dict]] = {}
if SESSION_CACHE and Path(SESSION_CACHE).exists():
    _sessions = json.loads(Path(SESSION_CACHE).read_text())


class JourneyBroken(Exception):
    """A response the journey cannot go on from (already recorded as a failure)."""


@events.request.add_listener
def _record_request(request_type, name, response_time, response_length, response=None, exception=None, start_time=None, **kwargs):
    status = getattr(response, "status_code", 0) if response is not None else 0
    _requests.append((round(start_time or time.time(), 4), name, round(response_time, 2), int(exception is None), status))


@events.test_stop.add_listener
def _write_logs(environment, **kwargs):
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "requests.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["start", "name", "ms", "ok", "status"])
        writer.writerows(_requests)
    with open(OUT / "saves.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["attempt", "position", "choices", "confirmed"])
        writer.writerows(_saves)
    (OUT / "ready.json").write_text(json.dumps({"users": _ready["count"], "ready_at": _ready["at"], "stopped_at": time.time()}))
    if SESSION_CACHE:
        temporary = Path(SESSION_CACHE + ".tmp")
        temporary.write_text(json.dumps(_sessions))
        temporary.replace(SESSION_CACHE)


def _user_ready(environment) -> None:
    _ready["count"] += 1
    if EXPECTED_USERS and _ready["count"] == EXPECTED_USERS:
        _ready["at"] = time.time()
        # The runner watches for this file to read CPU counters at the window's start.
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "ready-now").write_text(str(_ready["at"]))
        if MEASURE_SECONDS:
            gevent.spawn_later(MEASURE_SECONDS, environment.runner.quit)


class _Account(FastHttpUser):
    """A user with a learner account: logs in once (or reuses a cached session)."""

    abstract = True
    # Server-side queueing at 200 learners on two cores stays well under this.
    network_timeout = 60.0
    connection_timeout = 10.0

    def on_start(self) -> None:
        index = next(_accounts)
        if index >= ACCOUNT_OFFSET + ACCOUNT_COUNT:
            raise StopUser()
        self.username = f"{ACCOUNT_PREFIX}{index:04d}"
        if not self._restore_session():
            self._log_in()

    def _restore_session(self) -> bool:
        saved = _sessions.get(self.username)
        if not saved:
            return False
        for cookie in saved:
            self.client.cookiejar.set_cookie(Cookie(
                0, cookie["name"], cookie["value"], None, False, cookie["domain"], False, False,
                cookie["path"], True, False, None, True, None, None, {},
            ))
        return True

    def _log_in(self) -> None:
        self.client.get("/accounts/login/", name="login page")
        body = urlencode({"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.csrf_token})
        with self.client.post(
            "/accounts/login/", data=body, headers=FORM, name="login", allow_redirects=False, catch_response=True
        ) as response:
            if response.status_code != 302 or "/accounts/login" in response.headers.get("Location", ""):
                # Never retry: django-axes locks an account out after a few failures.
                response.failure(f"login refused for {self.username} ({response.status_code})")
                raise StopUser()
            response.success()
        _sessions[self.username] = [
            {"name": c.name, "value": c.value, "domain": c.domain, "path": c.path}
            for c in self.client.cookiejar
            if c.name in ("sessionid", "csrftoken")
        ]

    @property
    def csrf_token(self) -> str:
        return next((c.value for c in self.client.cookiejar if c.name == "csrftoken"), "")

    def post_form(self, url: str, fields, *, name: str, htmx: bool = False, **kwargs):
        headers = dict(FORM, **{"X-CSRFToken": self.csrf_token})
        if htmx:
            headers["HX-Request"] = "true"
        return self.client.post(url, data=urlencode(fields, doseq=True), headers=headers, name=name, catch_response=True, **kwargs)

    def start_mock(self) -> tuple[int, int]:
        """POST "Start mock": the attempt and the slot it opens at (a running mock resumes)."""
        with self.post_form(f"/exams/{EXAM}/mock/", {}, name="start mock", allow_redirects=False) as response:
            match = QUESTION_URL.search(response.headers.get("Location", "")) if response.status_code == 302 else None
            if match is None:
                response.failure(f"start mock: {response.status_code} {response.headers.get('Location', '')}")
                raise JourneyBroken()
            response.success()
        return int(match[1]), int(match[2])

    def question_page(self, attempt_id: int, position: int) -> str:
        with self.client.get(f"/attempts/{attempt_id}/q/{position}/", name="question page", catch_response=True) as response:
            if response.status_code != 200 or HEADING.search(response.text or "") is None:
                response.failure(f"question page: {response.status_code}")
                raise JourneyBroken()
            response.success()
            return response.text

    def save(self, attempt_id: int, position: int, picks: list[int], *, go: str | None = None) -> str:
        """An htmx answer save (go=None) or a save and move (go="next"); records what was confirmed."""
        fields = [("choice", pick) for pick in picks] + ([("go", go)] if go else [])
        record = [attempt_id, position, " ".join(map(str, picks)), 0]
        _saves.append(record)
        name = "answer save" if go is None else f"answer save + {go}"
        with self.post_form(f"/attempts/{attempt_id}/q/{position}/", fields, name=name, htmx=True) as response:
            text = response.text or ""
            expected = "Saved" if go is None else "Question "
            if response.status_code != 200 or expected not in text:
                response.failure(f"{name}: {response.status_code} {text[:80]!r}")
                raise JourneyBroken()
            response.success()
            record[3] = 1
            return text


def _picks(page: str) -> list[int]:
    """A random answer for the question on this page (1-based positions as shown)."""
    choices = len(CHOICE_INPUT.findall(page))
    choose = int(CHOOSE.search(page)[1]) if CHOOSE.search(page) else 1
    return sorted(random.sample(range(1, choices + 1), choose))


class Learner(_Account):
    weight = 1
    wait_time = between(*THINK_TIME)

    def on_start(self) -> None:
        try:
            super().on_start()
        finally:
            # A user that could not log in (recorded as a failure) must not hold up the window.
            _user_ready(self.environment)

    first_mock = True

    @task
    def take_mock(self) -> None:
        try:
            attempt_id, position = self.start_mock()
            if self.first_mock:
                # Warm start: each learner's first mock opens at a random slot (the navigator
                # takes a learner anywhere), so from the first minute learners are spread over
                # the whole journey and reviews, submits and results come at their steady rate.
                self.first_mock = False
                position = random.randint(position, SLOTS)
            self.wait()
            page = self.question_page(attempt_id, position)
            slot_count = int(HEADING.search(page)[2])
            while True:
                picks = _picks(page)
                self.wait()
                self.save(attempt_id, position, picks)
                if position == slot_count:
                    break
                self.wait()
                page = self.save(attempt_id, position, picks, go="next")
                position += 1
            self.wait()
            with self.client.get(f"/attempts/{attempt_id}/review/", name="review", catch_response=True) as response:
                if response.status_code != 200:
                    response.failure(f"review: {response.status_code}")
                    raise JourneyBroken()
                response.success()
            self.wait()
            with self.post_form(f"/attempts/{attempt_id}/submit/", {"confirmed": "1"}, name="submit", allow_redirects=False) as response:
                if response.status_code != 302 or not response.headers.get("Location", "").endswith(f"/attempts/{attempt_id}/results/"):
                    response.failure(f"submit: {response.status_code}")
                    raise JourneyBroken()
                response.success()
            with self.client.get(f"/attempts/{attempt_id}/results/", name="results", catch_response=True) as response:
                if response.status_code != 200:
                    response.failure(f"results: {response.status_code}")
                    raise JourneyBroken()
                response.success()
        except JourneyBroken:
            pass
        self.wait()


class Floor(FastHttpUser):
    """The floor at the learners' pace: what the stack costs before certprep does anything."""

    fixed_count = int(os.environ.get("BENCH_FLOOR_USERS", "2"))
    wait_time = between(*THINK_TIME)

    def on_start(self) -> None:
        _user_ready(self.environment)

    @task
    def hello(self) -> None:
        self.client.get("/bench/hello", name="floor hello")


class HelloCapacity(FastHttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        _user_ready(self.environment)

    @task
    def hello(self) -> None:
        self.client.get("/bench/hello", name="floor hello")


class SaveCapacity(_Account):
    """A learner changing their mind on the slot they are on, as fast as the server answers.

    Two answers alternate, so every save writes (delete the old pick, insert the new one,
    stamp answered_at), exactly the htmx save of the question page.
    """

    wait_time = constant(0)

    def on_start(self) -> None:
        self.attempt_id = None
        self.turn = 0
        try:
            super().on_start()
            # A failed start is recorded; a second try shows whether it was transient.
            for _ in range(3):
                try:
                    self.attempt_id, self.position = self.start_mock()
                    self.question_page(self.attempt_id, self.position)
                    break
                except JourneyBroken:
                    self.attempt_id = None
                    gevent.sleep(1)
        finally:
            _user_ready(self.environment)

    @task
    def save_answer(self) -> None:
        if self.attempt_id is None:
            gevent.sleep(1)
            return
        self.turn += 1
        # One pick is a valid save on every slot (on a choose-two slot it is an
        # incomplete answer, which is saved and shown as such).
        try:
            self.save(self.attempt_id, self.position, [1 + self.turn % 2])
        except JourneyBroken:
            pass


class PageCapacity(_Account):
    """The question page flat out: a reload (whole page) of the slot the learner is on."""

    wait_time = constant(0)
    htmx = False
    page_name = "question page"

    def on_start(self) -> None:
        self.attempt_id = None
        try:
            super().on_start()
            self.attempt_id, self.position = self.start_mock()
        except JourneyBroken:
            self.attempt_id = None
        finally:
            _user_ready(self.environment)

    @task
    def page(self) -> None:
        if self.attempt_id is None:
            gevent.sleep(1)
            return
        headers = {"HX-Request": "true"} if self.htmx else {}
        with self.client.get(f"/attempts/{self.attempt_id}/q/{self.position}/", name=self.page_name, headers=headers,
                             catch_response=True) as response:
            if response.status_code != 200 or HEADING.search(response.text or "") is None:
                response.failure(f"{self.page_name}: {response.status_code}")
            else:
                response.success()


class PartialCapacity(PageCapacity):
    """The question page's htmx partial (the form only), as a move in the navigator fetches it."""

    htmx = True
    page_name = "question partial"


_floor_sessions = itertools.count()


class WriteFloorCapacity(FastHttpUser):
    """The write floor flat out: a signed-in user's locked UPDATE of the row they own."""

    wait_time = constant(0)

    def on_start(self) -> None:
        try:
            sessions = list(json.loads(Path(os.environ["BENCH_FLOOR_SESSIONS"]).read_text()).values())
            key = sessions[next(_floor_sessions) % len(sessions)]
            self.csrf = "".join(random.choices("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", k=32))
            domain = self.host.split("//", 1)[1].split(":")[0]
            for name, value in (("sessionid", key), ("csrftoken", self.csrf)):
                self.client.cookiejar.set_cookie(Cookie(
                    0, name, value, None, False, domain, False, False, "/", True, False, None, True, None, None, {},
                ))
        finally:
            _user_ready(self.environment)

    @task
    def write(self) -> None:
        with self.client.post("/write/", data="", headers=dict(FORM, **{"X-CSRFToken": self.csrf}), name="write floor",
                              catch_response=True) as response:
            if response.status_code != 200 or response.text != "Saved":
                response.failure(f"write floor: {response.status_code}")
            else:
                response.success()


SPIKE_WINDOW = float(os.environ.get("BENCH_SPIKE_WINDOW", "5"))
_spike = {"done": 0}


class SpikeStarter(_Account):
    """One of a cohort pressing "Start mock" at once: a random moment of the window, then the redirect."""

    wait_time = constant(0)

    def on_start(self) -> None:
        self.pressed = False
        try:
            super().on_start()
        finally:
            _user_ready(self.environment)

    @task
    def press_start(self) -> None:
        if self.pressed:
            gevent.sleep(1)
            return
        while _ready["at"] is None:
            gevent.sleep(0.02)
        self.pressed = True
        gevent.sleep(max(0.0, _ready["at"] + random.uniform(0, SPIKE_WINDOW) - time.time()))
        try:
            attempt_id, position = self.start_mock()
            self.question_page(attempt_id, position)
        except JourneyBroken:
            pass
        finally:
            # The run ends once every press has its answer, however long that took.
            _spike["done"] += 1
            if EXPECTED_USERS and _spike["done"] == EXPECTED_USERS:
                gevent.spawn(self.environment.runner.quit)


STATISTICS_PAGE = os.environ.get("BENCH_STATISTICS_PAGE", "/admin/exams/question/")
_staff_sessions = itertools.count()


class StatisticsReader(FastHttpUser):
    """A staff member on the admin's question list, whose item statistics columns read the
    replica when there is one (config.routers): the scale-out run (bench/scale_out) stops the
    replica under it. Signed in from BENCH_STAFF_SESSIONS (a JSON list of cookie lists)."""

    fixed_count = int(os.environ.get("BENCH_STATISTICS_USERS", "1"))
    wait_time = between(0.5, 1.5)
    network_timeout = 60.0

    def on_start(self) -> None:
        try:
            sessions = json.loads(Path(os.environ["BENCH_STAFF_SESSIONS"]).read_text())
            for cookie in sessions[next(_staff_sessions) % len(sessions)]:
                self.client.cookiejar.set_cookie(Cookie(
                    0, cookie["name"], cookie["value"], None, False, cookie["domain"], False, False,
                    cookie["path"], True, False, None, True, None, None, {},
                ))
        finally:
            _user_ready(self.environment)

    @task
    def statistics(self) -> None:
        with self.client.get(STATISTICS_PAGE, name="statistics page", catch_response=True) as response:
            if response.status_code != 200 or "Item statistics as computed" not in (response.text or ""):
                response.failure(f"statistics page: {response.status_code}")
            else:
                response.success()
