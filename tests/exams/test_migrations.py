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


def test_existing_reports_get_the_slot_they_came_from(django_user_model):
    old = migrate(("exams", "0016_i18a_errata_text_and_slot"))
    try:
        get = lambda name: old.get_model("exams", name)  # noqa: E731
        User = old.get_model("auth", "User")
        exam = get("Exam").objects.create(code="MIG-2", title="Migration", question_count=1, time_limit_minutes=10, passing_score=70)
        domain = get("Domain").objects.create(exam=exam, name="Only", weight=100, order=1)
        question = get("Question").objects.create(exam=exam, domain=domain, title="Q", stem="Stem")
        version = get("QuestionVersion").objects.create(question=question, number=1, content={}, digest="0" * 64)
        erratum = get("Erratum").objects.create(question=question, status="reported")
        reporter, silent = User.objects.create(username="reporter"), User.objects.create(username="silent")
        slots = {}
        for user in (reporter, silent):
            attempt = get("Attempt").objects.create(user=user, exam=exam, status="submitted", finished_at="2026-01-01T00:00Z")
            slots[user.pk] = get("Response").objects.create(
                attempt=attempt, position=1, question=question, version=version, domain=domain, choice_order=[],
            )
        get("Dispute").objects.create(erratum=erratum, learner=reporter, reason="x")
        stranger = User.objects.create(username="stranger")  # reported with no slot to find
        get("Dispute").objects.create(erratum=erratum, learner=stranger, reason="y")

        new = migrate(("exams", "0017_i18a_dispute_slot_fill"))
        filled = dict(new.get_model("exams", "Dispute").objects.values_list("learner__username", "response_id"))
        assert filled == {"reporter": slots[reporter.pk].pk, "stranger": None}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
