"""Migrations that move data, run for real from the state before them."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def test_existing_responses_keep_the_domain_their_question_had(django_user_model):
    old = migrate(("exams", "0008_fillfactor"))
    try:
        Exam, Domain, Question = (old.get_model("exams", name) for name in ("Exam", "Domain", "Question"))
        QuestionVersion, Attempt, Response = (old.get_model("exams", name) for name in ("QuestionVersion", "Attempt", "Response"))
        User = old.get_model("auth", "User")
        exam = Exam.objects.create(code="MIG-1", title="Migration", question_count=2, time_limit_minutes=10, passing_score=70)
        first = Domain.objects.create(exam=exam, name="First", weight=50, order=1)
        second = Domain.objects.create(exam=exam, name="Second", weight=50, order=2)
        user = User.objects.create(username="migrated")
        attempt = Attempt.objects.create(user=user, exam=exam)
        for position, domain in enumerate((first, second), start=1):
            question = Question.objects.create(exam=exam, domain=domain, title=f"Q{position}", stem="Stem")
            version = QuestionVersion.objects.create(question=question, number=1, content={}, digest=f"{position:064d}")
            Response.objects.create(attempt=attempt, position=position, question=question, version=version, choice_order=[])

        between = migrate(("exams", "0009_response_domain"))
        # A draw by the old code, still running between the two migrations: no domain.
        late = between.get_model("exams", "Attempt").objects.create(user_id=user.pk, exam_id=exam.pk, mode="practice")
        between.get_model("exams", "Response").objects.create(
            attempt_id=late.pk, position=1, question_id=question.pk, version_id=version.pk, choice_order=[],
        )

        new = migrate(("exams", "0010_response_domain_required"))
        rows = new.get_model("exams", "Response").objects.order_by("attempt_id", "position").values_list("domain_id", flat=True)
        assert list(rows) == [first.pk, second.pk, second.pk]
    finally:
        migrate(("exams", "0010_response_domain_required"))
