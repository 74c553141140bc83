"""Review sessions the learner sizes, the dashboard's review card, and "Practise my mistakes now" (issue 26)."""
from datetime import UTC, timedelta

import fsrs
import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, AttemptStatus, Certainty, Response, ReviewCard
from exams.models.study import CardState
from exams.room.services import attempt_start, attempt_submit
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def start(client, exam, **data):
    return client.post(reverse("exams:start_session", args=[exam.code]), {"back": "dashboard"} | data, follow=True)


def review_running(user) -> Attempt | None:
    return Attempt.objects.in_progress().filter(user=user, mode=AttemptMode.REVIEW).first()


def due_cards(user, questions, *, hours_ago: int = 1):
    now = timezone.now()
    return ReviewCard.objects.bulk_create(
        ReviewCard(user=user, question=question, state=CardState.REVIEW, stability=3.0, difficulty=5.0,
                   due=now - timedelta(hours=hours_ago + index), last_review=now - timedelta(days=4))
        for index, question in enumerate(questions)
    )


def finished_practice(user, exam, answers: list[tuple]) -> Attempt:
    """A submitted practice whose slots were answered at the given times, right or wrong."""
    attempt = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, question_ids=[q.pk for q, _, _ in answers]).attempt
    for question, right, answered_at in answers:
        Response.objects.filter(attempt=attempt, question=question).update(answered_at=answered_at, is_correct=right)
    Attempt.objects.filter(pk=attempt.pk).update(status=AttemptStatus.SUBMITTED, finished_at=timezone.now())
    return attempt


class TestSize:
    def test_the_default_is_20_and_most_overdue_come_first(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=30, question_count=10)
        questions = list(exam.questions.order_by("pk"))
        due_cards(learner, questions[:25])
        start(learner_client, exam, mode="review")
        review = review_running(learner)
        taken = list(review.responses.order_by("position").values_list("question_id", flat=True))
        # Card i is i+1 hours overdue: the most overdue (the last made) first.
        assert taken == [q.pk for q in reversed(questions[5:25])]
        assert Profile.objects.get(user=learner).review_session_size == 20

    @pytest.mark.parametrize("size", [10, 50])
    def test_a_chosen_size_is_taken_and_remembered(self, learner_client, learner, size):
        exam = exam_with_bank(weights=(100,), per_domain=60, question_count=10)
        due_cards(learner, list(exam.questions.all()))
        page = start(learner_client, exam, mode="review", size=str(size)).content.decode()
        assert review_running(learner).responses.count() == size
        assert Profile.objects.get(user=learner).review_session_size == size
        if size == 10:
            assert "This review takes 10 of the 60 questions due" in page
        # The dashboard offers the remembered size first.
        attempt_submit(user=learner, attempt_id=review_running(learner).pk)
        dashboard = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert f'<option value="{size}" selected>' in dashboard

    @pytest.mark.parametrize("size", ["7", "0", "200", "twenty", "20.0"])
    def test_any_other_size_is_refused_and_nothing_starts(self, learner_client, learner, size):
        exam = exam_with_bank(weights=(100,), per_domain=30, question_count=10)
        due_cards(learner, list(exam.questions.all()))
        Profile.objects.filter(user=learner).update(review_session_size=50)
        page = start(learner_client, exam, mode="review", size=size).content.decode()
        assert "A review session takes 10, 20 or 50 questions" in page
        assert not Attempt.objects.exists()
        assert Profile.objects.get(user=learner).review_session_size == 50

    def test_a_form_without_a_size_takes_the_remembered_one(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=30, question_count=10)
        due_cards(learner, list(exam.questions.all()))
        Profile.objects.filter(user=learner).update(review_session_size=10)
        start(learner_client, exam, mode="review")
        assert review_running(learner).responses.count() == 10

    def test_sure_and_wrong_come_first(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=6, question_count=6)
        questions = list(exam.questions.order_by("pk"))
        long_ago = timezone.now() - timedelta(days=20)
        finished_practice(learner, exam, [(q, False, long_ago) for q in questions[:4]])
        # The least overdue of the four was answered wrong while sure.
        Response.objects.filter(question=questions[0]).update(certainty=Certainty.SURE)
        Response.objects.filter(question=questions[1]).update(certainty=Certainty.FAIR)
        due_cards(learner, questions[:4])
        start(learner_client, exam, mode="review")
        taken = list(review_running(learner).responses.order_by("position").values_list("question_id", flat=True))
        assert taken == [questions[0].pk, questions[3].pk, questions[2].pk, questions[1].pk]


