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
    page.get_by_label("Ask members to share their mock results").check()
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
    learner_page.get_by_label("Share my mock results with teacher").check()
    learner_page.get_by_role("button", name="Join Spring class").click()
    expect(learner_page.get_by_text("You joined “Spring class”.")).to_be_visible()
    expect(learner_page.get_by_role("row", name="Spring class")).to_contain_text("teacher")
    expect(learner_page.get_by_role("row", name="Spring class")).to_contain_text("Shared since")
    assert_accessible(learner_page)
    # A finished mock of the learner, seen by the owner through the row's link.
    from exams.room import services as room

    mock = room.attempt_start(user=learner, exam=exam, seed=1).attempt
    room.attempt_submit(user=learner, attempt_id=mock.pk)

    page.reload()
    expect(page.get_by_role("heading", name="Members (1)")).to_be_visible()
    assert_accessible(page)
    screenshot(page, "cohort-report")
    page.get_by_role("link", name="Mock results of maria").click()
    expect(page.get_by_role("heading", name="maria's mock results")).to_be_visible()
    expect(page.get_by_text("0 right, 0 wrong, 10 unanswered.")).to_be_visible()
    assert_accessible(page)
    page.go_back()

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

    # Withdrawing consent takes the link away at once.
    learner_page.get_by_role("button", name="Stop sharing with Spring class").click()
    expect(learner_page.get_by_text("teacher no longer sees your mock results")).to_be_visible()
    assert_accessible(learner_page)
    page.reload()
    expect(page.get_by_role("link", name="Mock results of maria")).to_have_count(0)

    learner_page.get_by_role("link", name="Leave Spring class").click()
    learner_page.get_by_role("button", name="Leave cohort").click()
    expect(learner_page.get_by_text("You are in no cohort.")).to_be_visible()
    assert not Membership.objects.exists()
    context.close()


def member_row(page, username: str):
    return page.locator("table.cohort tbody tr").filter(has=page.locator("th[scope=row]", has_text=username)).first


NCA_DOMAINS = (
    "Core ML and AI Knowledge", "Data Analysis and Visualization", "Experimentation", "Multimodal Data",
    "Performance Optimization", "Software Development", "Trustworthy AI",
)


def test_the_cohort_report_fits_1280_px_sorts_without_javascript_and_scrolls_in_its_box_on_a_phone(
    browser, live_server, instructor, page_problems, screenshot
):
    from cohorts.models import Cohort, Invitation
    from exams.models import Domain
    from tests.browser.conftest import watch
    from tests.exams.study.test_dashboard import finished_history

    # The shipped bank's seven domains, by name; a week of history per member.
    exam = exam_with_bank(code="NCA-GENM", title="Generative AI", weights=(15, 15, 15, 15, 15, 15, 10), per_domain=6)
    for domain, name in zip(Domain.objects.filter(exam=exam).order_by("order"), NCA_DOMAINS, strict=True):
        domain.name = name
        domain.save()
    cohort = Cohort.objects.create(owner=instructor, exam=exam, name="Spring class")
    Invitation.objects.create(cohort=cohort, shares_results=True)
    for number, name in enumerate(["alexandra-longname", "bo", "chidi"], start=1):
        member = UserFactory(username=name)
        Membership.objects.create(cohort=cohort, learner=member)
        finished_history(member, exam, attempts=6 * number, per_attempt=40, seed=number)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page, page_problems)
    log_in_as(page, live_server, instructor)
    page.goto(f"{live_server.url}/cohorts/{cohort.pk}/")
    table, wrap = page.locator("table.cohort"), page.locator(".cohort-wrap")
    # Every column inside the card: nothing scrolls, every domain heading is on screen.
    assert page.evaluate("document.querySelector('.cohort-wrap').scrollWidth <= document.querySelector('.cohort-wrap').clientWidth")
    wrap_box = wrap.bounding_box()
    for name in NCA_DOMAINS:
        heading = page.get_by_role("columnheader", name=name)
        box = heading.bounding_box()
        assert box["x"] >= wrap_box["x"] and box["x"] + box["width"] <= wrap_box["x"] + wrap_box["width"], name
    assert table.bounding_box()["width"] <= 886
    # Each domain cell's figures are in its text, and show on focus (not on hover alone).
    cell = member_row(page, "chidi").locator("td.heat").first
    assert "right" in cell.text_content() or "counted" in cell.text_content()
    detail = cell.locator(".heat-detail")
    assert detail.bounding_box()["width"] <= 1
    cell.focus()
    assert detail.bounding_box()["width"] > 40
    expect(detail).to_contain_text("Core ML and AI Knowledge")
    assert_accessible(page)
    screenshot(page, "cohort-report-1280")

    # Sorting is a link: by mocks, then the other way; an unknown column falls back to learners.
    page.get_by_role("columnheader", name="Mocks").get_by_role("link").click()
    expect(page).to_have_url(f"{live_server.url}/cohorts/{cohort.pk}/?sort=mocks")
    expect(page.get_by_role("columnheader", name="Mocks")).to_have_attribute("aria-sort", "ascending")
    page.get_by_role("columnheader", name="Mocks").get_by_role("link").click()
    expect(page.get_by_role("columnheader", name="Mocks")).to_have_attribute("aria-sort", "descending")
    first_members = page.locator("table.cohort tbody th[scope=row]").all_text_contents()
    assert [text.split("Mock")[0].strip() for text in first_members][0] == "chidi"
    page.get_by_role("columnheader", name="Trustworthy AI").get_by_role("link").click()
    expect(page.get_by_role("columnheader", name="Trustworthy AI")).to_have_attribute("aria-sort", "ascending")
    page.goto(f"{live_server.url}/cohorts/{cohort.pk}/?sort=nonsense")
    expect(page.get_by_role("columnheader", name="Learner")).to_have_attribute("aria-sort", "ascending")
    context.close()

    phone_context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    phone = phone_context.new_page()
    watch(phone, page_problems)
    log_in_as(phone, live_server, instructor)
    phone.goto(f"{live_server.url}/cohorts/{cohort.pk}/")
    assert phone.evaluate("document.querySelector('table.cohort').scrollWidth > document.querySelector('.cohort-wrap').clientWidth")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # A tap shows a cell's figures.
    tapped = member_row(phone, "bo").locator("td.heat").first
    tapped.tap()
    assert tapped.locator(".heat-detail").bounding_box()["width"] > 40
    assert_accessible(phone)
    screenshot(phone, "cohort-report-390")
    phone_context.close()
    assert page_problems == []

