"""The dashboard: standing by domain, readiness by the formula, history, exports, query counts."""
import csv
import io
import json
import math
import random
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import numpy as np
import pytest
from django.db import connection
from django.db.models import Q
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.models import (
    Attempt, AttemptMode, AttemptStatus, Bookmark, Domain, Question, Response, ResponseChoice, ReviewCard,
)
from exams.room import draw
from exams.room.services import attempt_start, attempt_submit
from exams.statistics import rasch
from exams.study import ability, progress
from exams.templatetags.exam_extras import chance, percent
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def finished_history(user, exam, *, attempts: int, answered_share: float = 0.9, seed: int = 1, per_attempt: int = 4) -> None:
    """Finished attempts with answers, made in bulk (real rows, no shortcuts in what is read)."""
    rng = random.Random(seed)
    questions = list(exam.questions.prefetch_related("choices"))
    version_for = {}
    for question in questions:
        version_for[question.pk] = question.current_version()
    now = timezone.now()
    made = Attempt.objects.bulk_create(
        Attempt(
            user=user, exam=exam, mode=rng.choice([AttemptMode.MOCK, AttemptMode.PRACTICE, AttemptMode.DRILL]),
            status=AttemptStatus.SUBMITTED, started_at=now - timedelta(days=i, minutes=50),
            finished_at=now - timedelta(days=i), score=Decimal(rng.randint(30, 95)), published_score=Decimal(50),
            passed=rng.random() < 0.5, right_count=5, total_count=10,
        )
        for i in range(attempts)
    )
    responses, picks = [], []
    for attempt in made:
        for position, question in enumerate(rng.sample(questions, min(per_attempt, len(questions))), start=1):
            answered = rng.random() < answered_share
            right = rng.random() < 0.6
            choices = list(question.choices.all())
            responses.append(Response(
                attempt=attempt, position=position, question=question, domain_id=question.domain_id,
                version=version_for[question.pk],
                choice_order=[c.pk for c in choices], is_correct=right if answered else False,
                answered_at=attempt.started_at + timedelta(minutes=position) if answered else None,
            ))
    Response.objects.bulk_create(responses)
    for response in responses:
        if response.answered_at:
            key = next(c for c in response.question.choices.all() if c.is_correct == response.is_correct)
            picks.append(ResponseChoice(response=response, choice=key))
    ResponseChoice.objects.bulk_create(picks)


def expected_standings(user, exam, *, up_to: Attempt | None = None) -> dict[str, tuple[int, int]]:
    """Mastery counts recomputed in Python straight from the rows, by PRODUCT §3's definition.

    Counted: every non-void slot of a finished mock (unanswered = wrong, timed at the
    mock's finish); elsewhere a graded slot that was answered. Newest 50 per domain.
    `up_to`: as it stood when that attempt finished (attempts finished up to it only).
    """
    rows = Response.objects.filter(
        attempt__user=user, attempt__exam=exam, attempt__status__in=Attempt.FINISHED_STATUSES, is_correct__isnull=False,
    ).values_list("pk", "domain__name", "is_correct", "answered_at", "attempt__mode", "attempt__finished_at")
    if up_to is not None:
        rows = rows.filter(
            Q(attempt__finished_at__lt=up_to.finished_at) | Q(attempt__finished_at=up_to.finished_at, attempt__pk__lte=up_to.pk)
        )
    counted = [
        (answered_at or finished_at, pk, domain, right)
        for pk, domain, right, answered_at, mode, finished_at in rows
        if mode == AttemptMode.MOCK or answered_at is not None
    ]
    counts: dict[str, list[int]] = {}
    for _, _, domain, right in sorted(counted, reverse=True):
        bucket = counts.setdefault(domain, [0, 0])
        if bucket[1] < 50:
            bucket[0] += int(right)
            bucket[1] += 1
    return {domain: (right, n) for domain, (right, n) in counts.items()}


