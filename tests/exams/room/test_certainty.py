"""How sure the learner was (issue 26): saved with the pick, in practice always and in mocks when
asked, locked once checked or ended, any other value refused; shown in results and as calibration."""
from datetime import timedelta

import fsrs
import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, AttemptStatus, Certainty, Response, ReviewCard
from exams.room import saving
from exams.room.services import attempt_start, attempt_submit
from tests.exams.room.test_saving import SESSION_OR_USER
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def url(attempt, position=1) -> str:
    return reverse("exams:question", args=[attempt.pk, position])


def practice(user, *, count=2) -> Attempt:
    exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
    return attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=count).attempt


def slot(attempt, position=1) -> Response:
    return attempt.responses.select_related("question").get(position=position)


def key_position(response: Response, *, right: bool = True) -> str:
    keys = set(response.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return str(next(i for i, pk in enumerate(response.choice_order, start=1) if (pk in keys) == right))


def picked(response: Response) -> list[int]:
    return sorted(response.picks.values_list("choice_id", flat=True))


class TestSaving:
    @pytest.mark.postgres_only  # the one-statement save is PostgreSQL's (exams/room/saving.py); SQLite takes the ORM path
    def test_the_pages_save_stores_it_with_the_pick_in_one_statement(self, learner_client, learner):
        attempt = practice(learner)
        learner_client.post(url(attempt), {"answer": "1", "choice": ["1"]}, headers=HTMX)
        counts = []
        for data in ({"answer": "1", "choice": ["2"]}, {"answer": "1", "choice": ["3"], "certainty": "fair"}):
            with CaptureQueriesContext(connection) as queries:
                reply = learner_client.post(url(attempt), data, headers=HTMX)
            assert reply.status_code == 200 and reply["X-Answer-Saved"] == "1"
            counts.append(len([q for q in queries.captured_queries if not SESSION_OR_USER.search(q["sql"])
                               and "SAVEPOINT" not in q["sql"]]))
        assert counts == [1, 1]  # a field, not a query
        assert slot(attempt).certainty == Certainty.FAIR
        # Changed alone, and kept by a save that does not send it.
        learner_client.post(url(attempt), {"answer": "1", "choice": ["3"], "certainty": "sure"}, headers=HTMX)
        learner_client.post(url(attempt), {"answer": "1", "choice": ["2"]}, headers=HTMX)
        assert slot(attempt).certainty == Certainty.SURE and len(picked(slot(attempt))) == 1

    def test_without_javascript_the_form_saves_it_with_next(self, learner_client, learner):
        attempt = practice(learner)
        reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "guess", "go": "next"})
        assert reply.status_code == 302 and reply["Location"] == url(attempt, 2)
        assert slot(attempt).certainty == Certainty.GUESS and picked(slot(attempt))
        # Only the certainty, through Save (the form's default button): saved too.
        learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "sure", "go": "stay"})
        assert slot(attempt).certainty == Certainty.SURE

    @pytest.mark.parametrize("value", ["very", "SURE", "1", "guessing"])
    def test_any_other_value_is_refused_and_nothing_changes(self, learner_client, learner, value):
        attempt = practice(learner)
        learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "fair"}, headers=HTMX)
        before = picked(slot(attempt))
        for headers in (HTMX, {}):
            reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["2"], "certainty": value}, headers=headers)
            assert reply.status_code == 400 and "Nothing was changed" in reply.content.decode()
        assert slot(attempt).certainty == Certainty.FAIR and picked(slot(attempt)) == before
        assert saving.plain_save(QueryDict(f"choice=1&certainty={value}")) is None
        assert saving.plain_save(QueryDict("choice=1&certainty=sure&certainty=fair")) is None

    def test_it_cannot_change_after_check_answer(self, learner_client, learner):
        attempt = practice(learner)
        first = slot(attempt)
        right = key_position(first)
        reply = learner_client.post(url(attempt), {"answer": "1", "choice": [right], "certainty": "guess", "check": "1"}, headers=HTMX)
        assert reply.status_code == 200
        assert slot(attempt).certainty == Certainty.GUESS and slot(attempt).checked_at is not None
        for headers in (HTMX, {}):
            reply = learner_client.post(url(attempt), {"answer": "1", "choice": [right], "certainty": "sure"}, headers=headers)
            assert reply.status_code == 422
            assert "how sure you were can no longer change" in reply.content.decode()
        assert slot(attempt).certainty == Certainty.GUESS
        # The same value again (a retried request) is no change.
        assert learner_client.post(url(attempt), {"answer": "1", "choice": [right], "certainty": "guess"}, headers=HTMX).status_code == 200
        # The page shows it, locked.
        page = learner_client.get(url(attempt)).content.decode()
        assert 'name="certainty" value="guess" checked disabled' in page and "How sure: <strong" in page

    def test_it_cannot_change_after_the_attempt_ends(self, learner_client, learner):
        attempt = practice(learner)
        learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "fair"}, headers=HTMX)
        attempt_submit(user=learner, attempt_id=attempt.pk)
        for headers in (HTMX, {}):
            reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "sure"}, headers=headers)
            assert reply.status_code == 409
        assert slot(attempt).certainty == Certainty.FAIR

    def test_it_is_the_learners_own(self, learner_client, other_learner):
        attempt = practice(other_learner)
        reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "sure"}, headers=HTMX)
        assert reply.status_code == 404 and slot(attempt).certainty is None


