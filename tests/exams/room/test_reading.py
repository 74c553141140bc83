"""The question page's one-statement read (exams.room.reading.question_page) against the ORM's.

The view tests (test_mock, test_exam_room, test_sessions) hold the page's behaviour; these
hold that the fast read gives exactly what the ORM reads for every state a slot can be in,
that the page rendered from either is the same HTML, and that it answers nothing (and
moves nothing) whenever the general path must answer.
"""
import random
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, AttemptStatus, Question, QuestionKind, ResponseChoice, ResponseStrike
from exams.room import reading
from exams.room.access import owned_attempt
from exams.room.views.question import _question_context
from tests.exams.room.test_mock import HTMX, start
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def fields(instance, *names) -> dict:
    names = names or [field.attname for field in instance._meta.concrete_fields]
    return {name: getattr(instance, name) for name in names}


def by_orm(user, attempt_id: int, position: int) -> reading.Shown | None:
    attempt = owned_attempt(user, attempt_id, with_clock=True, with_shortcuts=True)
    return reading.read_by_orm(attempt, position)


def assert_same(fast: reading.Shown, orm: reading.Shown) -> None:
    assert fields(fast.attempt) == fields(orm.attempt)
    assert fast.attempt.shortcuts_enabled == orm.attempt.shortcuts_enabled
    assert abs(fast.attempt.db_now - orm.attempt.db_now) < timedelta(seconds=30)
    assert fields(fast.attempt.exam) == fields(orm.attempt.exam)
    assert fields(fast.response) == fields(orm.response)
    assert fields(fast.response.question, "id", "kind", "choose") == fields(orm.response.question, "id", "kind", "choose")
    assert fields(fast.response.version) == fields(orm.response.version)
    assert (fast.picked, fast.struck, fast.navigator) == (orm.picked, orm.struck, orm.navigator)


def render(user, shown: reading.Shown, *, htmx: bool) -> str:
    request = RequestFactory().get("/", headers={"HX-Request": "true"} if htmx else {})
    request.user, request.htmx = user, htmx
    template = "exams/attempt.html#attempt-main" if htmx else "exams/attempt.html"
    context = _question_context(request, shown)
    context.pop("seconds_left")  # read from each one's own clock
    # The CSRF token is masked afresh in every render.
    return re.sub(r"\b[A-Za-z0-9]{64}\b", "(token)", render_to_string(template, context, request))


def scramble(attempt: Attempt, seed: int) -> None:
    """Every slot in a random state: picks (incomplete ones too), strike-outs, flags."""
    rng = random.Random(seed)
    for slot in attempt.responses.select_related("question"):
        order = slot.choice_order
        picks = rng.sample(order, rng.randint(0, slot.question.choose))
        struck = rng.sample([pk for pk in order if pk not in picks], rng.randint(0, 2))
        ResponseChoice.objects.bulk_create(ResponseChoice(response=slot, choice_id=pk) for pk in picks)
        ResponseStrike.objects.bulk_create(ResponseStrike(response=slot, choice_id=pk) for pk in struck)
        slot.answered_at = timezone.now() if picks else None
        slot.flagged = rng.random() < 0.3
        slot.save(update_fields=["answered_at", "flagged"])


@pytest.fixture
def exam():
    exam = exam_with_bank(weights=(60, 40), per_domain=8, question_count=12, description="**Bold** words.")
    # Some "choose two": their slots can be incomplete.
    Question.objects.filter(pk__in=list(Question.objects.filter(domain__exam=exam).values_list("pk", flat=True)[::3])).update(
        kind=QuestionKind.MULTIPLE, choose=2,
    )
    return exam


