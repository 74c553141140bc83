"""The questions a learner met in mocks (the next mock's unseen pool): cached per learner, read again
whenever a mock is drawn or deleted, and always what the draw's own rule reads."""
import pytest

from exams.models import Attempt, AttemptMode, Response
from exams.room.services import attempt_start
from exams.study import ability
from tests.exams.study.test_dashboard import finished_history
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def truth(user, exam) -> list[int]:
    return sorted(set(Response.objects.filter(attempt__user=user, attempt__exam=exam, attempt__mode=AttemptMode.MOCK)
                      .values_list("question_id", flat=True)))


@pytest.mark.postgres_only  # cached on PostgreSQL only, as the bank reference is
def test_warm_is_one_query_and_the_same_set(learner, django_assert_num_queries):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    finished_history(learner, exam, attempts=8, per_attempt=10, seed=2)
    assert truth(learner, exam)
    first = ability.seen_in_mocks(user=learner, exam=exam)
    with django_assert_num_queries(1):
        again = ability.seen_in_mocks(user=learner, exam=exam)
    assert sorted(again.tolist()) == sorted(first.tolist()) == truth(learner, exam)


def test_a_new_mock_and_a_deleted_one_are_read_again(learner, other_learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=30, question_count=10)
    finished_history(learner, exam, attempts=1, per_attempt=10, seed=3)
    before = sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist())
    assert before == truth(learner, exam)

    running = attempt_start(user=learner, exam=exam).attempt  # a new mock: its slots are drawn now
    grown = sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist())
    assert grown == truth(learner, exam) and len(grown) > len(before)

    running.delete()
    assert sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist()) == truth(learner, exam) == before
    # Another learner's mocks are theirs alone.
    attempt_start(user=other_learner, exam=exam)
    assert sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist()) == before
    assert sorted(ability.seen_in_mocks(user=other_learner, exam=exam).tolist()) == truth(other_learner, exam)


def test_practice_does_not_count_as_met_in_a_mock(learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    finished_history(learner, exam, attempts=2, per_attempt=10, seed=5)
    before = sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist())
    attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=5)
    assert sorted(ability.seen_in_mocks(user=learner, exam=exam).tolist()) == before == truth(learner, exam)
    assert Attempt.objects.filter(user=learner, mode=AttemptMode.PRACTICE).exists()
