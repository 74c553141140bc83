"""A learner taking a mock over plain HTTP (urllib + a cookie jar), retrying saves as the page's JS does."""
import copy
import http.client
import http.cookiejar
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

# What the page's script does with a failed save (static/js/app.js): retry after 1 s,
# doubling to at most 8 s (it never gives up; we do after this many seconds).
RETRY_BUDGET = 20.0
REQUEST_TIMEOUT = 30.0
# A dropped connection, a reset, a timeout (URLError and the socket errors are OSErrors).
TRANSPORT_ERRORS = (http.client.HTTPException, OSError)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


@dataclass
class SaveOutcome:
    """The reply a save finally got, and the failures (status or exception) seen before it."""

    reply: Reply | None
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def saved(self) -> bool:
        return self.reply is not None and self.reply.status == 200


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    # The tests look at each 302 themselves (where it points is part of what they check).
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Learner:
    """One browser: a cookie jar (shareable between tabs and servers) and a base URL."""

    def __init__(self, base_url: str, cookies: http.cookiejar.CookieJar | None = None):
        self.base_url = base_url.rstrip("/")
        self.cookies = cookies if cookies is not None else http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _KeepRedirects)

    # ---- sharing ------------------------------------------------------------------
    def on(self, base_url: str) -> "Learner":
        """The same browser talking to another server (the cookie jar is shared)."""
        return Learner(base_url, self.cookies)

    def new_tab(self) -> "Learner":
        """A second tab: its own jar holding a copy of this one's cookies (the same session)."""
        jar = http.cookiejar.CookieJar()
        for cookie in self.cookies:
            jar.set_cookie(copy.copy(cookie))
        return Learner(self.base_url, jar)

    def use_session(self, session_key: str) -> None:
        """Take over a session made by a seed snippet (a sign-in without the password hash's cost)."""
        host = urllib.parse.urlsplit(self.base_url).hostname
        self.cookies.set_cookie(http.cookiejar.Cookie(
            0, "sessionid", session_key, None, False, host, False, False, "/", True, False, None, False,
            None, None, {"HttpOnly": None},
        ))

    # ---- HTTP ---------------------------------------------------------------------
    def request(self, method: str, path: str, *, data: dict | None = None, htmx: bool = False,
                timeout: float = REQUEST_TIMEOUT) -> Reply:
        """One request on a new connection; transport errors propagate to the caller."""
        body = urllib.parse.urlencode(data or {}, doseq=True).encode() if method == "POST" else None
        request = urllib.request.Request(self.base_url + path, data=body, method=method)
        if method == "POST":
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
            request.add_header("X-CSRFToken", self.csrf_token())
        if htmx:
            request.add_header("HX-Request", "true")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return Reply(response.status, _headers(response.headers), response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as error:
            with error:
                return Reply(error.code, _headers(error.headers), error.read().decode("utf-8", "replace"))

    def get(self, path: str, **options) -> Reply:
        return self.request("GET", path, **options)

    def post(self, path: str, data: dict | None = None, **options) -> Reply:
        return self.request("POST", path, data=data, **options)

    def csrf_token(self) -> str:
        for cookie in self.cookies:
            if cookie.name == "csrftoken":
                return cookie.value
        # Any page with a form sets the cookie; the login page needs no session.
        self.get("/accounts/login/")
        for cookie in self.cookies:
            if cookie.name == "csrftoken":
                return cookie.value
        raise AssertionError("the login page set no csrftoken cookie")

    # ---- the learner's steps ------------------------------------------------------
    def log_in(self, username: str, password: str) -> None:
        # One correct try only: django-axes locks a username+address after 5 bad ones.
        page = self.get("/accounts/login/")
        assert page.status == 200, f"login page: {page.status}"
        reply = self.post("/accounts/login/", {"username": username, "password": password})
        assert reply.status == 302, f"login as {username} was refused ({reply.status}): {reply.body[:500]}"

    def start_mock(self, code: str) -> int:
        reply = self.post(f"/exams/{code}/mock/")
        match = re.fullmatch(r"/attempts/(\d+)/q/\d+/", reply.location)
        assert reply.status == 302 and match, f"start mock of {code}: {reply.status} → {reply.location!r} {reply.body[:300]}"
        return int(match.group(1))

    def save(self, attempt_id: int, position: int, choices: list[int], **fields) -> Reply:
        """Send one answer the way htmx does (choices are 1-based positions as shown)."""
        return self.post(f"/attempts/{attempt_id}/q/{position}/", {"choice": choices, **fields}, htmx=True)

    def save_with_retry(self, attempt_id: int, position: int, choices: list[int], *,
                        budget: float = RETRY_BUDGET, **fields) -> SaveOutcome:
        """Retry transport errors and 5xx with backoff (1, 2, 4, 8 s) within `budget` seconds."""
        outcome = SaveOutcome(reply=None)
        began = time.monotonic()
        deadline = began + budget
        delay = 1.0
        while True:
            outcome.seconds = time.monotonic() - began
            try:
                reply = self.save(attempt_id, position, choices, **fields)
            except TRANSPORT_ERRORS as error:
                reply = None
                outcome.failures.append(f"{type(error).__name__}: {error}")
            else:
                if reply.status < 500:
                    outcome.reply = reply  # success, or a refusal that a retry would not change
                    outcome.seconds = time.monotonic() - began
                    return outcome
                outcome.failures.append(f"HTTP {reply.status}")
            if time.monotonic() + delay > deadline:
                return outcome
            time.sleep(delay)
            delay = min(delay * 2, 8.0)

    def show(self, attempt_id: int, position: int) -> Reply:
        return self.get(f"/attempts/{attempt_id}/q/{position}/")

    def submit(self, attempt_id: int) -> Reply:
        return self.post(f"/attempts/{attempt_id}/submit/", {"confirmed": "1"})

    def results(self, attempt_id: int) -> Reply:
        return self.get(f"/attempts/{attempt_id}/results/")


def _headers(message) -> dict[str, str]:
    return {name.lower(): value for name, value in message.items()}
