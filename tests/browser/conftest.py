"""Browser journeys: Debian's Chromium driven by Playwright against a live server.

Every page visited is watched for Content Security Policy violations and page errors;
any one fails the test.
"""
import pytest
from django.conf import settings
from django.test import Client

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PHONE = {"width": 390, "height": 844}

# Reports violations even when the browser does not log them to the console.
WATCH_CSP = """
document.addEventListener('securitypolicyviolation', (event) => {
  console.error('CSP violation: ' + event.violatedDirective + ' blocked ' + event.blockedURI);
});
"""


def pytest_addoption(parser):
    parser.addoption(
        "--screenshots", default=None, metavar="DIR",
        help="Save the README's screenshots from the journeys into DIR (make screenshots).",
    )


@pytest.fixture
def screenshot(request):
    """screenshot(page, name): saves DIR/name.png when --screenshots DIR is given, else does nothing."""
    folder = request.config.getoption("--screenshots")

    def take(page, name: str) -> None:
        if folder:
            from pathlib import Path

            Path(folder).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)

    return take


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            # The live server reads what the test writes, so nothing may sit in an open
            # transaction: these tests commit, and the database is flushed after each.
            item.add_marker(pytest.mark.django_db(transaction=True))


@pytest.fixture(scope="session")
def live_server():
    """pytest-django's live server, but static files come from whitenoise as in production."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost", start=False)
    server.thread.static_handler = lambda handler: handler
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def page_problems():
    return []


def watch(page, problems: list[str]) -> None:
    """Collect CSP violations, script errors and failed requests of every page visited."""
    page.add_init_script(WATCH_CSP)
    page.on("response", lambda response: response.status >= 400 and problems.append(f"{response.status} {response.url}"))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.set_default_timeout(10_000)


@pytest.fixture
def page(page, page_problems):
    watch(page, page_problems)
    yield page
    assert page_problems == [], "the browser reported problems:\n" + "\n".join(page_problems)


@pytest.fixture
def phone_page(browser, page_problems, live_server):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    phone = context.new_page()
    watch(phone, page_problems)
    yield phone
    context.close()
    assert page_problems == [], "the browser reported problems:\n" + "\n".join(page_problems)


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text(f"Signed in as {username}").wait_for()


def log_in_as(page, live_server, user) -> None:
    """Give the browser a logged-in session without going through the login form."""
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


AXE_SOURCE = settings.BASE_DIR / "node_modules" / "axe-core" / "axe.min.js"


def assert_accessible(page) -> None:
    """axe-core finds no serious or critical WCAG violation on the page as it stands."""
    assert AXE_SOURCE.is_file(), "axe-core is missing: run `npm ci` (make test does)"
    # Evaluated through the DevTools protocol, so the page's CSP does not apply to it.
    page.evaluate(AXE_SOURCE.read_text())
    violations = page.evaluate(
        """async () => {
            const result = await axe.run(document, {
                runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']},
                resultTypes: ['violations'],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ')),
            }));
        }"""
    )
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], f"accessibility violations on {page.url}: {serious}"
