"""The dashboard's bank reference: cached per process, read again whenever what it was read from changes."""
import numpy as np
import pytest
from django.db import connection, transaction

from exams.models import Difficulty, QuestionStatus
from exams.statistics import calibration
from exams.statistics.refresh import item_statistics_refresh
from exams.study import ability
from tests.exams.study.test_dashboard import finished_history
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db


def as_read(reference: ability.BankReference) -> tuple:
    return (reference.question_id.tolist(), reference.difficulty.tolist(), reference.domain.tolist(),
            reference.ready.tolist(), reference.ability_mean, reference.ability_sd, reference.calibrated,
            reference.slope_mean, reference.slope_sd)


@pytest.mark.postgres_only  # the cache's version is PostgreSQL's; elsewhere every read is fresh
def test_a_warm_bank_reference_is_one_query_and_the_same_read(django_assert_num_queries):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    first = ability.bank_reference(exam)
    with django_assert_num_queries(1):
        again = ability.bank_reference(exam)
    assert as_read(again) == as_read(first) == as_read(ability._read_bank_reference(exam))
    assert len(first.question_id) == 20 and first.ready.all()


def edit_level(exam):
    question = exam.questions.order_by("pk").first()
    question.difficulty = Difficulty.HARD if question.difficulty != Difficulty.HARD else Difficulty.EASY
    question.save(update_fields=["difficulty"])


def edit_retire(exam):
    exam.questions.filter(pk=exam.questions.order_by("pk").first().pk).update(is_active=False)


def edit_draft(exam):
    exam.questions.filter(pk=exam.questions.order_by("pk").last().pk).update(status=QuestionStatus.DRAFT)


def edit_move(exam):
    first, last = exam.domains.order_by("order")
    exam.questions.filter(pk=exam.questions.filter(domain=first).order_by("pk").first().pk).update(domain=last)


def edit_add(exam):
    QuestionFactory(domain=exam.domains.first(), exam=exam)


def edit_delete(exam):
    question = exam.questions.order_by("pk").last()
    question.choices.all().delete()
    question.delete()


def edit_raw(exam):
    # Any writer, not only the ORM: the version is bumped by the database itself.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE exams_question SET is_active = false WHERE id = %s", [exam.questions.order_by("pk").first().pk])


def edit_refresh(exam):
    item_statistics_refresh(exam=exam)


@pytest.mark.parametrize("edit", [edit_level, edit_retire, edit_draft, edit_move, edit_add, edit_delete, edit_raw, edit_refresh])
def test_the_reference_is_read_again_after_every_edit_it_depends_on(edit, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    if edit is edit_refresh:
        finished_history(learner, exam, attempts=6, per_attempt=10, answered_share=1.0, seed=4)
    before = as_read(ability.bank_reference(exam))
    edit(exam)
    after = ability.bank_reference(exam)
    assert as_read(after) == as_read(ability._read_bank_reference(exam))
    assert as_read(after) != before


@pytest.mark.postgres_only  # the bank version is PostgreSQL's
def test_an_edit_the_caches_do_not_read_keeps_the_version_and_a_rolled_back_one_is_never_reused():
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    before = calibration.stored_version(exam)
    exam.questions.update(explanation="Reworded.", stem="Reworded stem?")  # text only: no cache reads it
    assert calibration.stored_version(exam) == before
    with pytest.raises(RuntimeError), transaction.atomic():
        exam.questions.update(is_active=False)
        inside = calibration.stored_version(exam)
        assert inside != before
        raise RuntimeError("rolled back")
    assert calibration.stored_version(exam) == before
    exam.questions.filter(pk=exam.questions.order_by("pk").first().pk).update(is_active=False)
    # A sequence gives the version: the rolled-back value (which a request inside that
    # transaction may have cached under) is never given to other data.
    assert calibration.stored_version(exam) not in (before, inside)


def test_difficulties_are_looked_up_by_question_and_pools_by_domain():
    reference = ability.BankReference.of(difficulty={7: 0.5, 3: -1.0, 9: 2.0}, domain={3: 1, 9: 2},
                                         ability_mean=0.0, ability_sd=1.0, calibrated=True)
    assert reference.difficulty_of([9, 7, 3, 4, 100]).tolist() == [2.0, 0.5, -1.0, 0.0, 0.0]
    ids, difficulty = reference.pool(1)
    assert ids.tolist() == [3] and np.allclose(difficulty, [-1.0])
    assert reference.pool(5)[0].tolist() == []