def expected_readiness(user, exam) -> tuple[float, float, float]:
    """The standing by hand from the rows: the counted window (newest 400 answers of the latest 50
    finished attempts, aged in attempts), the Rasch posterior with the author's levels as difficulties (no
    calibration yet), and the expected score on the reference form, its mean and 90% band
    over posterior draws."""
    recent = list(
        Attempt.objects.filter(user=user, exam=exam, status__in=Attempt.FINISHED_STATUSES)
        .order_by("-finished_at", "-pk").values_list("pk", flat=True)[:50]
    )
    age_of = {pk: age for age, pk in enumerate(recent)}  # finished attempts after the answer's own
    rows = Response.objects.filter(attempt__in=recent, is_correct__isnull=False).values_list(
        "pk", "question_id", "domain_id", "is_correct", "answered_at", "attempt__mode", "attempt__finished_at", "attempt_id"
    )
    counted = sorted(
        ((answered_at or finished_at, pk, question, domain, right, age_of[attempt])
         for pk, question, domain, right, answered_at, mode, finished_at, attempt in rows
         if mode == AttemptMode.MOCK or answered_at is not None),
        reverse=True,
    )[:400][::-1]
    levels = dict(exam.questions.filter(is_active=True).values_list("pk", "difficulty"))
    domains = list(exam.domains.order_by("order", "pk"))
    index = {d.pk: i for i, d in enumerate(domains)}
    met, weight = set(), []
    for _, _, question, _, _, _ in counted:
        weight.append(0.5 if question in met else 1.0)
        met.add(question)
    posterior = rasch.ability_posterior(
        difficulty=np.array([rasch.LEVEL_OFFSET[levels[q]] for _, _, q, _, _, _ in counted]),
        domain=np.array([index[d] for _, _, _, d, _, _ in counted]),
        right=np.array([r for _, _, _, _, r, _ in counted], dtype=float),
        age=np.array([age for *_, age in counted], dtype=float), weight=np.array(weight), domains=len(domains),
        prior_mean=ability.DEFAULT_ABILITY_MEAN, prior_sd=ability.DEFAULT_ABILITY_SD,
    )
    seats = draw.quotas(domains=[draw.DomainQuota(d.pk, d.weight, d.order) for d in domains], total=exam.question_count)
    draws = np.random.default_rng(7).multivariate_normal(posterior.mean, posterior.covariance, size=20000)
    score = np.zeros(len(draws))
    for domain in domains:
        reference = np.array([rasch.LEVEL_OFFSET[levels[q]] for q, d in exam.questions.filter(is_active=True)
                              .values_list("pk", "domain_id") if d == domain.pk])
        theta = draws[:, 0] + draws[:, 1] * posterior.centre + draws[:, 2 + index[domain.pk]]  # now
        score += seats[domain.pk] * (1 / (1 + np.exp(-(theta[:, None] - reference)))).mean(axis=1)
    score = 100 * score / sum(seats.values())
    low, high = np.quantile(score, [0.05, 0.95])
    return float(score.mean()), float(low), float(high)


def shown_standing(page: str) -> tuple[float, float, float]:
    found = re.search(r'Your standing</dt>\s*<dd><strong class="score">([\d.]+)%</strong>\s*'
                      r'<span class="band">\(90% credible band ([\d.]+)%–([\d.]+)%\)', page)
    assert found, "no standing on the page"
    return tuple(float(value) for value in found.groups())


def test_a_new_learner_sees_a_first_step(learner_client):
    exam_with_bank()
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Start here" in page and "Not enough data yet: 0 of 20" in page
    assert "No finished attempts yet." in page and "No mock yet" in page


