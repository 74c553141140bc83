"""An instructor makes a cohort and invites a learner, who sees what will be shared, joins, and later leaves."""
from playwright.sync_api import expect

from cohorts.models import Membership
from tests.browser.conftest import PHONE, assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank


def test_a_cohort_from_invitation_to_report_to_leaving(page, browser, live_server, instructor, page_problems, screenshot):
    from tests.browser.conftest import watch

    # Five domains: the report is wider than a phone.
    exam = exam_with_bank(code="GENM", title="Generative AI", weights=(20, 20, 20, 20, 20))
    learner = UserFactory(username="maria")
    log_in_as(page, live_server, instructor)
    page.goto(f"{live_server.url}/cohorts/")
    expect(page.get_by_text("You run no cohort yet.")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="New cohort").click()
    page.get_by_label("Name").fill("Spring class")
    page.get_by_label("Exam").select_option(label=str(exam))
    page.get_by_role("button", name="Create cohort").click()
    expect(page.get_by_text("No member yet.")).to_be_visible()
    link = page.get_by_role("textbox", name="Link to share").input_value()
    assert_accessible(page)

    # The learner, in a browser of their own.
    context = browser.new_context()
    learner_page = context.new_page()
    watch(learner_page, page_problems)
    log_in_as(learner_page, live_server, learner)
    learner_page.goto(link)
    expect(learner_page.get_by_role("heading", name="Join Spring class?")).to_be_visible()
    expect(learner_page.get_by_text("They will not see your answers")).to_be_visible()
    assert_accessible(learner_page)
    learner_page.get_by_role("button", name="Join Spring class").click()
    expect(learner_page.get_by_text("You joined “Spring class”.")).to_be_visible()
    expect(learner_page.get_by_role("row", name="Spring class")).to_contain_text("teacher")
    assert_accessible(learner_page)

    page.reload()
    expect(page.get_by_role("heading", name="Members (1)")).to_be_visible()
    expect(page.get_by_role("row", name="maria")).to_contain_text("Not enough data (0)")
    assert_accessible(page)
    screenshot(page, "cohort-report")

    # On a phone the report scrolls inside its table, not the whole page (its visually
    # hidden caption once escaped the scroll and made the page 1,978 px wide).
    phone_context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    phone = phone_context.new_page()
    watch(phone, page_problems)
    log_in_as(phone, live_server, instructor)
    phone.goto(page.url)
    assert phone.evaluate("document.querySelector('table.cohort').scrollWidth > document.querySelector('.table-wrap').clientWidth")
    # (Not innerWidth: a mobile browser widens its layout viewport to what overflows.)
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    phone_context.close()

    learner_page.get_by_role("link", name="Leave Spring class").click()
    learner_page.get_by_role("button", name="Leave cohort").click()
    expect(learner_page.get_by_text("You are in no cohort.")).to_be_visible()
    assert not Membership.objects.exists()
    context.close()
