"""The practice builder: its page, the htmx count, sources, quotas, the clock, feedback at the end, query counts."""
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, AttemptStatus, Bookmark, Question, Response
from exams.room.services import attempt_start, attempt_submit
from exams.study.practice import PracticePlan, bank_count, practice_build, practice_candidates, practice_count
from tests.factories import QuestionFactory, UserFactory, exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def builder_url(exam):
    return reverse("exams:practice_builder", args=[exam.code])


def choices(**overrides) -> dict:
    data = {"count": "20", "source": "all", "mocks": "2", "timing": "untimed", "minutes": "30", "feedback": "each"}
    data.update({key: value for key, value in overrides.items() if key not in ("domains", "topics")})
    form = list(data.items())
    form += [("domains", str(pk)) for pk in overrides.get("domains", [])]
    form += [("topics", value) for value in overrides.get("topics", [])]
    return form


def post(client, exam, data, **kwargs):
    from urllib.parse import urlencode

    return client.post(builder_url(exam), urlencode(data), content_type="application/x-www-form-urlencoded", **kwargs)


def the_practice(user) -> Attempt:
    return Attempt.objects.get(user=user, mode=AttemptMode.PRACTICE, status=AttemptStatus.IN_PROGRESS)


def finished_mock(user, exam, *, wrong: int, flagged: int = 0, unanswered: int = 0, finished_at=None) -> list[int]:
    """A submitted mock: the first `wrong` slots answered wrong, the next `unanswered` left blank, the rest right.

    Returns the ids of the questions it missed (wrong or unanswered)."""
    attempt = attempt_start(user=user, exam=exam).attempt
    missed = []
    for index, slot in enumerate(attempt.responses.select_related("question").order_by("position")):
        keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
        if index < wrong:
            attempt.record_answer(response=slot, choice_ids=[next(pk for pk in slot.choice_order if pk not in keys)])
            missed.append(slot.question_id)
        elif index < wrong + unanswered:
            missed.append(slot.question_id)
        else:
            attempt.record_answer(response=slot, choice_ids=sorted(keys))
        if index < flagged:
            Response.objects.filter(pk=slot.pk).update(flagged=True)
    attempt_submit(user=user, attempt_id=attempt.pk)
    if finished_at is not None:
        Attempt.objects.filter(pk=attempt.pk).update(finished_at=finished_at)
    return missed


@pytest.fixture
def bank():
    """60/40 weights, 15 questions each; the first domain's questions on two topics."""
    exam = exam_with_bank(weights=(60, 40), per_domain=15, question_count=10)
    first, second = exam.domains.order_by("order")
    for index, question in enumerate(first.questions.order_by("pk")):
        question.topic = "Diffusion" if index % 3 == 0 else "Transformers"
        question.save()
    second.questions.update(topic="Charts")
    return exam