def test_mastery_and_readiness_follow_the_formulas(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    finished_history(learner, exam, attempts=40)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    standings = expected_standings(learner, exam)
    for domain, (right, n) in standings.items():
        assert f"<td class=\"num\">{right}/{n}</td>" in page
        assert n <= 50
    # Recomputed from the rows; the page's posterior draws are 1,000, so within Monte Carlo error.
    predicted, low, high = expected_readiness(learner, exam)
    shown = shown_standing(page)
    # The page's figures come from 1,000 posterior draws: the mean within 1 point, the band's edges within 2.
    assert shown[0] == pytest.approx(predicted, abs=1.0) and shown[1:] == pytest.approx((low, high), abs=2.0)


def test_readiness_needs_20_answers(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=10)
    finished_history(learner, exam, attempts=4, answered_share=1.0)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Not enough data yet: 16 of 20" in page


def test_the_weakest_domain_is_one_click_from_a_drill(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    finished_history(learner, exam, attempts=30)
    standings = expected_standings(learner, exam)
    weakest = min(standings, key=lambda d: standings[d][0] / standings[d][1])
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert f"Drill {weakest}" in page
    domain = exam.domains.get(name=weakest)
    learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "drill", "domain": domain.pk, "back": "dashboard"})
    drill = Attempt.objects.get(user=learner, mode=AttemptMode.DRILL, status=AttemptStatus.IN_PROGRESS)
    assert drill.domain == domain


def test_reviews_due_and_unfinished_attempts_are_listed(learner_client, learner):
    exam = exam_with_bank()
    mock = attempt_start(user=learner, exam=exam).attempt
    # Cards of questions outside the running mock (its own are left out: test_key_rule).
    first, second = exam.questions.exclude(responses__attempt=mock)[:2]
    ReviewCard.objects.create(user=learner, question=first, due=timezone.now() - timedelta(days=1))
    ReviewCard.objects.create(user=learner, question=second, due=timezone.now() + timedelta(minutes=5))
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Review due (1)" in page and "still know 90% of answers" in page
    assert "Resume " in page and "left on the clock" in page


def test_with_nothing_due_it_says_when_the_next_review_is(learner_client, learner):
    exam = exam_with_bank()
    Profile.objects.filter(user=learner).update(time_zone="Asia/Tokyo", desired_retention=Decimal("0.85"), exam_date=date(2099, 5, 4))
    first, second = exam.questions.all()[:2]
    ReviewCard.objects.create(user=learner, question=first, due=datetime(2099, 1, 2, 20, 30, tzinfo=UTC))
    ReviewCard.objects.create(user=learner, question=second, due=datetime(2099, 1, 5, 8, 0, tzinfo=UTC))
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    # 20:30 UTC is 05:30 the next morning in Tokyo.
    assert "Nothing due now. Next review: 3 Jan, 05:30." in page
    assert "still know 85% of answers" in page and "the day before your exam on 4 May 2099" in page


def test_history_is_paginated(learner_client, learner):
    exam = exam_with_bank()
    finished_history(learner, exam, attempts=45)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Page 1 of 3" in page
    assert learner_client.get(reverse("exams:dashboard"), {"page": 3}).content.decode().count("<tr>") >= 5


def dashboard_queries(client, user, exam, attempts: int, per_attempt: int = 4) -> int:
    finished_history(user, exam, attempts=attempts, seed=attempts, per_attempt=per_attempt)
    attempt_start(user=user, exam=exam)
    client.get(reverse("exams:dashboard"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("exams:dashboard")).status_code == 200
    return len(queries.captured_queries)


def test_the_dashboards_queries_do_not_grow_with_history(client, learner, other_learner, instructor):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    client.force_login(learner)
    small = dashboard_queries(client, learner, exam, 2, per_attempt=30)
    # Recent attempts cover every domain 50 times over: mastery reads only those.
    client.force_login(other_learner)
    assert dashboard_queries(client, other_learner, exam, 500, per_attempt=30) == small
    # Thin attempts (4 answers each): mastery reads further back, in the same one query.
    client.force_login(instructor)
    assert dashboard_queries(client, instructor, exam, 500) == small


@pytest.mark.parametrize("attempts, per_attempt", [(1, 4), (30, 30), (120, 4), (400, 12)])
def test_mastery_counts_the_latest_50_answers_per_domain_whatever_the_history(learner, attempts, per_attempt):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=attempts, per_attempt=per_attempt, seed=attempts)
    got = {s.name: (s.right, s.answered) for s in progress.domain_standings(user=learner, exam=exam) if s.answered}
    assert got == expected_standings(learner, exam)