class TestMocks:
    def test_a_mock_asks_only_when_the_profile_says_so(self, learner_client, learner):
        exam = exam_with_bank()
        learner_client.post(reverse("exams:start_mock", args=[exam.code]))
        mock = Attempt.objects.get(user=learner, mode=AttemptMode.MOCK)
        page = learner_client.get(url(mock)).content.decode()
        assert "How sure are you?" not in page
        for headers in (HTMX, {}):
            reply = learner_client.post(url(mock), {"answer": "1", "choice": ["1"], "certainty": "sure"}, headers=headers)
            assert reply.status_code == 422 and "This mock does not ask how sure you are" in reply.content.decode()
        assert slot(mock).certainty is None and not picked(slot(mock))  # nothing changes, the pick neither

        learner_client.post(reverse("accounts:profile"), {
            "email": learner.email, "time_zone": "UTC", "shortcuts_enabled": "on", "ask_certainty_in_mocks": "on",
            "desired_retention": "0.90", "exam_date": "",
        })
        assert Profile.objects.get(user=learner).ask_certainty_in_mocks
        page = learner_client.get(url(mock)).content.decode()
        assert "How sure are you?" in page
        assert learner_client.post(url(mock), {"answer": "1", "choice": ["1"], "certainty": "sure"}, headers=HTMX).status_code == 200
        assert slot(mock).certainty == Certainty.SURE

    def test_practice_always_asks_and_the_profile_page_offers_the_mock_setting(self, learner_client, learner):
        attempt = practice(learner)
        page = learner_client.get(url(attempt)).content.decode()
        assert "<legend>How sure are you?</legend>" in page
        for value, label in Certainty.choices:
            assert f'name="certainty" value="{value}"> {label}</label>' in page
        profile = learner_client.get(reverse("accounts:profile")).content.decode()
        assert 'name="ask_certainty_in_mocks"' in profile and "Ask how sure I am in mocks" in profile
        assert not Profile.objects.get(user=learner).ask_certainty_in_mocks


class TestShown:
    def test_results_show_it_per_question(self, learner_client, learner):
        attempt = practice(learner)
        learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "certainty": "fair"}, headers=HTMX)
        attempt_submit(user=learner, attempt_id=attempt.pk)
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert page.count('How sure: <strong class="certainty-said">') == 1 and "fairly sure" in page

    def test_calibration_shows_after_20_sure_answers(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=30, question_count=10)
        now = timezone.now()
        attempt = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=25).attempt
        slots = list(attempt.responses.order_by("position"))
        for index, response in enumerate(slots[:19]):
            Response.objects.filter(pk=response.pk).update(answered_at=now, certainty="sure", is_correct=index < 17)
        Response.objects.filter(pk=slots[19].pk).update(answered_at=now, certainty="fair", is_correct=False)
        Attempt.objects.filter(pk=attempt.pk).update(status=AttemptStatus.SUBMITTED, finished_at=now)
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert "When you were sure you were right" not in page and "(19 so far)" in page
        Response.objects.filter(pk=slots[20].pk).update(answered_at=now, certainty="sure", is_correct=True)
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        assert "When you were sure you were right <strong>90%</strong> of the time (18 of 20 answers" in page
        # An abandoned practice's answers never count.
        Attempt.objects.filter(pk=attempt.pk).update(status=AttemptStatus.ABANDONED)
        assert "When you were sure" not in learner_client.get(reverse("exams:dashboard")).content.decode()

    def test_a_right_guess_is_hard_in_review_and_sure_and_wrong_is_again(self, learner_client, learner):
        attempt = practice(learner)
        first = slot(attempt)
        now = timezone.now()
        ReviewCard.objects.create(user=learner, question=first.question, state=2, stability=5.0, difficulty=5.0,
                                  due=now - timedelta(days=1), last_review=now - timedelta(days=6))
        learner_client.post(url(attempt), {"answer": "1", "choice": [key_position(first)], "certainty": "guess", "check": "1"},
                            headers=HTMX)
        first.refresh_from_db()
        card = ReviewCard.objects.get(user=learner, question=first.question)
        scheduler = fsrs.Scheduler(learning_steps=(timedelta(minutes=10),), relearning_steps=(timedelta(minutes=10),),
                                   enable_fuzzing=False)
        expected, _ = scheduler.review_card(
            fsrs.Card(card_id=1, state=fsrs.State.Review, stability=5.0, difficulty=5.0, due=now - timedelta(days=1),
                      last_review=now - timedelta(days=6)), fsrs.Rating.Hard, review_datetime=first.checked_at)
        assert card.due == expected.due and card.stability == pytest.approx(expected.stability)