class TestThePage:
    def test_it_works_and_says_how_many_match(self, learner_client, bank):
        page = learner_client.get(builder_url(bank)).content.decode()
        assert "Build a practice session" in page
        for domain in bank.domains.all():
            assert domain.name in page
        assert "Diffusion" in page and "Charts" in page
        assert "30 questions match" in page and "the session will draw 20" in page

    def test_the_dashboard_card_holds_the_builder(self, learner_client, bank):
        page = learner_client.get(reverse("exams:dashboard") + f"?exam={bank.code}").content.decode()
        assert 'id="practice-builder"' in page and "30 questions match" in page
        assert f'hx-post="{builder_url(bank)}"' in page

    def test_the_htmx_count_is_the_partial_alone_and_follows_domains_and_topics(self, learner_client, bank):
        first, second = bank.domains.order_by("order")
        response = post(learner_client, bank, choices(domains=[first.pk], topics=[f"{first.pk}:Diffusion"], preview="1"), headers=HTMX)
        body = response.content.decode()
        assert response.status_code == 200
        assert body.lstrip().startswith('<div id="match-count"') and "<html" not in body
        assert "Only 5 match" in body
        body = post(learner_client, bank, choices(domains=[first.pk, second.pk], topics=[f"{first.pk}:Diffusion"], preview="1"), headers=HTMX).content.decode()
        # Topics filter within their domain: the second domain keeps all of its 15.
        assert "20 questions match" in body

    def test_without_javascript_count_matches_redraws_the_page(self, learner_client, bank):
        first, _ = bank.domains.order_by("order")
        page = post(learner_client, bank, choices(domains=[first.pk], count="40", preview="1")).content.decode()
        assert "<html" in page and "Only 15 match" in page and "instead of 40" in page
        assert not Attempt.objects.exists()

    @pytest.mark.parametrize("bad, message", [
        ({"count": "0"}, "greater than or equal to 1"),
        ({"count": "101"}, "less than or equal to 100"),
        ({"count": "ten"}, "Enter a whole number"),
        ({"mocks": "11"}, "less than or equal to 10"),
        ({"timing": "timed", "minutes": "4"}, "greater than or equal to 5"),
        ({"timing": "timed", "minutes": "181"}, "less than or equal to 180"),
        ({"timing": "timed", "minutes": ""}, "Say how many minutes"),
        ({"source": "everything"}, "Select a valid choice"),
        ({"domains": [999999]}, "not one of this exam"),
    ])
    def test_bad_choices_are_explained_and_start_nothing(self, learner_client, bank, bad, message):
        page = post(learner_client, bank, choices(start="1", **bad)).content.decode()
        assert message in page and "Put these right first" in page
        assert not Attempt.objects.exists()

    def test_a_topic_outside_the_ticked_domains_is_explained(self, learner_client, bank):
        first, second = bank.domains.order_by("order")
        page = post(learner_client, bank, choices(domains=[second.pk], topics=[f"{first.pk}:Diffusion"], start="1")).content.decode()
        assert "“Diffusion” is a topic of" in page and "which is not ticked" in page
        assert not Attempt.objects.exists()

    def test_it_needs_a_login_and_a_published_exam(self, client, learner, bank):
        assert client.get(builder_url(bank)).status_code == 302
        client.force_login(learner)
        bank.is_published = False
        bank.save()
        assert client.get(builder_url(bank)).status_code == 404