def test_mastery_finds_a_domain_last_answered_long_ago(learner):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=300, per_attempt=30, seed=5)
    rare = exam.domains.order_by("order").last()
    newest = Attempt.objects.filter(user=learner).order_by("-finished_at")[:280]
    Response.objects.filter(attempt__in=list(newest), domain=rare).update(answered_at=None)
    got = {s.name: (s.right, s.answered) for s in progress.domain_standings(user=learner, exam=exam)}
    assert got == expected_standings(learner, exam)
    assert got[rare.name][1] == 50


def test_exports_hold_exactly_the_learners_finished_answers(learner_client, learner, other_learner):
    exam = exam_with_bank()
    finished_history(learner, exam, attempts=3, seed=3)
    finished_history(other_learner, exam, attempts=2, seed=4)
    # In progress: not exported (a practice: a running mock would hold the scores back, see test_key_rule).
    attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=5)
    rows = list(csv.DictReader(io.StringIO(b"".join(learner_client.get(reverse("exams:export_csv")).streaming_content).decode())))
    mine = Response.objects.filter(attempt__user=learner, attempt__status=AttemptStatus.SUBMITTED)
    assert len(rows) == mine.count()
    assert {int(row["attempt_id"]) for row in rows} == set(mine.values_list("attempt_id", flat=True))
    sample = mine.select_related("question").first()
    row = next(r for r in rows if int(r["attempt_id"]) == sample.attempt_id and int(r["position"]) == sample.position)
    assert row["question_title"] == sample.question.title and row["correct"] == str(sample.is_correct)

    body = json.loads(learner_client.get(reverse("exams:export_json")).content)
    assert body["learner"] == learner.username
    assert len(body["attempts"]) == 3
    assert sum(len(a["responses"]) for a in body["attempts"]) == mine.count()
    for exported in body["attempts"]:
        attempt = Attempt.objects.get(pk=exported["attempt_id"])
        assert attempt.user == learner and Decimal(exported["score"]) == attempt.score


def test_the_dashboard_needs_a_login(client):
    assert client.get(reverse("exams:dashboard")).status_code == 302
    assert client.get(reverse("exams:export_csv")).status_code == 302


