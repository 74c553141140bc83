"""An abandoned practice is not a score: ended with "End it and start this one", it stays out
of the dashboard, the exports, the results, cohort reports and item statistics; only its
checked answers were reviews. A timed practice that ran out is expired, as before."""
import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cohorts.models import Cohort, Membership
from exams.models import Attempt, AttemptMode, AttemptStatus, ExamStatistic, ItemStatistic, ReviewCard
from exams.room.services import attempt_abandon, attempt_check, attempt_start, attempt_submit
from exams.statistics.refresh import item_statistics_refresh
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


@pytest.fixture
def exam():
    return exam_with_bank(weights=(50, 50), per_domain=10, question_count=10)


def builder_post(client, exam, **extra):
    data = {
        "domains": [domain.pk for domain in exam.domains.all()], "count": "5", "source": "all", "mocks": "2",
        "timing": "untimed", "feedback": "each", "start": "1", **extra,
    }
    return client.post(reverse("exams:practice_builder", args=[exam.code]), data)


def half_done_practice(learner, exam) -> Attempt:
    """Five questions: the first checked (right), the second answered but not checked, the rest untouched."""
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=5).attempt
    first, second = practice.responses.get(position=1), practice.responses.get(position=2)
    key = first.question.choices.get(is_correct=True).pk
    practice.record_answer(response=first, choice_ids=[key])
    attempt_check(attempt=practice, response=first)
    practice.record_answer(response=second, choice_ids=[second.choice_order[0]])
    return practice


def test_ending_a_practice_to_start_another_abandons_it_without_a_score(learner_client, learner, exam):
    practice = half_done_practice(learner, exam)
    answer = builder_post(learner_client, exam, abandon=str(practice.pk))
    started = Attempt.objects.get(user=learner, mode=AttemptMode.PRACTICE, status=AttemptStatus.IN_PROGRESS)
    assert answer.status_code == 302 and answer.url == reverse("exams:question", args=[started.pk, 1])
    practice.refresh_from_db()
    assert practice.status == AttemptStatus.ABANDONED and practice.finished_at is not None
    assert (practice.score, practice.right_count, practice.total_count, practice.passed) == (None, None, None, None)
    assert practice.has_ended and not practice.is_finished
    slots = dict(practice.responses.values_list("position", "is_correct"))
    assert slots == {1: True, 2: None, 3: None, 4: None, 5: None}, "only the checked answer keeps a grade"
    # Only the checked answer was a review; the answered-but-unchecked one is not.
    checked = practice.responses.get(position=1).question_id
    assert list(ReviewCard.objects.filter(user=learner).values_list("question_id", flat=True)) == [checked]


def test_an_abandoned_practice_is_absent_from_every_page_and_export(learner_client, learner, exam):
    practice = half_done_practice(learner, exam)
    attempt_abandon(user=learner, attempt_id=practice.pk)
    dashboard = learner_client.get(reverse("exams:dashboard"), {"exam": exam.code}).content.decode()
    assert reverse("exams:results", args=[practice.pk]) not in dashboard
    assert 'class="history"' not in dashboard, "no history table: nothing has finished"
    exported = learner_client.get(reverse("exams:export_csv"))
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows == []
    body = json.loads(learner_client.get(reverse("exams:export_json")).content)
    assert body["attempts"] == []
    results = learner_client.get(reverse("exams:results", args=[practice.pk]), follow=True)
    page = results.content.decode()
    assert results.redirect_chain[-1][0] == reverse("exams:dashboard") + f"?exam={exam.code}"
    assert "ended that practice before submitting it" in page and "0.0%" not in page
    # Its other ways in lead to the same place; nothing about it can change.
    assert learner_client.get(reverse("exams:attempt", args=[practice.pk])).url == reverse("exams:results", args=[practice.pk])
    refused = learner_client.post(reverse("exams:question", args=[practice.pk, 3]), {"choice": "1", "answer": "1"})
    assert refused.status_code == 409
    learner_client.post(reverse("exams:submit", args=[practice.pk]), {"confirmed": "1"})
    practice.refresh_from_db()
    assert practice.status == AttemptStatus.ABANDONED and practice.score is None


def test_a_finished_practice_still_shows_beside_an_abandoned_one(learner_client, learner, exam):
    kept = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=2).attempt
    for slot in kept.responses.all():
        kept.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        attempt_check(attempt=kept, response=slot)
    kept.refresh_from_db()
    assert kept.status == AttemptStatus.SUBMITTED
    dropped = half_done_practice(learner, exam)
    attempt_abandon(user=learner, attempt_id=dropped.pk)
    dashboard = learner_client.get(reverse("exams:dashboard"), {"exam": exam.code}).content.decode()
    assert reverse("exams:results", args=[kept.pk]) in dashboard
    assert reverse("exams:results", args=[dropped.pk]) not in dashboard
    body = json.loads(learner_client.get(reverse("exams:export_json")).content)
    assert [attempt["attempt_id"] for attempt in body["attempts"]] == [kept.pk]


def test_a_timed_practice_that_ran_out_is_expired_not_abandoned(learner, exam):
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=3, minutes=5).attempt
    Attempt.objects.filter(pk=practice.pk).update(deadline=timezone.now() - timedelta(seconds=10))
    ended = attempt_abandon(user=learner, attempt_id=practice.pk)
    assert ended.status == AttemptStatus.EXPIRED and ended.score is not None


def test_abandoning_twice_or_after_the_end_changes_nothing(learner, exam):
    practice = half_done_practice(learner, exam)
    first = attempt_abandon(user=learner, attempt_id=practice.pk)
    again = attempt_abandon(user=learner, attempt_id=practice.pk)
    assert (first.status, first.finished_at) == (again.status, again.finished_at)


def test_its_checked_answers_stay_out_of_cohort_mastery(client, instructor, learner, exam):
    cohort = Cohort.objects.create(owner=instructor, exam=exam, name="Class")
    Membership.objects.create(cohort=cohort, learner=learner)
    attempt_abandon(user=learner, attempt_id=half_done_practice(learner, exam).pk)
    client.force_login(instructor)
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("cohorts:export_csv", args=[cohort.pk])).content.decode())))
    counted = [value for name, value in rows[0].items() if name.endswith(" counted")]
    assert counted == ["0", "0"] and rows[0]["mocks"] == "0"


def test_it_stays_out_of_item_statistics(learner, other_learner, exam):
    mock = attempt_start(user=other_learner, exam=exam, mode=AttemptMode.MOCK).attempt
    attempt_submit(user=other_learner, attempt_id=mock.pk)
    attempt_abandon(user=learner, attempt_id=half_done_practice(learner, exam).pk)
    item_statistics_refresh(exam=exam)
    assert ExamStatistic.objects.get(exam=exam, first_mock_only=False).attempts == 1
    assert set(ItemStatistic.objects.filter(first_mock_only=False).values_list("n", flat=True)) <= {0, 1}
