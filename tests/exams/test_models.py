"""The model's rules hold in the database itself, not only in forms."""
import pytest
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from exams.models import Attempt, AttemptMode, AttemptStatus, Choice, Domain, Erratum, ErratumStatus, Question, Response
from tests.factories import DomainFactory, ExamFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def violates(callable_) -> bool:
    try:
        with transaction.atomic():
            callable_()
    except IntegrityError:
        return True
    return False


def finished_attempt_with(question, user, *, status=AttemptStatus.SUBMITTED) -> Attempt:
    attempt = Attempt.objects.create(user=user, exam=question.exam, status=status, finished_at=timezone.now())
    version = question.current_version()
    Response.objects.create(
        attempt=attempt, position=1, question=question, domain_id=question.domain_id, version=version,
        choice_order=list(question.choices.values_list("pk", flat=True)),
    )
    return attempt


def test_a_domain_weight_outside_0_to_100_is_refused():
    exam = ExamFactory()
    assert violates(lambda: Domain.objects.create(exam=exam, name="Too heavy", weight=101))


def test_choice_labels_are_unique_per_question():
    question = QuestionFactory()
    assert violates(lambda: Choice.objects.create(question=question, label="A", text="again", order=9))


def test_positions_are_unique_per_attempt(learner):
    question, other = QuestionFactory(), QuestionFactory()
    attempt = Attempt.objects.create(user=learner, exam=question.exam)
    Response.objects.create(
        attempt=attempt, position=1, question=question, domain_id=question.domain_id,
        version=question.current_version(), choice_order=[],
    )
    assert violates(
        lambda: Response.objects.create(
            attempt=attempt, position=1, question=other, domain_id=other.domain_id,
            version=other.current_version(), choice_order=[],
        )
    )


def test_one_in_progress_attempt_per_learner_exam_and_mode(learner):
    exam = ExamFactory()
    Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.MOCK)
    assert violates(lambda: Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.MOCK))
    Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.PRACTICE)


def test_a_finished_attempt_needs_its_finish_time(learner):
    exam = ExamFactory()
    assert violates(lambda: Attempt.objects.create(user=learner, exam=exam, status=AttemptStatus.SUBMITTED))


def test_one_open_erratum_per_question():
    question = QuestionFactory()
    Erratum.objects.create(question=question, status=ErratumStatus.REPORTED)
    assert violates(lambda: Erratum.objects.create(question=question, status=ErratumStatus.REPORTED))
    Erratum.objects.create(question=question, status=ErratumStatus.REJECTED)


def test_a_confirmed_erratum_names_its_policy():
    question = QuestionFactory()
    assert violates(lambda: Erratum.objects.create(question=question, status=ErratumStatus.CONFIRMED))


def test_a_single_answer_question_chooses_one():
    domain = DomainFactory()
    assert violates(
        lambda: Question.objects.create(exam=domain.exam, domain=domain, title="t", stem="s", kind="single", choose=2)
    )


def test_questions_and_picked_choices_in_attempts_cannot_be_deleted(learner):
    question = QuestionFactory()
    attempt = finished_attempt_with(question, learner)
    picked = question.choices.first()
    attempt.responses.get().selected.add(picked)
    with pytest.raises(ProtectedError):
        question.delete()
    with pytest.raises(ProtectedError):
        picked.delete()


class TestVersions:
    def test_the_first_draw_makes_version_1_and_unchanged_text_reuses_it(self):
        question = QuestionFactory()
        first = question.current_version()
        assert first.number == 1
        assert question.current_version() == first

    def test_an_edit_before_anyone_saw_the_question_updates_the_version_in_place(self):
        question = QuestionFactory()
        first = question.current_version()
        question.stem = "Reworded before anyone saw it"
        question.save()
        again = question.current_version()
        assert again.pk == first.pk
        assert again.content["stem"] == "Reworded before anyone saw it"

    @pytest.mark.postgres_only  # SQLite has no row locks to count
    def test_only_a_draw_that_must_make_a_version_locks_questions(self, learner):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        question = QuestionFactory()

        def locks_taken() -> int:
            with CaptureQueriesContext(connection) as queries:
                version = question.current_version()
            return version, sum("FOR NO KEY UPDATE" in q["sql"] for q in queries.captured_queries)

        first, locks = locks_taken()
        assert locks == 1  # version 1 is made under the lock
        finished_attempt_with(question, learner)
        again, locks = locks_taken()
        assert (again, locks) == (first, 0)  # shown in an attempt and unchanged: no lock
        question.stem = "Edited after it was shown"
        question.save()
        edited, locks = locks_taken()
        assert (edited.number, locks) == (2, 1)

    def test_an_edit_after_a_finished_attempt_makes_a_new_version_and_the_old_attempt_keeps_its_text(self, learner):
        question = QuestionFactory(stem="Original wording")
        attempt = finished_attempt_with(question, learner)
        question.stem = "Clearer wording"
        question.save()
        choice = question.choices.get(label="B")
        choice.text = "Rewritten choice B"
        choice.save()

        new = question.current_version()
        old = attempt.responses.get().version
        assert new.number == 2
        assert new.content["stem"] == "Clearer wording"
        assert new.choice_text(choice.pk) == "Rewritten choice B"
        assert old.content["stem"] == "Original wording"
        assert old.choice_text(choice.pk) == f"Choice B of {question.title}"
        assert question.is_in_finished_attempt()


@pytest.mark.postgres_only
def test_hot_tables_leave_room_for_in_place_updates():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reloptions FROM pg_class WHERE relname IN ('exams_response', 'exams_attempt')")
        options = dict(cursor.fetchall())
    assert options == {"exams_response": ["fillfactor=90"], "exams_attempt": ["fillfactor=90"]}
