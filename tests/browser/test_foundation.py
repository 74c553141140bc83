"""A new learner signs up and finds NCA-GENM; an instructor edits the bank in admin."""
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from exams.models import Question
from exams.roles import instructors_group
from tests.browser.conftest import log_in
from tests.factories import PASSWORD, UserFactory

WEIGHTS = [
    ("Experimentation", 25), ("Core ML and AI Knowledge", 20), ("Multimodal Data", 15),
    ("Software Development", 15), ("Data Analysis and Visualization", 10),
    ("Performance Optimization", 10), ("Trustworthy AI", 5),
]


@pytest.fixture
def bank(transactional_db):
    call_command("load_bank", verbosity=0)


def sign_up_and_see_the_catalogue(page, live_server, username: str) -> None:
    page.goto(live_server.url)
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.com")
    page.get_by_label("Password:", exact=True).fill("a-Long-passphrase-9")
    page.get_by_label("Password confirmation").fill("a-Long-passphrase-9")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text(f"Signed in as {username}")).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("NCA-GENM"))).to_be_visible()
    table = page.get_by_role("table", name="Domains of NCA-GENM")
    for name, weight in WEIGHTS:
        row = table.get_by_role("row", name=re.compile(re.escape(name)))
        expect(row).to_contain_text(f"{weight}%")


def test_a_new_learner_signs_up_and_sees_nca_genm(page, live_server, bank):
    sign_up_and_see_the_catalogue(page, live_server, "ada")


def test_the_same_on_a_phone_screen(phone_page, live_server, bank):
    sign_up_and_see_the_catalogue(phone_page, live_server, "grace")
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px wide)"


def test_an_instructor_edits_a_question_and_two_keys_are_refused(page, live_server, bank):
    instructor = UserFactory(username="teacher", is_staff=True)
    instructor.groups.add(instructors_group())
    question = Question.objects.get(pk=101)
    log_in(page, live_server, "teacher", PASSWORD)
    page.goto(f"{live_server.url}/admin/exams/question/{question.pk}/change/")

    page.get_by_label("Title:").fill("Tuning on the test set, reworded")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text("was changed successfully")).to_be_visible()
    question.refresh_from_db()
    assert question.title == "Tuning on the test set, reworded"

    page.goto(f"{live_server.url}/admin/exams/question/{question.pk}/change/")
    boxes = page.locator("input[name$='-is_correct']")
    for index in range(boxes.count()):
        if not boxes.nth(index).is_checked():
            boxes.nth(index).check()
            break
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text("needs exactly one correct choice; 2 are marked correct")).to_be_visible()
    assert question.choices.filter(is_correct=True).count() == 1