def test_the_estimate_uses_the_exams_own_weights(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    finished_history(learner, exam, attempts=40, seed=11)
    # One strong and one weak domain, so the weights visibly move the estimate.
    Response.objects.filter(domain=exam.domains.order_by("order").last()).update(is_correct=False)
    shown = []
    for heavy, light in ((10, 90), (60, 40), (90, 10)):
        first, second = exam.domains.order_by("order")
        first.weight, second.weight = heavy, light
        first.save()
        second.save()
        page = learner_client.get(reverse("exams:dashboard")).content.decode()
        standing = shown_standing(page)
        mean, low, high = expected_readiness(learner, exam)
        # The page's band comes from 1,000 posterior draws (seeded per learner, whose id varies from
        # run to run): a 5% or 95% quantile of 1,000 normal draws has a standard error of 0.067 SD,
        # and the SD is about the band's width / 3.29; four such errors, at least 2 points.
        edge = max(2.0, 4 * 0.067 * (high - low) / 3.29)
        assert standing[0] == pytest.approx(mean, abs=1.0), (heavy, light)
        assert standing[1:] == pytest.approx((low, high), abs=edge), (heavy, light, edge)
        shown.append(standing[0])
    # The heavier the weak domain weighs, the lower the standing.
    assert shown[0] < shown[1] < shown[2]


def test_a_tier_is_not_taken_when_an_answer_outside_it_is_newer_by_a_fraction_of_a_second(learner):
    """The gate's bound keeps fractions of a second (SQLite's datetime() would drop them)."""
    exam = exam_with_bank(weights=(100,), per_domain=2)
    q1, q2 = exam.questions.order_by("pk")
    versions = {q.pk: q.current_version() for q in (q1, q2)}
    base = datetime(2025, 1, 1, 10, 0, 0, tzinfo=UTC)

    def attempt(finished_at, answers):
        made = Attempt.objects.create(
            user=learner, exam=exam, mode=AttemptMode.MOCK, status=AttemptStatus.EXPIRED,
            deadline=finished_at, finished_at=finished_at, right_count=0, total_count=2,
            score=Decimal(0), published_score=Decimal(0), passed=False,
        )
        for position, (question, answered_at, right) in enumerate(answers, start=1):
            Response.objects.create(
                attempt=made, position=position, question=question, domain_id=question.domain_id,
                version=versions[question.pk], choice_order=[], answered_at=answered_at, is_correct=right,
            )

    # Outside the first tier: it finished first, at 10:00:00.900, with an answer stamped
    # just inside the margin after that.
    finished = base + timedelta(milliseconds=900)
    attempt(finished, [(q1, finished + progress.MASTERY_MARGIN - timedelta(milliseconds=100), True)])
    # Then 25 attempts with 50 answers; the oldest is older than that outside answer by
    # 0.3 s, but newer than the bound with its fraction of a second dropped.
    for i in range(25):
        later = base + progress.MASTERY_MARGIN + timedelta(hours=1 + i)
        first = base + progress.MASTERY_MARGIN + timedelta(milliseconds=500) if i == 0 else later - timedelta(minutes=5)
        attempt(later, [(q1, first, False), (q2, later - timedelta(minutes=4), False)])

    got = {s.name: (s.right, s.answered) for s in progress.domain_standings(user=learner, exam=exam) if s.answered}
    assert got == expected_standings(learner, exam)
    assert sum(right for right, _ in got.values()) == 1  # the outside answer, the only right one


def answer(attempt, slots, *, right: bool) -> None:
    for slot in slots:
        choice = slot.question.choices.filter(is_correct=right).first()
        attempt.record_answer(response=slot, choice_ids=[choice.pk])


def test_a_mocks_unanswered_slots_count_as_wrong_and_an_unchecked_practice_slot_does_not(learner_client, learner):
    """The issue's case: a mock left mostly unanswered must not show a perfect domain."""
    exam = exam_with_bank(weights=(100,), per_domain=40, question_count=30)
    mock = attempt_start(user=learner, exam=exam).attempt
    answer(mock, list(mock.responses.all()[:3]), right=True)
    attempt_submit(user=learner, attempt_id=mock.pk)
    (standing,) = progress.domain_standings(user=learner, exam=exam)
    assert (standing.right, standing.answered) == (3, 30)
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=10).attempt
    answer(practice, list(practice.responses.all()[:4]), right=True)
    attempt_submit(user=learner, attempt_id=practice.pk)  # graded at submit; 6 never answered
    (standing,) = progress.domain_standings(user=learner, exam=exam)
    assert (standing.right, standing.answered) == (7, 34)
    assert progress.domain_standings(user=learner, exam=exam)[0].mastery == pytest.approx(100 * 7 / 34)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "<td class=\"num\">7/34</td>" in page


def test_the_dashboard_names_standing_next_mock_and_chance_of_passing(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=20, question_count=20, passing_score=70)
    finished_history(learner, exam, attempts=8, per_attempt=5, answered_share=1.0, seed=2)
    standings = progress.domain_standings(user=learner, exam=exam)
    estimate = ability.learner_estimate(user=learner, exam=exam, standings=standings).readiness
    assert estimate.counted == 40 and estimate.rough and estimate.seats == 20
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert f"<strong class=\"score\">{percent(estimate.next_low)}–{percent(estimate.next_high)}</strong>" in page
    assert f"({estimate.next_low_right}–{estimate.next_high_right} of 20 right, 9 times in 10)" in page
    assert f"<strong class=\"score\">{chance(estimate.pass_chance)}</strong>" in page
    assert "Rough: from only 40 counted answers. The range firms up from 60." in page
    finished_history(learner, exam, attempts=8, per_attempt=5, answered_share=1.0, seed=3)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Rough:" not in page and "From your last 80 counted answers" in page


