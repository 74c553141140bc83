"""Random and hostile files into every bank importer the admin's import form offers (its
format choices, so a format added later joins): the parser never raises, the admin's upload,
preview and confirm never answer 5xx, and XML entity expansion, external references and an
embedded file over 1 MB are refused by every format."""
import base64
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from exams.bank.admin_imports import QuestionImportForm
from exams.bank.imports import FORMATS, import_bank, parse_upload, write_export
from exams.models import ExhibitImage, Question
from tests.factories import exam_with_bank
from tests.fuzz.harness import failure_text, fuzz_settings

pytestmark = pytest.mark.django_db
IMPORT_URL = reverse("admin:exams_question_import")


def import_formats() -> list[str]:
    """The formats the import form offers, read where the form reads them."""
    return [name for name, _ in QuestionImportForm.base_fields["format"].choices]


def file_name(fmt: str) -> str:
    return f"bank.{FORMATS[fmt].extension}"


# Pieces of every format's syntax (GIFT, Aiken, certprep JSON, Moodle XML) and hostile text:
# a random file strings them together, and every format reads every file.
FRAGMENTS = [
    "::", "::Title::", "{", "}", "=", "~", "#", "####", "%50%", "%-100%", "%1e9%", "\\{", "\\=", "\\:", "$CATEGORY: $course$/top/X",
    "// comment", "[markdown]", "[html]", "TRUE", "FALSE", "->", "\n", "\n\n", "\r\n", " ",
    "A) ", "B. ", "C) ", "ANSWER: A", "ANSWER: Z", "ANSWER:",
    '{"format": "certprep-bank", "version": 1, "questions": [', "]}", '{"title": "t", ', '"stem": "s", ',
    '"choices": [{"text": "a", "correct": true}, {"text": "b", "correct": false}]', '"kind": "multiple", "choose": 99',
    "null", "1e999", "-0", "[" * 60, "]" * 60, '"\\u0000"', '"\\ud800"', ",", ":",
    '<?xml version="1.0" encoding="UTF-8"?>', "<quiz>", "</quiz>", '<question type="multichoice">', "</question>",
    "<name><text>", "</text></name>", '<questiontext format="html"><text>', "</text></questiontext>",
    '<answer fraction="100"><text>', '<answer fraction="0"><text>', "</text></answer>", "<![CDATA[", "]]>",
    "&amp;", "&lt;", "&#0;", "&#x10FFFF;", "&undefined;", '<file name="a.png" path="/" encoding="base64">', "iVBORw0KGgo=", "</file>",
    "\x00", "\ufeff", "\u202e", "😀", "é", "<script>alert(1)</script>", "![x](exhibit:missing.png)",
]


def seeds() -> dict[str, str]:
    """A real bank exported in each format that can write one: mutations of it reach deep."""
    exam = exam_with_bank(weights=(100,), per_domain=3, question_count=3)
    texts = {}
    for fmt in import_formats():
        try:
            texts[fmt] = write_export(exam=exam, fmt=fmt, questions=Question.objects.filter(exam=exam))
        except ValueError:  # a format that only reads
            texts[fmt] = ""
    return texts


def random_file(seed: str) -> st.SearchStrategy[bytes]:
    pieces = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=40).map("".join)

    @st.composite
    def mutated(draw) -> str:
        text = seed
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(text)))
            cut = draw(st.integers(0, 30))
            text = text[:at] + draw(pieces) + text[at + cut:]
        return text

    text = st.one_of(pieces, mutated()) if seed else pieces
    return st.one_of(text.map(lambda t: t.encode("utf-8")), st.binary(max_size=200))


def test_every_importer_reads_random_files_without_raising(instructor):
    texts = seeds()
    exam = Question.objects.first().exam
    failures = []
    for fmt in import_formats():
        for seed_fmt, seed in texts.items():

            @fuzz_settings(per_hundred=10)
            @given(data=random_file(seed), skip=st.booleans())
            def run(data, skip):
                result = parse_upload(data=data, fmt=fmt, skip_unsupported=skip, exam_code=exam.code)
                import_bank(exam=exam, result=result, default_domain=None, dry_run=True)

            try:
                run()
            except Exception as error:  # every format is tried; all failures are reported together
                failures.append(failure_text(f"{fmt} reading mutated {seed_fmt}", error))
    assert not failures, "\n\n".join(failures)


def upload_preview_confirm(client, exam, fmt: str, content: bytes) -> list:
    """The admin's whole import of one file; the answers of each step."""
    answers = [client.post(IMPORT_URL, {"exam": exam.pk, "format": fmt, "file": SimpleUploadedFile(file_name(fmt), content)})]
    if answers[0].status_code == 302 and "/import/" in answers[0]["Location"]:
        preview = answers[0]["Location"]
        answers.append(client.get(preview))
        answers.append(client.post(preview.rstrip("/") + "/confirm/"))
    return answers