class TestStarting:
    def test_a_timed_practice_from_two_domains_with_feedback_at_the_end(self, learner_client, learner, bank):
        Profile.objects.filter(user=learner).update(accommodation_factor=Decimal("1.5"))
        first, second = bank.domains.order_by("order")
        response = post(learner_client, bank, choices(
            domains=[first.pk, second.pk], count="20", timing="timed", minutes="30", feedback="end", start="1",
        ))
        practice = the_practice(learner)
        assert response["Location"] == reverse("exams:question", args=[practice.pk, 1])
        assert practice.feedback_at_end
        # 30 minutes × the learner's 1.5.
        assert abs((practice.deadline - practice.started_at) - timedelta(minutes=45)) < timedelta(seconds=5)
        assert Counter(practice.responses.values_list("domain_id", flat=True)) == {first.pk: 12, second.pk: 8}
        page = learner_client.get(reverse("exams:question", args=[practice.pk, 1])).content.decode()
        assert "Check answer" not in page and "Keys and explanations show when this session ends" in page
        assert 'id="timer"' in page
        refused = learner_client.post(reverse("exams:question", args=[practice.pk, 1]), {"choice": "1", "check": "1"}, headers=HTMX)
        assert refused.status_code == 400 and "when it ends" in refused.content.decode()
        assert not practice.responses.filter(checked_at__isnull=False).exists()

    def test_untimed_with_check_answer_as_now(self, learner_client, learner, bank):
        post(learner_client, bank, choices(count="5", start="1"))
        practice = the_practice(learner)
        assert practice.deadline is None and not practice.feedback_at_end
        assert "Check answer" in learner_client.get(reverse("exams:question", args=[practice.pk, 1])).content.decode()

    def test_missed_in_my_last_two_mocks_starts_with_what_matches(self, learner_client, learner, bank):
        now = timezone.now()
        oldest = finished_mock(learner, bank, wrong=6, finished_at=now - timedelta(days=3))
        older = finished_mock(learner, bank, wrong=3, unanswered=1, finished_at=now - timedelta(days=2))
        newest = finished_mock(learner, bank, wrong=3, finished_at=now - timedelta(days=1))
        expected = set(older) | set(newest)
        page = post(learner_client, bank, choices(source="missed", mocks="2", preview="1")).content.decode()
        assert f"Only {len(expected)} match" in page
        follow = post(learner_client, bank, choices(source="missed", mocks="2", start="1"), follow=True).content.decode()
        practice = the_practice(learner)
        assert set(practice.responses.values_list("question_id", flat=True)) == expected
        assert f"Only {len(expected)} questions match your choices, so this session has {len(expected)} instead of 20" in follow
        assert set(oldest) - expected, "the third mock back is not looked at"

    def test_flagged_unseen_and_bookmarked_sources(self, learner_client, learner, bank):
        mock = attempt_start(user=learner, exam=bank).attempt
        flagged = list(mock.responses.order_by("position").values_list("question_id", flat=True)[:3])
        mock.responses.filter(question_id__in=flagged).update(flagged=True)
        attempt_submit(user=learner, attempt_id=mock.pk)
        Bookmark.objects.create(user=learner, question_id=flagged[0])
        plan = lambda source: PracticePlan(domains=tuple(bank.domains.all()), topics={}, count=100, source=source)  # noqa: E731
        candidates = lambda source: {c.question_id for c in practice_candidates(user=learner, exam=bank, plan=plan(source))[0]}  # noqa: E731
        assert candidates("flagged") == set(flagged)
        assert candidates("bookmarked") == {flagged[0]}
        assert candidates("unseen") == set(Question.objects.filter(exam=bank).values_list("pk", flat=True)) - set(
            mock.responses.values_list("question_id", flat=True)
        )
        assert len(candidates("all")) == 30

    def test_a_running_mocks_questions_are_left_out_and_practice_waits_for_it(self, learner_client, learner, bank):
        mock = attempt_start(user=learner, exam=bank).attempt
        page = learner_client.get(builder_url(bank)).content.decode()
        # The count is refused as the start is: it would differ by one for a topic the mock holds.
        assert "Counting waits until your timed mock ends" in page and "questions match" not in page
        assert "You have a timed mock" in page and "Start practice" not in page
        counted = post(learner_client, bank, choices(preview="1"), headers={"HX-Request": "true"}).content.decode()
        assert "Counting waits until your timed mock ends" in counted
        assert not any(told in counted for told in ("questions match", "question matches", "Only ", "No question matches"))
        post(learner_client, bank, choices(start="1"))
        assert not Attempt.objects.filter(mode=AttemptMode.PRACTICE).exists()
        in_mock = set(mock.responses.values_list("question_id", flat=True))
        plan = PracticePlan(domains=tuple(bank.domains.all()), topics={}, count=100)
        candidates, _ = practice_candidates(user=learner, exam=bank, plan=plan)
        assert not in_mock & {c.question_id for c in candidates}

    def test_a_practice_in_progress_is_resumed_or_ended_first(self, learner_client, learner, bank):
        post(learner_client, bank, choices(count="5", start="1"))
        running = the_practice(learner)
        page = post(learner_client, bank, choices(count="7", start="1")).content.decode()
        assert "You have a practice session in progress" in page and "End it and start this one" in page
        assert the_practice(learner) == running
        post(learner_client, bank, choices(count="7", start="1", abandon=str(running.pk)))
        running.refresh_from_db()
        assert running.status == "abandoned" and running.score is None
        assert the_practice(learner).responses.count() == 7

    def test_nothing_matching_starts_nothing(self, learner_client, learner, bank):
        page = post(learner_client, bank, choices(source="bookmarked", start="1")).content.decode()
        assert "No question matches these choices" in page
        assert not Attempt.objects.exists()

    def test_one_question_per_exclusion_group(self, learner, bank):
        first = bank.domains.order_by("order").first()
        grouped = list(first.questions.order_by("pk")[:6])
        Question.objects.filter(pk__in=[q.pk for q in grouped]).update(exclusion_group="same point")
        plan = PracticePlan(domains=(first,), topics={}, count=100)
        assert practice_count(user=learner, exam=bank, plan=plan) == 15 - 6 + 1
        started = practice_build(user=learner, exam=bank, plan=plan, seed=4)
        drawn = set(started.attempt.responses.values_list("question_id", flat=True))
        assert len(drawn & {q.pk for q in grouped}) == 1 and started.asked == 100


