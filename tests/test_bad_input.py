"""Bad input the other test files do not already cover: each gets a clear answer and changes nothing.

docs/SECURITY.md lists every class of bad input tried, with the test that proves it.
"""
import pytest
from django.urls import reverse

from exams.models import Attempt, Choice, Dispute, Erratum, ErratumPolicy, ErratumStatus, Question
from exams.room.services import attempt_start, attempt_submit
from tests.factories import ExamFactory, exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def test_an_attempt_that_does_not_exist_is_404(learner_client):
    assert learner_client.get(reverse("exams:question", args=[999999, 1])).status_code == 404
    assert learner_client.post(reverse("exams:submit", args=[999999]), {"confirmed": "1"}).status_code == 404


def test_opening_a_slot_beyond_the_attempt_goes_back_to_the_last_one_viewed(learner_client, learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    response = learner_client.get(reverse("exams:question", args=[attempt.pk, 99]))
    assert response["Location"] == reverse("exams:question", args=[attempt.pk, 1])


def test_the_same_choice_twice_is_refused(learner_client, learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    response = learner_client.post(reverse("exams:question", args=[attempt.pk, 1]), {"choice": ["2", "2"]}, headers=HTMX)
    assert response.status_code == 400
    assert not attempt.responses.filter(answered_at__isnull=False).exists()


@pytest.mark.parametrize("count", ["0", "1000", "ten", "-3"])
def test_a_session_size_out_of_range_is_refused(learner_client, learner, count):
    exam = exam_with_bank()
    response = learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "practice", "count": count}, follow=True)
    page = response.content.decode()
    assert "Ensure this value" in page or "Enter a whole number" in page
    assert not Attempt.objects.exists()


def test_an_unknown_session_mode_is_refused(learner_client):
    exam = exam_with_bank()
    page = learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "cheat"}, follow=True).content.decode()
    assert "Select a valid choice" in page
    assert not Attempt.objects.exists()


@pytest.mark.parametrize("published", [False, None], ids=["unpublished", "unknown"])
def test_starting_an_exam_that_is_not_offered_is_404(learner_client, published):
    code = ExamFactory(is_published=False).code if published is False else "NO-SUCH-EXAM"
    assert learner_client.post(reverse("exams:start_mock", args=[code])).status_code == 404
    assert learner_client.post(reverse("exams:start_session", args=[code]), {"mode": "practice"}).status_code == 404
    assert not Attempt.objects.exists()


