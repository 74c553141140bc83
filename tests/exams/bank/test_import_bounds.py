"""Imports that stay bounded (issue 28): the preview's query count does not grow with the
file, the question cap, and a 703-choice question named with the bound it breaks."""
import base64
import hashlib
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from exams.letters import choice_label
from exams.models import ExhibitImage, Question
from tests.conftest import JOB_DATABASES

pytestmark = pytest.mark.django_db
IMPORT_URL = reverse("admin:exams_question_import")


def gift(count: int, *, choices: int = 3) -> bytes:
    wrong = " ".join(f"~w{n}" for n in range(choices - 1))
    body = "\n\n".join(f"::Q{n}::Question {n}?{{=right {wrong}}}" for n in range(count))
    return f"$CATEGORY: $course$/top/Data\n\n{body}\n".encode()


def bank_json(count: int, *, choices: int = 3) -> bytes:
    questions = [
        {"title": f"Q{n}", "stem": f"Question {n}?", "domain": "Data", "kind": "single",
         "choices": [{"label": choice_label(i), "text": f"c{i}", "is_correct": i == 0} for i in range(choices)]}
        for n in range(count)
    ]
    return json.dumps({"format": "certprep-bank", "version": 1, "exam": "X", "questions": questions}).encode()


def preview(client, exam, content: bytes, *, name="bank.gift", fmt="gift"):
    uploaded = client.post(IMPORT_URL, {"exam": exam.pk, "format": fmt, "file": SimpleUploadedFile(name, content)})
    assert uploaded.status_code == 302, uploaded.content.decode()[:2000]
    return client.get(uploaded.url)


@pytest.fixture
def data_exam(exam):
    assert exam.domains.filter(name="Data").exists()
    return exam


@pytest.mark.parametrize(("fmt", "name", "make"), [("gift", "bank.gift", gift), ("json", "bank.json", bank_json)])
def test_a_703_choice_question_is_named_with_the_bound_it_breaks(instructor_client, data_exam, fmt, name, make):
    page = preview(instructor_client, data_exam, make(1, choices=703), name=name, fmt=fmt)
    assert page.status_code == 200
    text = page.content.decode()
    assert "a question has at most 10 choices (found 703)" in text
    assert not Question.objects.exists()


def preview_queries(client, exam, content: bytes, *, fmt="gift", name="b.gift") -> int:
    uploaded = client.post(IMPORT_URL, {"exam": exam.pk, "format": fmt, "file": SimpleUploadedFile(name, content)})
    with CaptureQueriesContext(connection) as captured:
        page = client.get(uploaded.url)
    assert page.status_code == 200
    assert "Nothing will be imported" not in page.content.decode()
    return len(captured.captured_queries)


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def with_exhibits(count: int) -> bytes:
    """JSON questions whose exhibits carry an image: every other one the bank holds already
    (same bytes), the rest new (the costly case: a lookup per question)."""
    questions = []
    for n in range(count):
        question = json.loads(bank_json(1))["questions"][0] | {"title": f"E{n}"}
        image = "bank-chart.png" if n % 2 else f"file-{n}.png"
        question["exhibit"] = f"![chart](exhibit:{image})"
        question["exhibit_images"] = [{"name": image, "data": base64.b64encode(PNG).decode()}]
        questions.append(question)
    return json.dumps({"format": "certprep-bank", "version": 1, "exam": "X", "questions": questions}).encode()


def test_the_preview_costs_the_same_queries_for_10_or_300_questions(instructor_client, data_exam):
    small = preview_queries(instructor_client, data_exam, gift(10))
    large = preview_queries(instructor_client, data_exam, gift(300))
    assert small == large, (small, large)


def test_exhibit_images_are_looked_up_once_for_the_whole_file(instructor_client, data_exam):
    ExhibitImage.objects.create(name="bank-chart.png", data=PNG, content_type="image/png", digest=hashlib.sha256(PNG).hexdigest())
    small = preview_queries(instructor_client, data_exam, with_exhibits(10), fmt="json", name="b.json")
    large = preview_queries(instructor_client, data_exam, with_exhibits(300), fmt="json", name="b.json")
    assert small == large, (small, large)


def test_the_form_states_both_caps(instructor_client, data_exam):
    page = instructor_client.get(IMPORT_URL).content.decode()
    assert "at most 5 MB and 20,000 questions" in page


def test_a_file_past_the_question_cap_is_refused_whole(instructor_client, data_exam):
    from exams.bank import imports

    page = preview(instructor_client, data_exam, gift(imports.MAX_IMPORT_QUESTIONS + 1, choices=2)).content.decode()
    assert "The file holds 20,001 questions; one import takes at most 20,000. Split the bank into smaller files." in page
    assert "Nothing will be imported" in page and not Question.objects.exists()


@pytest.mark.django_db(databases=JOB_DATABASES)  # the job's progress commits on its own connection
def test_a_preview_of_more_than_2000_questions_is_checked_by_a_job(instructor_client, data_exam):
    from jobs.models import Job, JobStatus

    uploaded = instructor_client.post(
        IMPORT_URL, {"exam": data_exam.pk, "format": "gift", "file": SimpleUploadedFile("big.gift", gift(2001))}
    )
    waiting = instructor_client.get(uploaded.url).content.decode()
    assert "2001 questions, so they are checked in the background" in waiting
    job = Job.objects.get(kind="import_preview")
    # The test's task backend runs it at once; a worker would, a moment later.
    assert job.status == JobStatus.SUCCEEDED and job.total == 2001 and not Question.objects.exists()
    status = instructor_client.get(reverse("admin:jobs_job_change", args=[job.pk])).content.decode()
    assert f'href="{uploaded.url}"' in status and "Show the preview" in status
    page = instructor_client.get(uploaded.url).content.decode()
    assert "Data: 2001 questions" in page and 'value="Import 2001 questions"' in page
    assert "… and 1801 more questions in this domain" in page
    assert Job.objects.filter(kind="import_preview").count() == 1, "the preview is not checked twice"


def test_a_preview_of_2000_questions_is_checked_in_the_request(instructor_client, data_exam):
    from jobs.models import Job

    page = preview(instructor_client, data_exam, gift(2000)).content.decode()
    assert "Data: 2000 questions" in page and not Job.objects.exists()


def test_every_choice_index_has_a_letter():
    """As spreadsheets name columns: Z, AA … ZZ, then AAA (the 703rd), never a crash."""
    assert [choice_label(i) for i in (0, 25, 26, 51, 52, 701, 702, 703)] == ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "AAB"]

