"""Question import in admin (upload → preview → confirm) and the export actions, with their limits and permissions."""
import base64
import json
from importlib import import_module

import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from exams.bank.admin_imports import MAX_UPLOAD_BYTES, SESSION_KEY, QuestionImportExportMixin
from exams.models import ExhibitImage, Question
from tests.factories import DomainFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

IMPORT_URL = reverse("admin:exams_question_import")
CHANGELIST_URL = reverse("admin:exams_question_changelist")

GOOD = b"""\
$CATEGORY: $course$/top/Core ML

::Denoising::What does a denoising step remove?{
  =Predicted noise
  ~Signal
}

$CATEGORY: $course$/top/Data

::Charts::Which charts profile a dataset?{
  ~%50%Histogram
  ~%50%Scatter
  ~%-100%Pie
}
"""
# The Charts question (line 10) loses its keys.
BAD = GOOD.replace(b"~%50%Histogram", b"~Histogram").replace(b"~%50%Scatter", b"~Scatter")


@pytest.fixture(autouse=True)
def _question_admin_has_the_mixin():
    mro = type(admin.site._registry[Question]).__mro__
    assert QuestionImportExportMixin in mro, (
        "QuestionAdmin must take QuestionImportExportMixin as its first base (exams/admin.py)"
    )


def upload(client, exam, content: bytes = GOOD, *, name: str = "bank.gift", fmt: str = "gift", **fields):
    data = {"exam": exam.pk, "format": fmt, "file": SimpleUploadedFile(name, content), **fields}
    return client.post(IMPORT_URL, data)


def test_the_question_list_links_to_the_import(instructor_client, exam):
    response = instructor_client.get(CHANGELIST_URL, {"exam__id__exact": exam.pk})

    assert f'href="{IMPORT_URL}?exam={exam.pk}"' in response.content.decode()
    form = instructor_client.get(IMPORT_URL, {"exam": exam.pk})
    assert form.status_code == 200
    assert form.context["form"]["exam"].value() == str(exam.pk)


def test_upload_preview_confirm(instructor_client, exam):
    uploaded = upload(instructor_client, exam)

    assert uploaded.status_code == 302
    preview_url = uploaded.url
    preview = instructor_client.get(preview_url)
    page = preview.content.decode()
    assert preview.status_code == 200
    assert "Core ML: 1 question" in page and "Data: 1 question" in page
    assert "Denoising" in page and "Charts" in page
    assert "weights are not used for scoring" in page
    assert 'value="Import 2 questions"' in page
    assert not Question.objects.exists()  # nothing written by the preview

    confirmed = instructor_client.post(preview.context["confirm_url"])

    assert confirmed.status_code == 302
    assert confirmed.url == f"{CHANGELIST_URL}?exam__id__exact={exam.pk}"
    assert set(Question.objects.values_list("title", "domain__name")) == {("Denoising", "Core ML"), ("Charts", "Data")}
    listing = instructor_client.get(confirmed.url)
    assert "Created 2 questions in GENM. Core ML: 1; Data: 1" in listing.content.decode()
    assert SESSION_KEY not in instructor_client.session

    again = instructor_client.post(preview.context["confirm_url"])
    assert again.status_code == 302 and again.url == IMPORT_URL
    assert Question.objects.count() == 2


def test_a_double_click_on_confirm_imports_once(instructor_client, instructor, exam, rf):
    confirm_url = instructor_client.get(upload(instructor_client, exam).url).context["confirm_url"]
    # The second click's request loaded the session before the first one finished.
    stale = import_module(settings.SESSION_ENGINE).SessionStore(session_key=instructor_client.session.session_key)
    assert SESSION_KEY in stale
    second = rf.post(confirm_url)
    second.user, second.session = instructor, stale
    second._messages = FallbackStorage(second)

    instructor_client.post(confirm_url)
    response = admin.site._registry[Question].import_confirm_view(second, token=confirm_url.split("/")[-3])

    assert response.status_code == 302 and response.url == IMPORT_URL
    assert Question.objects.count() == 2


def test_a_bad_line_shows_the_error_and_imports_nothing(instructor_client, exam):
    preview = instructor_client.get(upload(instructor_client, exam, BAD).url)

    page = preview.content.decode()
    assert "Line 10: no choice is marked correct" in page
    assert "Nothing will be imported: the file has 1 error." in page
    assert 'id="question-import-confirm"' not in page

    instructor_client.post(preview.context["confirm_url"])
    assert not Question.objects.exists()


