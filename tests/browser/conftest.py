"""Browser journeys: Debian's Chromium driven by Playwright against a live server.

Every page visited is watched for Content Security Policy violations and page errors;
any one fails the test.
"""
import pytest

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