def test_an_unknown_results_filter_shows_everything(learner_client, learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    attempt_submit(user=learner, attempt_id=attempt.pk)
    page = learner_client.get(reverse("exams:results", args=[attempt.pk]), {"show": "<script>"}).content.decode()
    assert page.count('class="result-item') == 10
    assert "<script>" not in page.split("<main", 1)[1]


def test_a_forged_host_header_is_refused(client, db):
    assert client.get(reverse("exams:catalogue"), headers={"host": "evil.example"}).status_code == 400


SCRIPT = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_html_in_every_text_field_is_shown_as_text(client, learner, settings):
    """Titles, stems, choices, feedback, explanations, notes, names and reasons never become markup."""
    exam = exam_with_bank(weights=(100,), per_domain=10, question_count=10)
    exam.title = exam.description = SCRIPT
    exam.save()
    exam.domains.update(name=f"Domain {SCRIPT}")
    Question.objects.filter(exam=exam).update(title=SCRIPT, stem=SCRIPT, explanation=SCRIPT)
    Choice.objects.filter(question__exam=exam).update(text=SCRIPT, feedback=SCRIPT)
    learner.username = "a<b>c"
    learner.save()
    attempt = attempt_start(user=learner, exam=exam).attempt
    question = attempt.responses.get(position=1).question
    erratum = Erratum.objects.create(question=question, note=SCRIPT, status=ErratumStatus.CONFIRMED, policy=ErratumPolicy.CREDIT_CORRECTED)
    erratum.published_key.set([question.choices.first()])
    client.force_login(learner)
    urls = [
        reverse("exams:catalogue"), reverse("exams:exam", args=[exam.code]), reverse("exams:dashboard"),
        reverse("exams:question", args=[attempt.pk, 1]), reverse("exams:review", args=[attempt.pk]),
    ]
    pages = [client.get(url).content.decode() for url in urls]
    client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
    client.post(reverse("exams:report", args=[attempt.pk, 1]), {"reason": SCRIPT})
    assert Dispute.objects.get().reason == SCRIPT
    pages += [client.get(reverse("exams:results", args=[attempt.pk])).content.decode()]
    pages += [client.get(reverse("exams:report", args=[attempt.pk, 1])).content.decode()]
    for page in pages:
        body = page.split("<body", 1)[1]
        assert "<script>alert" not in body and "onerror=alert" not in body.replace("onerror=alert(1)&gt;", "")
        assert "<img src=x" not in body
    assert "a&lt;b&gt;c" in pages[0]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    ["/exams/%00/", "/exams/NCA%00GENM/mock/", "/?q=%00", "/dashboard/?page=1%00", "/accounts/login/?next=%00"],
)
def test_a_nul_byte_in_the_path_or_query_is_400_before_any_query(client, django_assert_num_queries, path):
    with django_assert_num_queries(0):
        response = client.get(path)
    assert response.status_code == 400 and "NUL" in response.content.decode()


@pytest.mark.django_db
def test_a_nul_byte_in_a_form_field_is_400_and_changes_nothing(client):
    from django.contrib.auth.models import User

    response = client.post("/accounts/signup/", {"username": "nul\x00user", "email": "n@example.com", "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9"})
    assert response.status_code == 400
    assert not User.objects.filter(email="n@example.com").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("charset", ["utf-16", "latin-1"])
def test_a_form_in_a_foreign_charset_gets_our_own_error_page(client, charset):
    # The test client encodes the text in the declared charset.
    response = client.post("/accounts/login/", "username=ada&password=x", content_type=f"application/x-www-form-urlencoded; charset={charset}")
    assert response.status_code == 400 and "UTF-8 only" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_a_login_username_of_300_characters_is_a_form_error(client, login_url):
    response = client.post(login_url, {"username": "u" * 300, "password": "whatever"})
    assert response.status_code == 200
    assert "at most 150 characters" in response.content.decode()


@pytest.mark.django_db
def test_our_404_page_is_a_page(client):
    response = client.get("/no/such/page/")
    assert response.status_code == 404 and "Not found" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("view", ["change", "delete", "history"])
def test_an_empty_admin_to_field_is_400_not_a_crash(admin_client, view):
    from exams.models import Exam

    exam = Exam.objects.create(code="X", title="X", description="", question_count=1, time_limit_minutes=1, passing_score=70)
    url = reverse(f"admin:exams_exam_{view}", args=[exam.pk])
    assert admin_client.get(url, {"_to_field": ""}).status_code == 400
    assert admin_client.post(url, {"_to_field": "", "post": "yes"}).status_code == 400
    assert Exam.objects.filter(pk=exam.pk).exists()



def test_numbers_past_64_bits_are_told_apart_without_converting_huge_strings(settings):
    """Found by the fuzzer on SQLite (OverflowError, a 500): the gate refuses them there."""
    from config.hostile import _has_huge_number

    settings.DATABASES = {**settings.DATABASES, "default": {**settings.DATABASES["default"], "ENGINE": "django.db.backends.sqlite3"}}
    assert _has_huge_number([str(2**63)]) and _has_huge_number([str(-(2**63) - 1)]) and _has_huge_number(["9" * 70_000])
    assert not _has_huge_number([str(2**63 - 1), str(-(2**63)), "0" * 70_000 + "5", "12", "abc"])
