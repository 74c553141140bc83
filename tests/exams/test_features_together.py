"""Where two features meet: the key rule and "try another", a refused start and the practice
it would end, a late-finished mock and the review cards, a dead mock and a new session."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from exams.models import Attempt, AttemptMode, AttemptStatus, ReviewCard
from exams.room import services
from exams.room.services import attempt_check, attempt_start
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def checked_practice(user, exam, *, count=3):
    practice = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=count).attempt
    slot = practice.responses.get(position=1)
    practice.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
    attempt_check(attempt=practice, response=slot)
    return practice


def test_try_another_never_names_a_running_mocks_topic(learner_client, learner):
    exam = exam_with_bank(weights=(50, 50), per_domain=10, question_count=20)  # the mock holds every question
    exam.questions.update(topic="Held topic")
    practice = checked_practice(learner, exam)
    attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK)
    page = learner_client.get(reverse("exams:question", args=[practice.pk, 1])).content.decode()
    assert "Try another like this" not in page and "Held topic" not in page
    answer = learner_client.post(reverse("exams:another_like_this", args=[practice.pk, 1]), follow=True)
    assert "Held topic" not in answer.content.decode() and "also in your running mock" in answer.content.decode()
    assert practice.responses.count() == 3


def test_a_refused_build_leaves_the_running_practice_as_it_was(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10, question_count=10)
    practice = checked_practice(learner, exam)
    attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK)
    cards = list(ReviewCard.objects.values_list("question_id", "due"))
    data = {
        "domains": [domain.pk for domain in exam.domains.all()], "count": "5", "source": "all", "mocks": "2",
        "timing": "untimed", "feedback": "each", "start": "1", "abandon": str(practice.pk),
    }
    learner_client.post(reverse("exams:practice_builder", args=[exam.code]), data)
    practice.refresh_from_db()
    assert practice.status == AttemptStatus.IN_PROGRESS
    assert list(ReviewCard.objects.values_list("question_id", "due")) == cards


def test_a_mock_finished_late_never_takes_a_card_back_in_time(learner):
    exam = exam_with_bank(weights=(50, 50), per_domain=10, question_count=20)
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=3).attempt
    mock = attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK).attempt
    slot = practice.responses.get(position=1)
    in_mock = mock.responses.get(question_id=slot.question_id)
    mock.record_answer(response=in_mock, choice_ids=[in_mock.choice_order[1]])
    Attempt.objects.filter(pk=mock.pk).update(deadline=timezone.now() - timedelta(hours=2))
    practice.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
    attempt_check(attempt=practice, response=slot)  # allowed: the mock is past its grace
    before = ReviewCard.objects.get(user=learner, question_id=slot.question_id)
    services.finalize_expired()
    after = ReviewCard.objects.get(user=learner, question_id=slot.question_id)
    assert (after.last_review, after.due, after.stability) == (before.last_review, before.due, before.stability)


def test_a_mock_past_its_grace_does_not_block_a_new_session(learner_client, learner):
    exam = exam_with_bank(weights=(50, 50), per_domain=10, question_count=10)
    mock = attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK).attempt
    Attempt.objects.filter(pk=mock.pk).update(deadline=timezone.now() - timedelta(hours=2))
    answer = learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "practice", "count": "3"})
    practice = Attempt.objects.get(user=learner, mode=AttemptMode.PRACTICE)
    assert answer.status_code == 302 and answer.url == reverse("exams:question", args=[practice.pk, 1])
    assert Attempt.objects.get(pk=mock.pk).status == AttemptStatus.EXPIRED
