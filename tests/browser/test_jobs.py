"""A large import waits for the worker, and the import page follows its progress by itself (htmx polling)."""
from playwright.sync_api import expect

from exams.models import Question
from jobs.models import Job, JobStatus
from tests.browser.conftest import assert_accessible, log_in_as
from tests.browser.test_admin_import import choose_and_upload
from tests.factories import DomainFactory, ExamFactory
from tests.jobs.test_worker import run_worker


def test_the_import_page_shows_a_large_import_finish_without_a_reload(page, live_server, instructor, database_tasks, screenshot):
    exam = ExamFactory(code="GENM", title="Generative AI")
    DomainFactory(exam=exam, name="Data", order=1, weight=100)
    text = "$CATEGORY: $course$/top/Data\n\n" + "\n\n".join(f"::Q{n}::Question {n}?{{=a ~b ~c}}" for n in range(501))
    log_in_as(page, live_server, instructor)
    page.goto(f"{live_server.url}/admin/exams/question/import/")
    expect(page.get_by_text("An import of more than 500 questions runs in the background")).to_be_visible()
    expect(page.get_by_role("heading", name="Large imports")).to_have_count(0)

    choose_and_upload(page, name="big.gift", text=text)
    page.get_by_role("button", name="Import 501 questions").click()

    expect(page.get_by_text("they are being imported in the background")).to_be_visible()
    status = page.get_by_role("status").filter(has_text="Import 501 questions from big.gift into GENM")
    expect(status).to_contain_text("Queued")
    expect(status).to_contain_text("Waiting for the background worker")
    assert_accessible(page)
    assert not Question.objects.exists()

    assert run_worker().returncode == 0

    # No reload: the polling brings the outcome in, then stops.
    expect(status).to_contain_text("Succeeded", timeout=15_000)
    expect(status).to_contain_text("Created 501 questions in GENM. Data: 501")
    expect(status.locator("progress")).to_have_attribute("value", "501")
    # The import, and the statistics refresh it asked for once it committed.
    assert Job.objects.get(kind="import_questions").status == JobStatus.SUCCEEDED and Question.objects.count() == 501
    assert_accessible(page)
    screenshot(page, "admin-import-job")
    status.get_by_role("link", name="Import 501 questions from big.gift into GENM").click()
    expect(page.get_by_role("heading", name="Import 501 questions from big.gift into GENM")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Succeeded")