class TestDashboard:
    def test_the_review_card_says_what_is_due_now_and_next(self, learner_client, learner):
        exam = exam_with_bank()
        first, second, third = exam.questions.order_by("pk")[:3]
        now = timezone.now()
        ReviewCard.objects.create(user=learner, question=first, due=now - timedelta(hours=1))
        ReviewCard.objects.create(user=learner, question=second, due=now - timedelta(hours=2))
        later = ReviewCard.objects.create(user=learner, question=third, due=now + timedelta(minutes=10))
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert f"2 due now.</strong> Next review: {later.due.astimezone(UTC):%-d %b, %H:%M}." in page
        assert "Review due (2)" in page and "Practise my mistakes now" not in page

    def test_mistakes_are_offered_only_when_nothing_is_due_and_there_is_something(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=6, question_count=6)
        questions = list(exam.questions.order_by("pk"))
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert "Practise my mistakes now" not in page  # nothing to offer
        now = timezone.now()
        ReviewCard.objects.create(user=learner, question=questions[0], state=CardState.LEARNING, step=0,
                                  stability=0.2, difficulty=7.0, due=now + timedelta(minutes=8), last_review=now)
        finished_practice(learner, exam, [(questions[1], False, now - timedelta(days=2))])
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert "Nothing due now." in page and "Practise my mistakes now" in page and "2 questions to offer" in page
        ReviewCard.objects.create(user=learner, question=questions[2], due=now - timedelta(minutes=1))
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert "Review due (1)" in page and "Practise my mistakes now" not in page


class TestMistakes:
    def test_learning_cards_then_recent_wrong_answers_newest_first(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=8, question_count=8)
        q = list(exam.questions.order_by("pk"))
        now = timezone.now()
        for question, state, minutes in ((q[0], CardState.RELEARNING, 9), (q[1], CardState.LEARNING, 3)):
            ReviewCard.objects.create(user=learner, question=question, state=state, step=0, stability=0.5, difficulty=6.0,
                                      due=now + timedelta(minutes=minutes), last_review=now - timedelta(minutes=10 - minutes))
        # In Review again (graduated) but answered wrong 3 days ago; and one 8 days ago (too old).
        finished_practice(learner, exam, [
            (q[2], False, now - timedelta(days=3)), (q[3], False, now - timedelta(hours=5)),
            (q[4], True, now - timedelta(hours=1)), (q[5], False, now - timedelta(days=8)),
            (q[1], False, now - timedelta(minutes=7)),
        ])
        page = start(learner_client, exam, mode="mistakes").content.decode()
        review = review_running(learner)
        taken = list(review.responses.order_by("position").values_list("question_id", flat=True))
        assert taken == [q[1].pk, q[0].pk, q[3].pk, q[2].pk]
        assert "Your mistakes, 4 questions" in page

    def test_it_is_sized_like_a_review(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=30, question_count=10)
        now = timezone.now()
        finished_practice(learner, exam, [(question, False, now - timedelta(hours=1)) for question in exam.questions.all()])
        start(learner_client, exam, mode="mistakes", size="10")
        assert review_running(learner).responses.count() == 10
        assert Profile.objects.get(user=learner).review_session_size == 10

    def test_refused_when_something_is_due_or_nothing_to_offer(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
        page = start(learner_client, exam, mode="mistakes").content.decode()
        assert "You have no mistakes to practise" in page and not Attempt.objects.exists()
        questions = list(exam.questions.order_by("pk"))
        finished_practice(learner, exam, [(questions[0], False, timezone.now())])
        due_cards(learner, questions[1:2])
        page = start(learner_client, exam, mode="mistakes").content.decode()
        assert "You have 1 question due for review: review those first." in page
        assert review_running(learner) is None
        assert start(learner_client, exam, mode="mistakes", size="30").status_code == 200
        assert review_running(learner) is None

    def test_its_answers_are_reviews(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
        question = exam.questions.order_by("pk").first()
        now = timezone.now()
        learning = ReviewCard.objects.create(user=learner, question=question, state=CardState.LEARNING, step=0,
                                             stability=0.4, difficulty=7.0, due=now + timedelta(minutes=6),
                                             last_review=now - timedelta(minutes=4))
        start(learner_client, exam, mode="mistakes")
        slot = review_running(learner).responses.select_related("question").get()
        keys = set(question.choices.filter(is_correct=True).values_list("pk", flat=True))
        right = next(i for i, pk in enumerate(slot.choice_order, start=1) if pk in keys)
        learner_client.post(reverse("exams:question", args=[slot.attempt_id, 1]), {"choice": [str(right)], "answer": "1", "check": "1"})
        learning.refresh_from_db()
        slot.refresh_from_db()
        # Right in Learning: Good, which graduates the card to days.
        expected, _ = fsrs.Scheduler(
            learning_steps=(timedelta(minutes=10),), relearning_steps=(timedelta(minutes=10),), enable_fuzzing=False,
        ).review_card(
            fsrs.Card(card_id=1, state=fsrs.State.Learning, step=0, stability=0.4, difficulty=7.0,
                      due=now + timedelta(minutes=6), last_review=now - timedelta(minutes=4)),
            fsrs.Rating.Good, review_datetime=slot.checked_at,
        )
        assert (learning.state, learning.due, learning.last_review) == (CardState.REVIEW, expected.due, slot.checked_at)

    def test_only_the_learners_own_mistakes_of_this_exam_are_taken(self, learner, other_learner):
        exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
        other = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
        finished_practice(learner, exam, [(question, False, timezone.now()) for question in exam.questions.all()])
        # The other learner's mistakes are theirs.
        finished_practice(other_learner, other, [(question, False, timezone.now()) for question in other.questions.all()])
        started = attempt_start(user=learner, exam=exam, mode=AttemptMode.REVIEW, mistakes=True, count=10)
        assert set(started.attempt.responses.values_list("question__exam", flat=True)) == {exam.pk}