def test_the_default_domain_takes_questions_without_one(instructor_client, exam):
    aiken = b"Pick one?\nA. yes\nB. no\nANSWER: A\n"
    refused = instructor_client.get(upload(instructor_client, exam, aiken, name="bank.txt", fmt="aiken").url)
    assert "Line 1: the file names no domain for this question" in refused.content.decode()

    data = exam.domains.get(name="Data")
    preview = instructor_client.get(
        upload(instructor_client, exam, aiken, name="bank.txt", fmt="aiken", default_domain=data.pk).url
    )
    instructor_client.post(preview.context["confirm_url"])
    assert Question.objects.get().domain == data


def test_a_default_domain_of_another_exam_is_refused(instructor_client, exam):
    elsewhere = DomainFactory(name="Elsewhere")

    response = upload(instructor_client, exam, default_domain=elsewhere.pk)

    assert response.status_code == 200
    assert response.context["form"].errors["default_domain"] == [
        f"'Elsewhere' is a domain of {elsewhere.exam.code}, not of GENM."
    ]


def test_a_file_over_the_size_limit_is_refused(instructor_client, exam):
    response = upload(instructor_client, exam, GOOD + b"//" + b"x" * MAX_UPLOAD_BYTES)

    assert response.status_code == 200
    [message] = response.context["form"].errors["file"]
    assert message.startswith("The file is 5.1 MB; the limit is 5 MB. Split the bank into smaller files.")
    assert SESSION_KEY not in instructor_client.session


def test_other_file_types_and_encodings_are_refused(instructor_client, exam):
    docx = upload(instructor_client, exam, name="bank.docx")
    assert docx.context["form"].errors["file"] == [
        "Upload a .gift, .txt, .aiken, .json or .xml file; 'bank.docx' is not one of those types."
    ]

    latin = upload(instructor_client, exam, GOOD.replace(b"remove", "enlève".encode("latin-1")))
    [message] = latin.context["form"].errors["file"]
    assert message.startswith("The file is not UTF-8: byte 0xE8")
    assert not Question.objects.exists()


def test_a_learner_is_sent_to_the_admin_login(learner_client, exam):
    response = upload(learner_client, exam)

    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    assert not Question.objects.exists()


def test_staff_without_the_add_permission_get_403(client, exam):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_question"))
    client.force_login(viewer)

    assert client.get(IMPORT_URL).status_code == 403
    assert upload(client, exam).status_code == 403
    assert "Import questions" not in client.get(CHANGELIST_URL).content.decode()


def test_another_session_cannot_confirm_an_upload(instructor_client, instructor, exam):
    preview_url = upload(instructor_client, exam).url
    confirm_url = instructor_client.get(preview_url).context["confirm_url"]
    stranger = Client()
    stranger.force_login(UserFactory(username="other-teacher", is_staff=True, is_superuser=True))

    response = stranger.post(confirm_url)

    assert response.status_code == 302 and response.url == IMPORT_URL
    assert not Question.objects.exists()


def test_every_post_needs_the_csrf_token(instructor, exam):
    client = Client(enforce_csrf_checks=True)
    client.force_login(instructor)

    assert upload(client, exam).status_code == 403
    assert client.get(IMPORT_URL).status_code == 200
    assert "csrfmiddlewaretoken" in client.get(IMPORT_URL).content.decode()


def test_confirm_is_post_only(instructor_client, exam):
    confirm_url = instructor_client.get(upload(instructor_client, exam).url).context["confirm_url"]

    assert instructor_client.get(confirm_url).status_code == 405
    assert not Question.objects.exists()


def export(client, action: str, questions) -> object:
    return client.post(CHANGELIST_URL, {"action": action, "_selected_action": [question.pk for question in questions]})


def test_the_export_action_downloads_the_selected_questions(instructor_client, exam):
    chosen = QuestionFactory(exam=exam, domain=exam.domains.first(), title="Chosen")
    QuestionFactory(exam=exam, domain=exam.domains.first(), title="Left out")

    response = export(instructor_client, "export_as_json", [chosen])

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="GENM-questions.json"'
    document = json.loads(response.content)
    assert [question["title"] for question in document["questions"]] == ["Chosen"]

    gift = export(instructor_client, "export_as_gift", [chosen])
    assert gift["Content-Disposition"] == 'attachment; filename="GENM-questions.gift"'
    assert "::Chosen::" in gift.content.decode()


def test_an_export_the_format_cannot_hold_says_why(instructor_client, exam):
    multiple = QuestionFactory(exam=exam, domain=exam.domains.first(), kind="multiple", choose=2, keys=["A", "B"])

    response = export(instructor_client, "export_as_aiken", [multiple])

    assert response.status_code == 302
    page = instructor_client.get(response.url).content.decode()
    assert "Nothing was exported: Aiken cannot hold these questions." in page
    assert "Aiken holds single-answer questions only" in page