@pytest.mark.parametrize(("value", "shown"), [(0.0, "under 1%"), (0.004, "under 1%"), (0.43, "43%"), (0.996, "over 99%")])
def test_a_chance_is_shown_without_false_certainty(value, shown):
    assert chance(value) == shown


def test_an_exam_without_domains_shows_no_estimate(learner_client):
    exam = exam_with_bank(weights=())  # published, no domains: no quotas can be drawn
    page = learner_client.get(reverse("exams:dashboard"), {"exam": exam.code})
    assert page.status_code == 200 and "Not enough data yet: 0 of 20" in page.content.decode()


# --- mastery over time (the small multiples) -------------------------------------------


def history_by_name(user, exam) -> dict[str, list[tuple[int, int]]]:
    trend = progress.mock_trend(user=user, exam=exam)
    return {
        history.name: [(point.right, point.answered) for point in history.points if point.answered]
        for history in progress.mastery_history(user=user, exam=exam, mocks=trend)
    }


def expected_history(user, exam) -> dict[str, list[tuple[int, int]]]:
    """Recomputed mock by mock with the standings' own definition, cut at each mock's finish."""
    expected: dict[str, list[tuple[int, int]]] = {name: [] for name in exam.domains.values_list("name", flat=True)}
    for mock in progress.mock_trend(user=user, exam=exam):
        for name, counts in expected_standings(user, exam, up_to=mock).items():
            expected[name].append(counts)
    return expected


@pytest.mark.parametrize("attempts, per_attempt", [(1, 4), (30, 30), (120, 4), (400, 12)])
def test_mastery_after_each_mock_is_the_standing_as_it_was_then(learner, attempts, per_attempt):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=attempts, per_attempt=per_attempt, seed=attempts)
    assert history_by_name(learner, exam) == expected_history(learner, exam)


@pytest.mark.postgres_only  # elsewhere the tiered statement always answers (None by design)
@pytest.mark.parametrize("attempts, per_attempt, first_tier", [(1, 4, True), (30, 30, True), (60, 30, True), (120, 4, False)])
def test_the_first_tier_read_once_gives_what_the_tiered_statement_gives(learner, attempts, per_attempt, first_tier):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=attempts, per_attempt=per_attempt, seed=attempts)
    mock_ids = [mock.pk for mock in progress.mock_trend(user=learner, exam=exam)]
    domain_ids = list(exam.domains.values_list("pk", flat=True))
    held = frozenset(exam.questions.order_by("pk").values_list("pk", flat=True)[:4])
    sql, params = progress._history_sql(user=learner, exam=exam, mock_ids=mock_ids, held=held)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        statement = {(mock_id, domain_id): (right, n, held_count) for mock_id, domain_id, right, n, held_count in cursor.fetchall()}
    got = progress._first_tier_history(user=learner, exam=exam, mock_ids=mock_ids, domain_ids=domain_ids, held=held)
    # Where the first tier cannot prove its window (thin attempts), the tiered statement answers.
    assert (got is not None) == first_tier
    if got is not None:
        assert got == statement
        assert any(held_count for _, _, held_count in got.values()) or attempts == 1
    points = {(p.mock_id, h.domain_id): (p.right, p.answered, p.held)
              for h in progress.mastery_history(user=learner, exam=exam, mocks=progress.mock_trend(user=learner, exam=exam), held=held)
              for p in h.points if p.answered}
    assert points == statement


