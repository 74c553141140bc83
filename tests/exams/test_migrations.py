"""Migrations that move data, run for real from the state before them."""
import io

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def migrate_to_latest():
    """Back to the current schema, so the tests after this one run on it."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


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
        migrate_to_latest()


def test_every_leitner_item_becomes_a_review_card(learner, other_learner):
    """On a copy of the demo history: the demo learner's mistakes in Leitner boxes, moved to FSRS."""
    from datetime import UTC, datetime, time, timedelta
    from zoneinfo import ZoneInfo

    from django.core.management import call_command

    call_command("load_bank", verbosity=0)
    call_command("create_demo_history", username="learner", stdout=io.StringIO())
    cards_before = learner.review_cards.count()
    assert cards_before
    old = migrate(("exams", "0017_i15a_review_cards"))
    try:
        ReviewItem, ReviewCard, Response = (old.get_model("exams", name) for name in ("ReviewItem", "ReviewCard", "Response"))
        Profile = old.get_model("accounts", "Profile")
        # Going back turned every card into a box; start from boxes as the Leitner code left them.
        assert ReviewItem.objects.count() == cards_before
        ReviewItem.objects.all().delete()
        ReviewCard.objects.all().delete()
        Profile.objects.update_or_create(user_id=learner.pk, defaults={"time_zone": "Pacific/Kiritimati"})
        Profile.objects.filter(user_id=other_learner.pk).delete()  # no profile: UTC
        wrong = (
            Response.objects.filter(attempt__user_id=learner.pk, is_correct=False, answered_at__isnull=False)
            .order_by("question_id", "-answered_at")
        )
        interval = {1: 0, 2: 1, 3: 3, 4: 7, 5: 16}
        items = {}
        for response in wrong:
            if response.question_id in items:
                continue
            box = 1 + response.question_id % 5
            local = response.answered_at.astimezone(ZoneInfo("Pacific/Kiritimati")).date()
            items[response.question_id] = ReviewItem(
                user_id=learner.pk, question_id=response.question_id, box=box,
                due_on=local + timedelta(days=interval[box]), updated_at=response.answered_at,
            )
        some = list(items)[:3]
        stamp = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
        extra = [ReviewItem(user_id=other_learner.pk, question_id=pk, box=5, due_on=stamp.date(), updated_at=stamp) for pk in some]
        ReviewItem.objects.bulk_create([*items.values(), *extra])
        leitner = list(ReviewItem.objects.values_list("user_id", "question_id", "box", "due_on", "updated_at"))
        assert len(leitner) > 20 and {box for _, _, box, _, _ in leitner} == {1, 2, 3, 4, 5}

        new = migrate(("exams", "0018_i15a_leitner_to_fsrs"))
        cards = {
            (card.user_id, card.question_id): card for card in new.get_model("exams", "ReviewCard").objects.all()
        }
        assert len(cards) == len(leitner)  # none lost, none made up
        zones = {learner.pk: "Pacific/Kiritimati", other_learner.pk: "UTC"}
        for user_id, question_id, box, due_on, updated_at in leitner:
            card = cards[user_id, question_id]
            assert (card.state, card.step, card.difficulty) == (2, None, 5.0)
            assert card.stability == max(1, interval[box])
            assert card.last_review == updated_at
            assert card.due == datetime.combine(due_on, time.min, tzinfo=ZoneInfo(zones[user_id]))
    finally:
        migrate_to_latest()


def test_existing_reports_get_the_slot_they_came_from(django_user_model):
    old = migrate(("exams", "0019_i18a_errata_text_and_slot"))
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

        new = migrate(("exams", "0020_i18a_dispute_slot_fill"))
        filled = dict(new.get_model("exams", "Dispute").objects.values_list("learner__username", "response_id"))
        assert filled == {"reporter": slots[reporter.pk].pk, "stranger": None}
    finally:
        migrate_to_latest()