def test_an_export_across_exams_is_refused(instructor_client, exam):
    ours = QuestionFactory(exam=exam, domain=exam.domains.first())
    theirs = QuestionFactory()

    response = export(instructor_client, "export_as_gift", [ours, theirs])

    assert response.status_code == 302
    assert "Select questions of one exam to export" in instructor_client.get(response.url).content.decode()


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<quiz>
  <question type="category"><category><text>$course$/top/Core ML/Diffusion</text></category></question>
  <question type="multichoice">
    <name><text>Loss curve</text></name>
    <questiontext format="html">
      <text><![CDATA[<p><img src="@@PLUGINFILE@@/loss.png" alt="A loss curve"> Which step <b>diverges</b>?</p>]]></text>
      <file name="loss.png" path="/" encoding="base64">{base64.b64encode(PNG).decode()}</file>
    </questiontext>
    <generalfeedback format="html"><text><![CDATA[<p>Step 3: the loss jumps.</p>]]></text></generalfeedback>
    <idnumber>GENM-LOSS-1</idnumber>
    <single>true</single>
    <answer fraction="100" format="html"><text>Step 3</text><feedback><text>Yes.</text></feedback></answer>
    <answer fraction="0" format="html"><text>Step 1</text><feedback><text>No.</text></feedback></answer>
  </question>
  <question type="truefalse">
    <name><text>Noise</text></name>
    <questiontext format="html"><text>A denoising step removes predicted noise.</text></questiontext>
    <answer fraction="100"><text>true</text></answer>
    <answer fraction="0"><text>false</text></answer>
    <tags><tag><text>domain:Data</text></tag></tags>
  </question>
</quiz>
""".encode()


def test_a_moodle_xml_upload_previews_then_imports_with_its_exhibit(instructor_client, exam):
    preview = instructor_client.get(upload(instructor_client, exam, XML, name="bank.xml", fmt="xml").url)

    page = preview.content.decode()
    assert preview.status_code == 200
    assert "Moodle XML file <strong>bank.xml</strong>" in page
    assert "Core ML: 1 question" in page and "Data: 1 question" in page
    assert not Question.objects.exists() and not ExhibitImage.objects.exists()

    instructor_client.post(preview.context["confirm_url"])

    loss = Question.objects.get(title="Loss curve")
    assert (loss.domain.name, loss.topic, loss.idnumber) == ("Core ML", "Diffusion", "GENM-LOSS-1")
    assert loss.stem == "Which step **diverges**?" and loss.exhibit == "![A loss curve](exhibit:loss.png)"
    assert bytes(ExhibitImage.objects.get(name="loss.png").data) == PNG
    assert [(c.text, c.is_correct) for c in Question.objects.get(title="Noise").choices.order_by("order")] == [
        ("True", True), ("False", False)
    ]


def test_a_moodle_xml_upload_with_an_entity_imports_nothing(instructor_client, exam):
    bomb = b'<?xml version="1.0"?>\n<!DOCTYPE quiz [<!ENTITY a "aaaaaaaaaa">]>\n<quiz>&a;</quiz>'
    preview = instructor_client.get(upload(instructor_client, exam, bomb, name="bank.xml", fmt="xml").url)

    page = preview.content.decode()
    assert "Line 2: the file declares a DTD" in page
    assert 'id="question-import-confirm"' not in page
    instructor_client.post(preview.context["confirm_url"])
    assert not Question.objects.exists()


def test_every_format_of_the_registry_is_offered(instructor_client, exam):
    from exams.bank.formats.registry import FORMATS

    form = instructor_client.get(IMPORT_URL).context["form"]
    assert [name for name, _ in form.fields["format"].choices] == list(FORMATS)
    QuestionFactory(exam=exam, domain=exam.domains.first(), title="Chosen")
    listing = instructor_client.get(CHANGELIST_URL).content.decode()
    for bank_format in FORMATS.values():
        assert f'<option value="export_as_{bank_format.name}">{bank_format.export_description}</option>' in listing
    xml = export(instructor_client, "export_as_xml", Question.objects.all())
    assert xml["Content-Disposition"] == 'attachment; filename="GENM-questions.xml"'
    assert xml["Content-Type"] == "application/xml; charset=utf-8"
    assert "<text>Chosen</text>" in xml.content.decode()


def test_the_preview_shows_each_question_s_stem_and_choices(instructor_client, exam):
    page = instructor_client.get(upload(instructor_client, exam).url).content.decode()
    assert '<td class="import-stem">What does a denoising step remove?</td>' in page
    assert "<li>A. Predicted noise <strong>(key)</strong></li><li>B. Signal</li>" in page
    assert "<li>C. Pie</li>" in page


def test_the_only_exam_is_preselected(instructor_client, exam):
    assert instructor_client.get(IMPORT_URL).context["form"]["exam"].value() == exam.pk
    DomainFactory()  # a second exam: now there is a choice to make
    assert instructor_client.get(IMPORT_URL).context["form"]["exam"].value() is None