def test_mastery_over_time_reaches_a_domain_answered_long_ago_and_follows_corrections(learner):
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=300, per_attempt=30, seed=5)
    rare = exam.domains.order_by("order").last()
    newest = Attempt.objects.filter(user=learner).order_by("-finished_at")[:280]
    Response.objects.filter(attempt__in=list(newest), domain=rare).update(answered_at=None)
    got = history_by_name(learner, exam)
    assert got == expected_history(learner, exam)
    assert all(answered == 50 for _, answered in got[rare.name])
    # Current grades: a correction to a past answer moves the points it falls under.
    corrected = Response.objects.filter(attempt=progress.mock_trend(user=learner, exam=exam)[-1], is_correct=False).first()
    Response.objects.filter(pk=corrected.pk).update(is_correct=True)
    again = history_by_name(learner, exam)
    name = corrected.domain.name
    assert again == expected_history(learner, exam) and again[name][-1][0] == got[name][-1][0] + 1


def test_each_mock_counts_only_what_was_finished_by_then(learner):
    exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
    questions = list(exam.questions.order_by("pk"))
    base = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)

    def attempt(mode, finished_at, answers):
        made = Attempt.objects.create(
            user=learner, exam=exam, mode=mode, status=AttemptStatus.SUBMITTED, finished_at=finished_at,
            right_count=0, total_count=len(answers), score=Decimal(50), published_score=Decimal(50), passed=False,
        )
        for position, (question, right) in enumerate(zip(questions, answers, strict=False), start=1):
            Response.objects.create(
                attempt=made, position=position, question=question, domain_id=question.domain_id,
                version=question.current_version(), choice_order=[], is_correct=right,
                answered_at=finished_at - timedelta(minutes=10 - position),
            )

    attempt(AttemptMode.MOCK, base, [True, False, False, False])
    attempt(AttemptMode.PRACTICE, base + timedelta(days=1), [True, True, True, True])
    attempt(AttemptMode.MOCK, base + timedelta(days=2), [True, True, False, False])
    attempt(AttemptMode.DRILL, base + timedelta(days=3), [False, False, False, False])  # after the last mock
    (history,) = progress.mastery_history(user=learner, exam=exam, mocks=progress.mock_trend(user=learner, exam=exam))
    assert [(p.right, p.answered) for p in history.points] == [(1, 4), (7, 12)]
    assert [p.finished_at for p in history.points] == [base, base + timedelta(days=2)]


def test_the_small_multiples_are_dated_with_the_passing_line_and_gaps(learner):
    first = datetime(2026, 2, 1, tzinfo=UTC)
    points = [
        progress.MasteryPoint(mock_id=i, finished_at=first + timedelta(days=i), right=right, answered=answered)
        for i, (right, answered) in enumerate([(0, 0), (3, 4), (1, 2), (0, 0), (2, 2), (9, 10), (7, 10)])
    ]
    (chart,) = progress.mastery_charts([progress.DomainHistory(domain_id=1, name="Data", points=points)], passing_score=70)
    ys = [point["y"] for point in chart["points"]]
    assert ys[0] is None and ys[3] is None and all(y is not None for i, y in enumerate(ys) if i not in (0, 3))
    # A gap splits the line: 75% and 50% on one side, 100%, 90%, 70% on the other.
    assert len(chart["lines"]) == 2 and [len(line.split()) for line in chart["lines"]] == [2, 3]
    assert chart["pass_y"] == round(chart["bottom"] - 0.7 * (chart["bottom"] - chart["top"]), 1)
    assert ys[4] == chart["top"] and [p["passing"] for p in chart["points"]] == [False, True, False, False, True, True, True]
    dated = [index for index, point in enumerate(chart["points"]) if point["dated"]]
    assert dated[0] == 0 and dated[-1] == 6 and len(dated) <= 3
    assert chart["latest"] == 70.0


