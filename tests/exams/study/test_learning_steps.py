"""Mistakes back the same day (issue 26): a wrong answer is due again ten minutes after it was
checked, the page says when each checked question comes back, and a right answer after the
step graduates it to days."""
from datetime import UTC, timedelta

import fsrs
import pytest
from django.db.models import F
from django.urls import reverse

from exams.models import Attempt, AttemptMode, ReviewCard
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db

TEN_MINUTES = timedelta(minutes=10)


def position_of(slot, *, right: bool) -> int:
    """A choice's position on the page (1 = first shown): a key or a wrong one."""
    keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return next(index for index, pk in enumerate(slot.choice_order, start=1) if (pk in keys) == right)


def check(client, slot, *, choice: int, struck: int | None = None) -> str:
    data = {"choice": [str(choice)], "answer": "1", "check": "1"}
    if struck is not None:
        data |= {"struck": [str(struck)], "struck_sent": "1"}
    answer = client.post(reverse("exams:question", args=[slot.attempt_id, slot.position]), data, follow=True)
    assert answer.status_code == 200
    return answer.content.decode()


def start_review(client, exam) -> Attempt | None:
    client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "review"})
    return Attempt.objects.in_progress().filter(mode=AttemptMode.REVIEW).first()


def test_a_lapse_is_due_again_ten_minutes_later_and_a_right_answer_then_graduates(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
    learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "practice", "count": "2"})
    practice = Attempt.objects.get(user=learner, mode=AttemptMode.PRACTICE)
    slot, other = practice.responses.select_related("question").order_by("position")

    page = check(learner_client, slot, choice=position_of(slot, right=False))
    assert "Wrong" in page and "This question comes back for review again in 10 minutes." in page
    slot.refresh_from_db()
    card = ReviewCard.objects.get(user=learner, question=slot.question)
    assert (card.state, card.step, card.due) == (fsrs.State.Learning, 0, slot.checked_at + TEN_MINUTES)
    check(learner_client, other, choice=position_of(other, right=False))  # the last check ends the practice

    # Not yet due: nothing to review.
    assert start_review(learner_client, exam) is None
    # Ten minutes pass (every stored time moves back, as the clock moving forward would look).
    ReviewCard.objects.update(due=F("due") - TEN_MINUTES, last_review=F("last_review") - TEN_MINUTES)
    review = start_review(learner_client, exam)
    assert review is not None
    assert set(review.responses.values_list("question_id", flat=True)) == {slot.question_id, other.question_id}
    again = review.responses.select_related("question").get(question=slot.question)
    if again.position != 1:
        learner_client.get(reverse("exams:question", args=[review.pk, again.position]))

    # Right, with a wrong choice struck out: Good in Learning, so it graduates to days.
    wrong = position_of(again, right=False)
    page = check(learner_client, again, choice=position_of(again, right=True), struck=wrong)
    card.refresh_from_db()
    assert card.state == fsrs.State.Review and card.due - card.last_review >= timedelta(days=1)
    days = round((card.due - card.last_review).total_seconds() / 86400)
    assert f"This question comes back for review in {days} day" in page


def test_a_right_first_answer_says_when_it_comes_back(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
    learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "practice", "count": "2"})
    slot = Attempt.objects.get(user=learner).responses.select_related("question").get(position=1)
    page = check(learner_client, slot, choice=position_of(slot, right=True))
    card = ReviewCard.objects.get(user=learner, question=slot.question)
    scheduler = fsrs.Scheduler(learning_steps=(TEN_MINUTES,), relearning_steps=(TEN_MINUTES,), enable_fuzzing=False)
    expected, _ = scheduler.review_card(fsrs.Card(card_id=1), fsrs.Rating.Good, review_datetime=card.last_review.astimezone(UTC))
    assert (card.due, card.state) == (expected.due, expected.state)
    # One learning step: Good on a new card takes it straight to Review.
    assert card.state == fsrs.State.Review
    assert "This question comes back for review in " in page and " day" in page
