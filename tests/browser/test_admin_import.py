"""An instructor imports a GIFT bank in the real admin: a bad line is shown and imports nothing, a good file imports."""
from playwright.sync_api import expect

from exams.models import Question
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import DomainFactory, ExamFactory

GOOD = """\
$CATEGORY: $course$/top/Core ML

::Denoising::What does a **denoising** step remove?{
  =Predicted noise#Yes.
  ~Signal#No.
  ####The model predicts the noise.
}

$CATEGORY: $course$/top/Data

::Charts::Which charts profile an image dataset?{
  ~%50%Class histogram
  ~%50%Resolution scatter
  ~%-100%Pie of file names
}
"""
# The second question (line 11) is left without a key.
BAD = GOOD.replace("~%50%Class histogram", "~Class histogram").replace("~%50%Resolution scatter", "~Resolution scatter")


def choose_and_upload(page, *, name: str, text: str) -> None:
    page.get_by_label("Exam:").select_option(label="GENM: Generative AI")
    page.get_by_label("Format:").select_option(label="Moodle GIFT")
    page.get_by_label("File:").set_input_files({"name": name, "mimeType": "text/plain", "buffer": text.encode()})
    page.get_by_role("button", name="Preview import").click()


def test_an_instructor_sees_the_bad_line_then_imports_a_good_file(page, live_server, instructor, screenshot):
    exam = ExamFactory(code="GENM", title="Generative AI")
    DomainFactory(exam=exam, name="Core ML", order=1, weight=60)
    DomainFactory(exam=exam, name="Data", order=2, weight=40)
    log_in_as(page, live_server, instructor)

    page.goto(f"{live_server.url}/admin/exams/question/")
    page.get_by_role("link", name="Import questions").click()
    expect(page.get_by_role("heading", name="Import questions")).to_be_visible()
    assert_accessible(page)
    choose_and_upload(page, name="bank.gift", text=BAD)

    expect(page.get_by_text("Nothing will be imported: the file has 1 error.")).to_be_visible()
    expect(page.locator("#import-errors")).to_contain_text("Line 11: no choice is marked correct")
    expect(page.get_by_role("button", name="Import")).to_have_count(0)
    assert_accessible(page)
    assert not Question.objects.exists()

    page.get_by_role("link", name="Upload a corrected file").click()
    choose_and_upload(page, name="bank.gift", text=GOOD)
    expect(page.get_by_role("table", name="Core ML: 1 question")).to_contain_text("Denoising")
    expect(page.get_by_role("table", name="Data: 1 question")).to_contain_text("Multiple answers (choose 2)")
    expect(page.get_by_text("weights are not used for scoring")).to_be_visible()
    assert not Question.objects.exists()
    assert_accessible(page)
    screenshot(page, "8-import-preview")

    page.get_by_role("button", name="Import 2 questions").click()
    expect(page.get_by_text("Created 2 questions in GENM.")).to_be_visible()
    expect(page.get_by_role("link", name="Denoising")).to_be_visible()
    assert set(Question.objects.values_list("title", flat=True)) == {"Denoising", "Charts"}

    # Imported questions are drafts: "Drafts to review" says what each lacks.
    assert set(Question.objects.values_list("status", flat=True)) == {"draft"}
    page.get_by_role("link", name="Drafts to review").click()
    drafts = page.get_by_role("table", name="2 drafts")
    expect(drafts.get_by_role("row", name="Denoising")).to_contain_text("It has no topic")
    expect(drafts.get_by_role("row", name="Charts")).to_contain_text("It has no explanation")
    assert_accessible(page)
    screenshot(page, "admin-drafts")

    # Marking an incomplete draft ready is refused with its reasons; completing it works.
    page.get_by_role("checkbox", name="Select “Charts”").check()
    page.get_by_role("button", name="Mark selected ready").click()
    expect(page.get_by_text("1 question stays draft:")).to_be_visible()
    expect(page.get_by_text("“Charts”")).to_contain_text("it has no topic; it has no explanation")
    page.get_by_role("link", name="Denoising").click()
    page.get_by_label("Topic:").fill("Diffusion")
    assert_accessible(page)
    page.get_by_role("button", name="Save and mark ready").click()
    expect(page.get_by_text("Marked 1 question ready.")).to_be_visible()
    assert dict(Question.objects.values_list("title", "status")) == {"Denoising": "ready", "Charts": "draft"}