def test_the_dashboard_draws_one_chart_per_domain_after_each_mock(learner_client, learner):
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    empty = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "Mastery over time" in empty and "No mock yet: after each mock" in empty
    finished_history(learner, exam, attempts=12, seed=2)
    page = learner_client.get(reverse("exams:dashboard")).content.decode()
    mocks = progress.mock_trend(user=learner, exam=exam)
    assert page.count('class="multiple-chart"') == 2
    for name, counts in expected_history(learner, exam).items():
        right, answered = counts[-1]
        assert f"({right}/{answered})</title></circle>" in page
        assert f"Mastery in {name} after each mock" in page
    assert page.count('class="chart-pass-line"') == 3  # the two domains' and the score trend's
    last = timezone.localtime(mocks[-1].finished_at)
    assert f'class="chart-date">{last.day} {last:%b}</text>' in page


@pytest.mark.parametrize("note", ["+1 call me", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "\n=1+1", "=1+1"])
def test_the_history_csv_neutralises_formula_cells_and_keeps_numbers(learner_client, learner, note):
    """Issue 28: an imported title such as =HYPERLINK(...) and a note starting with + reached cells unescaped."""
    exam = exam_with_bank()
    mock = attempt_start(user=learner, exam=exam).attempt
    first = mock.responses.get(position=1)
    Question.objects.filter(pk=first.question_id).update(title='=HYPERLINK("https://evil.example","Click")')
    Domain.objects.filter(pk=first.domain_id).update(name="-Ops")
    mock.record_answer(response=first, choice_ids=[first.choice_order[0]])
    attempt_submit(user=learner, attempt_id=mock.pk)
    Bookmark.objects.create(user=learner, question_id=first.question_id, note=note)
    body = b"".join(learner_client.get(reverse("exams:export_csv")).streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body, newline="")))
    row = next(r for r in rows if int(r["question_id"]) == first.question_id)
    assert row["question_title"] == '\'=HYPERLINK("https://evil.example","Click")'
    assert (row["domain"], row["note"]) == ("'-Ops", "'" + note)
    mock.refresh_from_db()
    assert row["score"] == str(mock.score) and row["position"] == "1" and row["question_id"] == str(first.question_id)


def page_as_shown(client, url: str) -> str:
    # The CSRF token is masked, and the CSP nonce drawn, afresh on every response: nothing else differs.
    body = client.get(url).content.decode()
    for token in (r'nonce="[^"]+"', r'name="csrfmiddlewaretoken" value="[^"]+"', r'"x-csrftoken": "[^"]+"'):
        body = re.sub(token, "", body)
    return body


def test_the_cached_sections_are_always_the_page_as_it_stands(client, learner):
    """The trend, mastery over time and the history are cached on what they show: after each change
    the page equals one rendered with no cache at all."""
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=10)
    finished_history(learner, exam, attempts=30, per_attempt=12, seed=7)
    client.force_login(learner)
    url = reverse("exams:dashboard") + f"?exam={exam.code}"

    def as_it_stands(url=url) -> str:
        page_as_shown(client, url)
        cached = page_as_shown(client, url)
        with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}):
            fresh = page_as_shown(client, url)
        assert cached == fresh
        return cached

    before = as_it_stands()
    newest = Attempt.objects.filter(user=learner, mode=AttemptMode.MOCK).order_by("-finished_at").first()
    # One thing at a time, each shown in a cached section: a score (the trend and the history), an
    # equated score (the history), a mastery point (an answer regraded: mastery over time).
    Attempt.objects.filter(pk=newest.pk).update(score=Decimal("12.5"))
    corrected = as_it_stands()
    assert corrected != before and "12.5%" in corrected
    Attempt.objects.filter(pk=newest.pk).update(equated_score=Decimal("14.0"))
    assert "14.0%" in as_it_stands()
    answer = newest.responses.filter(is_correct=True).order_by("position").first()
    Response.objects.filter(pk=answer.pk).update(is_correct=False)
    corrected = as_it_stands()
    session = client.session
    session["time_zone"] = "Pacific/Kiritimati"  # UTC+14: every date moves
    session.save()
    assert as_it_stands() != corrected
    as_it_stands(url + "&page=2")
    attempt_start(user=learner, exam=exam)  # a mock running: what its questions would tell is held
    assert "held" in as_it_stands()
