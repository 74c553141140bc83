"""Finding Start: on the exam's page "Start mock" is above the fold on a desktop and three
phones; a visitor sees "Sign up to start" and "Log in", and signing up comes back to it."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, log_in_as, watch
from tests.factories import UserFactory, exam_with_bank

SIZES = {"desktop": (1280, 800), "390x844": (390, 844), "360x640": (360, 640), "414x896": (414, 896)}


def above_the_fold(locator, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


@pytest.fixture
def exam(transactional_db):
    # The shipped exam's own description and seven domains, so the page is as long as the real one.
    exam = exam_with_bank(weights=(25, 20, 15, 15, 10, 10, 5), per_domain=10, question_count=10)
    exam.description = (
        "NVIDIA-Certified Associate: Generative AI Multimodal. A timed mock drawn by domain weight from a bank "
        "of reviewed questions, with explanations and sources for every answer."
    )
    exam.save()
    return exam


@pytest.mark.parametrize("size", list(SIZES))
def test_start_mock_is_above_the_fold_and_a_visitor_can_sign_up_to_start(browser, live_server, exam, page_problems, size):
    width, height = SIZES[size]
    phone = size != "desktop"
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    watch(page, page_problems)
    url = f"{live_server.url}/exams/{exam.code}/"

    page.goto(url)
    main = page.get_by_role("main")
    sign_up = main.get_by_role("link", name="Sign up to start")
    log_in = main.get_by_role("link", name="Log in", exact=True)
    assert above_the_fold(sign_up, height) and above_the_fold(log_in, height)
    assert_accessible(page)
    sign_up.click()
    page.get_by_label("Username").fill(f"new-{size}")
    page.get_by_label("Email").fill(f"new-{size}@example.com")
    page.get_by_label("Password:", exact=True).fill("a-Long-passphrase-9")
    page.get_by_label("Password confirmation").fill("a-Long-passphrase-9")
    page.get_by_role("button", name="Sign up").click()
    start = page.get_by_role("button", name="Start mock")
    expect(start).to_be_visible()
    assert page.url == url
    assert above_the_fold(start, height)
    assert_accessible(page)
    context.close()

    # A learner with a long name (the header wraps) still has Start on the first screen.
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    watch(page, page_problems)
    log_in_as(page, live_server, UserFactory(username=f"a-rather-long-learner-name-{size}", is_staff=True))
    page.goto(url)
    assert above_the_fold(page.get_by_role("button", name="Start mock"), height)
    context.close()
    assert page_problems == []
