"""Exhibit images uploaded on the question's admin page (issue 27, item 3): PNG/JPEG/WebP up to
500 KB, sniffed, never SVG, alt text required, safe names, one name one image."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from exams.bank.exhibits import upload_name
from exams.models import ExhibitImage, Question
from tests.exams.bank.test_status import _question_post
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 32
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def upload(client, question, *, name: str, data: bytes, alt: str = "A bar chart of latency per batch size"):
    post = _question_post(question, exhibit_alt=alt, exhibit_upload=SimpleUploadedFile(name, data))
    return client.post(reverse("admin:exams_question_change", args=[question.pk]), post)


def errors(response) -> dict:
    return response.context["adminform"].form.errors if response.status_code == 200 else {}


def test_an_image_is_stored_shown_in_the_exhibit_and_the_preview(instructor_client):
    question = QuestionFactory(topic="Serving")
    response = upload(instructor_client, question, name="Latency Chart.PNG", data=PNG)
    assert response.status_code == 302, errors(response)
    question.refresh_from_db()
    assert question.exhibit == "![A bar chart of latency per batch size](exhibit:latency-chart.png)"
    image = ExhibitImage.objects.get()
    assert (image.name, image.content_type, bytes(image.data)) == ("latency-chart.png", "image/png", PNG)
    page = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).text
    assert 'alt="A bar chart of latency per batch size"' in page and "latency-chart.png" in page
    assert 'enctype="multipart/form-data"' in page


def test_svg_is_refused_whatever_it_is_called(instructor_client):
    question = QuestionFactory(topic="Serving")
    for name in ("chart.svg", "chart.png"):
        response = upload(instructor_client, question, name=name, data=SVG)
        assert "is not a PNG, JPEG or WebP image (SVG and other types are not accepted)" in str(errors(response)["exhibit_upload"])
    assert not ExhibitImage.objects.exists()
    assert Question.objects.get(pk=question.pk).exhibit == ""


def test_over_500_kb_is_refused(instructor_client):
    question = QuestionFactory(topic="Serving")
    response = upload(instructor_client, question, name="big.png", data=PNG + b"\x00" * 500_000)
    assert "at most 500,000 are allowed" in str(errors(response)["exhibit_upload"])
    assert not ExhibitImage.objects.exists()


def test_alt_text_is_required(instructor_client):
    question = QuestionFactory(topic="Serving")
    response = upload(instructor_client, question, name="chart.png", data=PNG, alt="  ")
    assert "Describe the image" in str(errors(response)["exhibit_alt"])
    assert not ExhibitImage.objects.exists()


def test_a_name_already_held_with_other_bytes_is_refused_and_the_same_bytes_reused(instructor_client):
    question = QuestionFactory(topic="Serving")
    ExhibitImage.objects.create(name="chart.png", data=PNG, content_type="image/png", digest=__import__("hashlib").sha256(PNG).hexdigest())
    response = upload(instructor_client, question, name="chart.png", data=PNG + b"\x01")
    assert "already holds a different image named 'chart.png'" in errors(response)["exhibit_upload"][0]
    response = upload(instructor_client, question, name="Chart.png", data=PNG)
    assert response.status_code == 302 and ExhibitImage.objects.count() == 1


def test_upload_names_are_safe_and_say_what_the_bytes_are():
    assert upload_name("../../etc/Evil Name!.svg", PNG) == "evil-name.png"
    assert upload_name("C:\\Users\\me\\photo.jpeg", WEBP) == "photo.webp"
    assert upload_name("....png", PNG) == "exhibit.png"
    assert upload_name("x" * 300 + ".png", PNG) == "x" * 100 + ".png"