def queries(run) -> int:
    with CaptureQueriesContext(connection) as captured:
        run()
    return len(captured.captured_queries)


def test_the_count_and_the_draw_take_a_fixed_number_of_queries(bank):
    small, large = UserFactory(username="small"), UserFactory(username="large")
    extra = exam_with_bank(weights=(50, 50), per_domain=60, question_count=20)
    for user in (small, large):
        for _ in range(1 if user is small else 4):
            finished_mock(user, extra, wrong=5)
    # Every question shown once already, so both draws find their versions made (a draw that
    # must make versions takes three queries more, whatever its size).
    attempt_start(
        user=UserFactory(username="third"), exam=extra, mode=AttemptMode.PRACTICE,
        question_ids=list(extra.questions.values_list("pk", flat=True)),
    )
    for user, count in ((small, 5), (large, 80)):
        plan = PracticePlan(domains=tuple(extra.domains.all()), topics={}, count=count, source="all")
        missed = PracticePlan(domains=tuple(extra.domains.all()), topics={}, count=count, source="missed", mocks=3)
        user.counted = queries(lambda: practice_count(user=user, exam=extra, plan=plan)) + queries(
            lambda: practice_count(user=user, exam=extra, plan=missed)
        )
        user.drawn = queries(lambda: practice_build(user=user, exam=extra, plan=plan, seed=1))
        assert the_practice(user).responses.count() == count
    assert small.counted == large.counted == 2
    assert small.drawn == large.drawn


def test_the_builders_page_takes_a_fixed_number_of_queries(client, bank):
    small, large = UserFactory(username="small"), UserFactory(username="large")
    for topic_index in range(12):
        QuestionFactory.create_batch(2, domain=bank.domains.first(), exam=bank, topic=f"Topic {topic_index}")
    finished_mock(large, bank, wrong=4)
    finished_mock(large, bank, wrong=2)
    counts = []
    for user in (small, large):
        client.force_login(user)
        client.get(builder_url(bank))
        counts.append(queries(lambda: client.get(builder_url(bank))))
        counts.append(queries(lambda: post(client, bank, choices(source="missed", preview="1"), headers=HTMX)))
    assert counts[0] == counts[2] and counts[1] == counts[3]


def test_the_bank_count_is_the_learners_count_from_all_questions_and_follows_every_edit(learner, bank, django_assert_max_num_queries):
    first, second = bank.domains.order_by("order")
    plans = [
        PracticePlan(domains=(first, second), topics={}, count=20),
        PracticePlan(domains=(first,), topics={first.pk: frozenset({"Diffusion"})}, count=20),
        PracticePlan(domains=(first, second), topics={first.pk: frozenset({"Transformers"})}, count=20),
        PracticePlan(domains=(second,), topics={}, count=20),
    ]

    def agree():
        for plan in plans:
            assert bank_count(exam=bank, plan=plan) == practice_count(user=learner, exam=bank, plan=plan)

    agree()
    with django_assert_max_num_queries(1):  # warm: the bank's version only (none off PostgreSQL's caching: the count)
        bank_count(exam=bank, plan=plans[0])
    # Every edit the count depends on is counted again: a group, a topic, a retirement, a draft, a new question.
    Question.objects.filter(pk__in=list(first.questions.order_by("pk").values_list("pk", flat=True)[:4])).update(exclusion_group="g")
    agree()
    Question.objects.filter(pk=first.questions.filter(topic="Transformers").order_by("pk").first().pk).update(topic="Diffusion")
    agree()
    Question.objects.filter(pk=second.questions.order_by("pk").first().pk).update(is_active=False)
    Question.objects.filter(pk=second.questions.order_by("pk").last().pk).update(status="draft")
    agree()
    QuestionFactory(domain=first, exam=bank, topic="Diffusion")
    agree()
    # Diffusion: 3 ungrouped, the new one, and group "g" (three of them and the moved one) once.
    assert bank_count(exam=bank, plan=plans[1]) == 5 and bank_count(exam=bank, plan=plans[3]) == 13