@pytest.mark.postgres_only
class TestTheSameAsTheORM:
    @pytest.mark.parametrize("seed", range(4))
    def test_every_slot_in_random_states_reads_and_renders_the_same(self, learner_client, learner, exam, seed):
        attempt = start(learner_client, exam)
        scramble(attempt, seed)
        if seed % 2:
            Profile.objects.filter(user=learner).delete()  # no profile yet: the setting reads as None
        for position in range(1, 13):
            fast = reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=position)
            orm = by_orm(learner, attempt.pk, position)
            assert fast is not None and orm is not None
            assert_same(fast, orm)
            for htmx in (True, False):
                assert render(learner, fast, htmx=htmx) == render(learner, orm, htmx=htmx)

    def test_an_untimed_practice_reads_the_same(self, learner_client, learner, exam):
        learner_client.post(f"/exams/{exam.code}/session/", {"mode": "practice", "count": "5"})
        attempt = Attempt.objects.get(user=learner, mode="practice")
        assert attempt.deadline is None
        scramble(attempt, 7)
        fast = reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=2)
        assert fast is not None and fast.attempt.seconds_left() is None
        assert_same(fast, by_orm(learner, attempt.pk, 2))

    def test_it_is_one_statement_that_moves_the_resume_point(self, learner_client, learner, exam):
        attempt = start(learner_client, exam)
        reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=2)  # a move before
        with CaptureQueriesContext(connection) as queries:
            shown = reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=7)
        assert len(queries) == 1 and shown.attempt.last_position == 7
        assert Attempt.objects.get(pk=attempt.pk).last_position == 7


@pytest.mark.postgres_only
class TestLeftToTheGeneralPath:
    """Each case answers None and leaves the resume point where it was."""

    def assert_nothing(self, user, attempt: Attempt, position: int) -> None:
        before = Attempt.objects.get(pk=attempt.pk).last_position
        assert reading.question_page(user_id=user.pk, attempt_id=attempt.pk, position=position) is None
        assert Attempt.objects.get(pk=attempt.pk).last_position == before

    def test_someone_elses_attempt(self, learner_client, exam, other_learner):
        self.assert_nothing(other_learner, start(learner_client, exam), 5)

    def test_no_such_attempt_or_slot(self, learner_client, learner, exam):
        attempt = start(learner_client, exam)
        assert reading.question_page(user_id=learner.pk, attempt_id=attempt.pk + 1000, position=1) is None
        for position in (0, 13, 99, 2**15, 2**31, -2**40):
            self.assert_nothing(learner, attempt, position)
        assert reading.question_page(user_id=learner.pk, attempt_id=2**63, position=1) is None


def test_ids_past_the_databases_integers_are_not_found_not_server_errors(learner_client, exam):
    attempt = start(learner_client, exam)
    for huge in (2**15, 2**31, 2**63, 10**20):
        assert learner_client.get(f"/attempts/{huge}/q/1/").status_code == 404
        assert learner_client.post(f"/attempts/{huge}/q/1/", {"choice": "1"}, headers=HTMX).status_code == 404
        assert learner_client.get(f"/attempts/{attempt.pk}/q/{huge}/").status_code == 302  # to the resume point
        assert learner_client.post(f"/attempts/{attempt.pk}/q/{huge}/", {"choice": "1"}, headers=HTMX).status_code == 400

    def test_a_finished_attempt(self, learner_client, learner, exam):
        attempt = start(learner_client, exam)
        Attempt.objects.filter(pk=attempt.pk).update(status=AttemptStatus.SUBMITTED, finished_at=timezone.now())
        self.assert_nothing(learner, attempt, 5)

    def test_past_the_grace_but_not_within_it(self, learner_client, learner, exam):
        attempt = start(learner_client, exam)
        Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() - Attempt.GRACE - timedelta(seconds=2))
        self.assert_nothing(learner, attempt, 5)
        Attempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() - Attempt.GRACE + timedelta(seconds=10))
        shown = reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=5)
        assert shown is not None and shown.attempt.seconds_left() == 0.0

    def test_a_checked_slot(self, learner_client, learner, exam):
        attempt = start(learner_client, exam)
        attempt.responses.filter(position=5).update(checked_at=timezone.now())
        self.assert_nothing(learner, attempt, 5)
        assert reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=6) is not None


def test_only_postgresql_reads_in_one_statement_sqlite_leaves_every_page_to_the_orm(learner_client, learner, exam):
    attempt = start(learner_client, exam)
    shown = reading.question_page(user_id=learner.pk, attempt_id=attempt.pk, position=1)
    assert (shown is not None) == (connection.vendor == "postgresql")