def test_past_practices_submitted_with_nothing_answered_become_abandoned(django_user_model):
    old = migrate(("exams", "0021_question_difficulty_reviewed_on"))
    try:
        get = lambda name: old.get_model("exams", name)  # noqa: E731
        user = old.get_model("auth", "User").objects.create(username="quitter")
        exam = get("Exam").objects.create(code="MIG-3", title="Migration", question_count=2, time_limit_minutes=10, passing_score=70)
        domain = get("Domain").objects.create(exam=exam, name="Only", weight=100, order=1)
        questions = [get("Question").objects.create(exam=exam, domain=domain, title=f"Q{n}", stem="Stem") for n in (1, 2)]
        versions = [
            get("QuestionVersion").objects.create(question=q, number=1, content={}, digest=f"{q.pk:064d}") for q in questions
        ]

        def attempt(mode, status, *, answered: bool):
            made = get("Attempt").objects.create(
                user=user, exam=exam, mode=mode, status=status, finished_at="2026-01-01T00:00Z",
                score=50 if answered else 0, published_score=50 if answered else 0, right_count=1 if answered else 0,
                total_count=2, passed=False,
            )
            for position, (question, version) in enumerate(zip(questions, versions, strict=True), start=1):
                get("Response").objects.create(
                    attempt=made, position=position, question=question, version=version, domain=domain, choice_order=[],
                    is_correct=answered and position == 1,
                    answered_at="2026-01-01T00:00Z" if answered else None,
                )
            return made.pk

        empty = attempt("practice", "submitted", answered=False)
        kept = attempt("practice", "submitted", answered=True)
        ran_out = attempt("practice", "expired", answered=False)
        empty_mock = attempt("mock", "submitted", answered=False)

        new = migrate(("exams", "0022_i26_abandoned_practice"))
        Attempt, Response = new.get_model("exams", "Attempt"), new.get_model("exams", "Response")
        rows = {row["pk"]: row for row in Attempt.objects.values("pk", "status", "score", "right_count", "total_count")}
        assert rows[empty] == {"pk": empty, "status": "abandoned", "score": None, "right_count": None, "total_count": None}
        assert [rows[pk]["status"] for pk in (kept, ran_out, empty_mock)] == ["submitted", "expired", "submitted"]
        assert rows[kept]["score"] == 50
        assert set(Response.objects.filter(attempt_id=empty).values_list("is_correct", flat=True)) == {None}
        assert set(Response.objects.filter(attempt_id=empty_mock).values_list("is_correct", flat=True)) == {False}

        back = migrate(("exams", "0021_question_difficulty_reviewed_on"))
        restored = back.get_model("exams", "Attempt").objects.get(pk=empty)
        assert (restored.status, restored.score, restored.right_count, restored.total_count) == ("submitted", 0, 0, 2)
    finally:
        migrate_to_latest()


@pytest.mark.postgres_only  # its raw INSERT uses PostgreSQL's now() and RETURNING
def test_every_question_there_before_status_is_ready_and_new_ones_are_drafts():
    old = migrate(("exams", "0022_i26_abandoned_practice"))
    try:
        Exam, Domain, Question = (old.get_model("exams", name) for name in ("Exam", "Domain", "Question"))
        exam = Exam.objects.create(code="MIG-27", title="Status", question_count=1, time_limit_minutes=10, passing_score=70)
        domain = Domain.objects.create(exam=exam, name="Only", weight=100, order=1)
        existing = Question.objects.create(exam=exam, domain=domain, title="Old", stem="Stem")

        new = migrate(("exams", "0025_i27_question_status"))
        Question = new.get_model("exams", "Question")
        assert Question.objects.get(pk=existing.pk).status == "ready"
        with connection.cursor() as cursor:
            # The database's own default, for rows written without the field (raw SQL, old code).
            cursor.execute(
                "INSERT INTO exams_question (exam_id, domain_id, title, topic, exhibit, stem, explanation, sources, "
                "exclusion_group, idnumber, kind, choose, keep_order, is_active, created_at, updated_at) "
                "VALUES (%s, %s, 'New', '', '', 'Stem', '', '', '', '', 'single', 1, false, true, now(), now()) RETURNING id",
                [exam.pk, domain.pk],
            )
            added = cursor.fetchone()[0]
        assert Question.objects.get(pk=added).status == "draft"
    finally:
        migrate_to_latest()


def test_each_reports_one_choice_becomes_its_set_of_choices():
    old = migrate(("exams", "0025_i27_question_status"))
    try:
        get = old.get_model
        User = get("auth", "User")
        exam = get("exams", "Exam").objects.create(code="MIG-D", title="D", question_count=1, time_limit_minutes=10, passing_score=70)
        domain = get("exams", "Domain").objects.create(exam=exam, name="Only", weight=100, order=1)
        question = get("exams", "Question").objects.create(exam=exam, domain=domain, title="Q", stem="S")
        choice = get("exams", "Choice").objects.create(question=question, label="B", text="B", order=2)
        erratum = get("exams", "Erratum").objects.create(question=question, status="reported", source="learners")
        named = get("exams", "Dispute").objects.create(erratum=erratum, learner=User.objects.create(username="named"), choice=choice)
        silent = get("exams", "Dispute").objects.create(erratum=erratum, learner=User.objects.create(username="silent"))

        new = migrate(("exams", "0026_i27_dispute_choices"))
        Dispute = new.get_model("exams", "Dispute")
        assert list(Dispute.objects.get(pk=named.pk).choices.values_list("pk", flat=True)) == [choice.pk]
        assert not Dispute.objects.get(pk=silent.pk).choices.exists()

        back = migrate(("exams", "0025_i27_question_status"))
        assert back.get_model("exams", "Dispute").objects.get(pk=named.pk).choice_id == choice.pk
    finally:
        migrate_to_latest()
