"""The key rule everywhere: while a learner's timed mock runs, no page or download of theirs
shows the key, feedback, explanation, topic or verdict of that mock's questions, and no draw
takes them (exams.room.access.running_mock_question_ids)."""
import csv
import io
import json

import pytest
from django.db.models import F
from django.urls import reverse

from exams.models import Attempt, AttemptMode, Question, ReviewCard
from exams.room import services
from exams.room.access import in_running_mock, running_mock_question_ids
from exams.room.services import attempt_start, attempt_submit
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
SECRETS = ("Because the key is right.", "Feedback on A.", "key-tag", "Secret topic")


def small_exam():
    """Ten questions, all drawn by every mock, each with a topic."""
    exam = exam_with_bank(weights=(100,), per_domain=10, question_count=10)
    Question.objects.filter(exam=exam).update(topic="Secret topic")
    return exam


def finished(user, exam, mode=AttemptMode.MOCK) -> Attempt:
    attempt = attempt_start(user=user, exam=exam, mode=mode, count=10).attempt
    for slot in attempt.responses.select_related("question"):
        attempt.record_answer(response=slot, choice_ids=[slot.question.choices.get(label="A").pk])
    attempt_submit(user=user, attempt_id=attempt.pk)
    return attempt


def test_the_helper_names_the_running_mocks_questions_only(learner, other_learner):
    exam = small_exam()
    assert not running_mock_question_ids(learner).exists()
    mock = attempt_start(user=learner, exam=exam).attempt
    drawn = set(mock.responses.values_list("question_id", flat=True))
    assert set(running_mock_question_ids(learner)) == drawn
    assert not running_mock_question_ids(other_learner).exists()
    assert in_running_mock(learner, next(iter(drawn)))
    # Past its deadline and grace a mock can no longer change: the rule lets go.
    Attempt.objects.filter(pk=mock.pk).update(deadline=F("started_at") - Attempt.GRACE * 2)
    assert not running_mock_question_ids(learner).exists()


def test_earlier_results_hide_shared_questions_until_the_mock_ends(learner_client, learner):
    exam = small_exam()
    earlier = finished(learner, exam)
    url = reverse("exams:results", args=[earlier.pk])
    assert all(secret in learner_client.get(url).content.decode() for secret in SECRETS)
    mock = attempt_start(user=learner, exam=exam).attempt
    for query in ("", "?show=wrong", "?show=flagged"):
        page = learner_client.get(url + query).content.decode()
        assert not any(secret in page for secret in SECRETS), query
    page = learner_client.get(url).content.decode()
    assert "held back while your mock runs" in page and ">right<" not in page
    # "Wrong" lists the held questions whatever their grade (all were right here).
    assert learner_client.get(url + "?show=wrong").content.decode().count("held back while your mock runs") == 10
    attempt_submit(user=learner, attempt_id=mock.pk)
    assert all(secret in learner_client.get(url).content.decode() for secret in SECRETS)


def test_a_checked_practice_answer_is_hidden_while_a_mock_holds_the_question(learner_client, learner):
    exam = small_exam()
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=10).attempt
    url = reverse("exams:question", args=[practice.pk, 1])
    response = learner_client.post(url, {"choice": "1", "check": "1"}, headers=HTMX)
    assert "Because the key is right." in response.content.decode()
    mock = attempt_start(user=learner, exam=exam).attempt
    page = learner_client.get(url).content.decode()
    assert not any(secret in page for secret in SECRETS)
    assert "also in your timed mock" in page
    attempt_submit(user=learner, attempt_id=mock.pk)
    assert "Because the key is right." in learner_client.get(url).content.decode()


def test_the_history_downloads_leave_out_the_verdict_of_held_questions(learner_client, learner):
    exam = small_exam()
    finished(learner, exam)

    def correct_column() -> list[str]:
        rows = list(csv.DictReader(io.StringIO(b"".join(learner_client.get(reverse("exams:export_csv")).streaming_content).decode())))
        return [row["correct"] for row in rows]

    def json_verdicts() -> list:
        body = json.loads(learner_client.get(reverse("exams:export_json")).content)
        return [response["correct"] for attempt in body["attempts"] for response in attempt["responses"]]

    assert set(correct_column()) == {"True"} and set(json_verdicts()) == {True}
    mock = attempt_start(user=learner, exam=exam).attempt
    assert set(correct_column()) == {""} and set(json_verdicts()) == {None}
    attempt_submit(user=learner, attempt_id=mock.pk)
    assert "True" in correct_column()


def test_no_draw_takes_a_running_mocks_questions(learner):
    exam = exam_with_bank(weights=(100,), per_domain=20, question_count=10)
    mock = attempt_start(user=learner, exam=exam).attempt
    in_mock = set(mock.responses.values_list("question_id", flat=True))
    rng = services.random.Random(1)
    drawn = services._session_questions(user=learner, exam=exam, domain=None, count=20, rng=rng)
    assert len(drawn) == 10 and not set(drawn) & in_mock
    for question in Question.objects.filter(exam=exam):
        ReviewCard.objects.create(user=learner, question=question, due="2000-01-01T00:00Z")
    due = services._due_questions(user=learner, exam=exam, size=20)
    assert len(due) == 10 and not set(due) & in_mock
    # "Practise my mistakes now" (issue 26): cards on a learning step, none of the mock's.
    ReviewCard.objects.update(state=1, step=0, due="2999-01-01T00:00Z")
    mistakes = services._mistake_questions(user=learner, exam=exam, size=20)
    assert len(mistakes) == 10 and not set(mistakes) & in_mock