def test_the_admin_import_answers_random_files_without_a_server_error(instructor_client):
    texts = seeds()
    exam = Question.objects.first().exam
    failures = []
    for fmt in import_formats():

        @fuzz_settings(per_hundred=5)
        @given(data=random_file(texts.get(fmt, "")))
        def run(data):
            for answer in upload_preview_confirm(instructor_client, exam, fmt, data):
                assert answer.status_code < 500 and b"Traceback" not in answer.content, answer.status_code

        try:
            run()
        except Exception as error:  # every format is tried; all failures are reported together
            failures.append(failure_text(fmt, error))
    assert not failures, "\n\n".join(failures)


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE quiz [\n <!ENTITY lol "lol">\n'
    + "".join(f' <!ENTITY lol{n} "{("&lol%s;" % (n - 1 if n > 1 else "")) * 10}">\n' for n in range(1, 10))
    + ']>\n<quiz><question type="multichoice"><name><text>&lol9;</text></name>'
    '<questiontext format="html"><text>&lol9;</text></questiontext>'
    '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text></answer></question></quiz>\n'
)
EXTERNAL = (
    '<?xml version="1.0"?>\n<!DOCTYPE quiz [<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n'
    '<quiz><question type="multichoice"><name><text>&secret;</text></name>'
    '<questiontext format="html"><text>Q &secret;</text></questiontext>'
    '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text></answer></question></quiz>\n'
)
EXTERNAL_DTD = (
    '<?xml version="1.0"?>\n<!DOCTYPE quiz SYSTEM "http://127.0.0.1:9/evil.dtd">\n'
    '<quiz><question type="multichoice"><name><text>T</text></name>'
    '<questiontext format="html"><text>Q</text></questiontext>'
    '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text></answer></question></quiz>\n'
)
BIG_IMAGE = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * (1024 * 1024 + 1)).decode()
BIG_EMBEDDED_XML = (
    '<?xml version="1.0"?>\n<quiz><question type="multichoice"><name><text>Big</text></name>'
    '<questiontext format="html"><text><![CDATA[<p>Q <img src="@@PLUGINFILE@@/big.png"></p>]]></text>'
    f'<file name="big.png" path="/" encoding="base64">{BIG_IMAGE}</file></questiontext>'
    '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text></answer></question></quiz>\n'
)
HOSTILE_FILES = {
    "entity expansion": LAUGHS, "external entity": EXTERNAL, "external DTD": EXTERNAL_DTD,
    "embedded file over 1 MB (XML)": BIG_EMBEDDED_XML, "embedded file over 1 MB (JSON)": "",
}


def with_embedded_image(exam, data: bytes) -> str:
    """The exam's own bank as certprep JSON, its first question showing one embedded image."""
    bank = json.loads(write_export(exam=exam, fmt="json", questions=Question.objects.filter(exam=exam)))
    first = bank["questions"][0]
    first["exhibit"] = "![chart](exhibit:big.png)"
    first["exhibit_images"] = [{"name": "big.png", "data": base64.b64encode(data).decode()}]
    first["title"] += " (with an image)"
    # The factory's questions are not complete enough to publish: they land as drafts.
    for question in bank["questions"]:
        question["status"] = "draft"
    return json.dumps(bank)


def test_an_embedded_file_is_imported_when_small_and_refused_over_1_mb(instructor_client):
    exam = exam_with_bank(weights=(100,), per_domain=3, question_count=3)
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100
    big = b"\x89PNG\r\n\x1a\n" + b"\x00" * (1024 * 1024 + 1)
    before = Question.objects.count()
    upload_preview_confirm(instructor_client, exam, "json", with_embedded_image(exam, big).encode())
    assert Question.objects.count() == before and not ExhibitImage.objects.exists()
    upload_preview_confirm(instructor_client, exam, "json", with_embedded_image(exam, png).encode())
    assert ExhibitImage.objects.filter(name="big.png").exists(), "the small image is accepted (so size is what refused)"


@pytest.mark.parametrize("hostile", HOSTILE_FILES)
def test_hostile_files_are_refused_by_every_format(instructor_client, hostile):
    exam = exam_with_bank(weights=(100,), per_domain=3, question_count=3)
    content = HOSTILE_FILES[hostile] or with_embedded_image(exam, base64.b64decode(BIG_IMAGE))
    questions, images = Question.objects.count(), ExhibitImage.objects.count()
    for fmt in import_formats():
        answers = upload_preview_confirm(instructor_client, exam, fmt, content.encode())
        for answer in answers:
            assert answer.status_code < 500, (fmt, answer.status_code)
            page = answer.content.decode(errors="replace")
            assert "lollollol" not in page and not re.search(r"root:.*:0:0:", page), fmt
        assert (Question.objects.count(), ExhibitImage.objects.count()) == (questions, images), f"{fmt} imported {hostile}"
        result = parse_upload(data=content.encode(), fmt=fmt, skip_unsupported=True, exam_code=exam.code)
        summary = import_bank(exam=exam, result=result, default_domain=None, dry_run=True)
        assert not summary.ok or not any(plan.questions for plan in summary.domains), f"{fmt} accepts {hostile}"
