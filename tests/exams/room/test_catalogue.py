"""The catalogue: published exams with domains, weights, length, time limit, the learner's scores."""
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from exams.models import Attempt, AttemptMode, AttemptStatus, Exam
from tests.factories import DomainFactory, ExamFactory, exam_with_bank

pytestmark = pytest.mark.django_db


def finished_mock(user, exam, score: str, minutes_ago: int) -> Attempt:
    when = timezone.now() - timezone.timedelta(minutes=minutes_ago)
    return Attempt.objects.create(
        user=user, exam=exam, mode=AttemptMode.MOCK, status=AttemptStatus.SUBMITTED,
        finished_at=when, score=Decimal(score), published_score=Decimal(score),
    )


def test_it_lists_published_exams_with_domains_and_weights(client, nca_genm):
    ExamFactory(code="HIDDEN-1", is_published=False)
    page = client.get(reverse("exams:catalogue")).content.decode()
    assert "NCA-GENM" in page and "HIDDEN-1" not in page
    for name, weight in nca_genm.domains.values_list("name", "weight"):
        assert name in page
        assert f"{weight}%" in page
    assert "60 minutes" in page


def test_it_shows_the_learners_last_and_best_mock_scores(learner_client, learner, other_learner):
    exam = exam_with_bank()
    finished_mock(learner, exam, "80.00", minutes_ago=60)
    finished_mock(learner, exam, "65.00", minutes_ago=5)
    finished_mock(other_learner, exam, "99.00", minutes_ago=1)
    page = learner_client.get(reverse("exams:catalogue")).content.decode()
    assert "<dt>Your last score</dt><dd>65.0%</dd>" in page
    assert "<dt>Your best score</dt><dd>80.0%</dd>" in page


def test_an_exam_without_questions_says_so(client):
    exam = ExamFactory()
    DomainFactory(exam=exam)
    assert "No questions yet" in client.get(reverse("exams:catalogue")).content.decode()
    assert "no questions yet" in client.get(reverse("exams:exam", args=[exam.code])).content.decode()


def test_no_published_exam_is_an_explained_empty_state(client):
    Exam.objects.update(is_published=False)
    assert "No exams are published yet" in client.get(reverse("exams:catalogue")).content.decode()


def test_an_unpublished_exam_page_is_404(client):
    exam = ExamFactory(is_published=False)
    assert client.get(reverse("exams:exam", args=[exam.code])).status_code == 404


def test_the_catalogue_costs_the_same_queries_for_one_exam_or_five(learner_client, django_assert_num_queries):
    exam_with_bank()
    learner_client.get(reverse("exams:catalogue"))  # session and user warm-up
    with django_assert_num_queries(5) as one:
        learner_client.get(reverse("exams:catalogue"))
    for _ in range(4):
        exam_with_bank(weights=(50, 30, 20))
    with django_assert_num_queries(len(one.captured_queries)):
        learner_client.get(reverse("exams:catalogue"))


def test_a_visitor_is_offered_sign_up_and_log_in_that_come_back_to_the_exam(client):
    exam = exam_with_bank()
    url = reverse("exams:exam", args=[exam.code])
    page = client.get(url).content.decode()
    assert f'href="{reverse("accounts:signup")}?next={url}">Sign up to start</a>' in page
    assert f'href="{reverse("login")}?next={url}">Log in</a>' in page
    assert "Start mock</button>" not in page
    signed_up = client.post(
        f'{reverse("accounts:signup")}?next={url}',
        {"username": "newcomer", "email": "new@example.com", "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9"},
    )
    assert signed_up.status_code == 302 and signed_up["Location"] == url
    assert "Start mock</button>" in client.get(url).content.decode()


def test_sign_up_never_sends_the_learner_to_another_site(client):
    signed_up = client.post(
        f'{reverse("accounts:signup")}?next=https://evil.example/',
        {"username": "careful", "email": "careful@example.com", "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9"},
    )
    assert signed_up["Location"] == reverse("exams:catalogue")


def test_the_way_to_start_comes_before_the_rules_in_full(learner_client):
    exam = exam_with_bank()
    page = learner_client.get(reverse("exams:exam", args=[exam.code])).content.decode()
    assert page.index("Start mock</button>") < page.index('id="rules-heading"') < page.index("keeps running if you leave the page")
