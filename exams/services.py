"""Workflows that span several models: drawing an attempt, grading it, ending it."""
import random
import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, DateTimeField, ExpressionWrapper, Prefetch, Q
from django.db.models.functions import Now

from accounts.models import Profile
from exams import grading, sampling
from exams.models import (
    Attempt,
    AttemptMode,
    Choice,
    Erratum,
    ErratumStatus,
    Exam,
    Question,
    QuestionVersion,
    Response,
)


class StartRefused(Exception):
    """The attempt cannot be drawn; the message says why in the learner's words."""


@dataclass(frozen=True)
class Started:
    attempt: Attempt
    created: bool


def attempt_start(*, user, exam: Exam, mode: str = AttemptMode.MOCK, seed: int | None = None) -> Started:
    """Draw a new attempt, or hand back the one already in progress for this exam and mode."""
    existing = Attempt.objects.in_progress().filter(user=user, exam=exam, mode=mode).first()
    if existing is not None:
        return Started(existing, created=False)
    try:
        with transaction.atomic():
            attempt = _draw(user=user, exam=exam, mode=mode, rng=random.Random(seed if seed is not None else secrets.randbits(64)))
    except IntegrityError:
        # Another tab started the same attempt at the same moment: use that one.
        existing = Attempt.objects.in_progress().filter(user=user, exam=exam, mode=mode).first()
        if existing is None:
            raise
        return Started(existing, created=False)
    return Started(attempt, created=True)


def _draw(*, user, exam: Exam, mode: str, rng: random.Random) -> Attempt:
    domains = list(exam.domains.all())
    pool: dict[int, list[int]] = defaultdict(list)
    for question_id, domain_id in Question.objects.active().filter(exam=exam).values_list("pk", "domain_id"):
        pool[domain_id].append(question_id)
    quotas = sampling.quotas(
        domains=[sampling.DomainQuota(domain_id=d.pk, weight=d.weight, order=d.order) for d in domains],
        total=exam.question_count,
    )
    seen = set(
        Response.objects.filter(attempt__user=user, attempt__exam=exam, attempt__mode=AttemptMode.MOCK)
        .values_list("question_id", flat=True)
        .distinct()
    )
    try:
        slots = sampling.draw(pool=pool, quotas=quotas, seen=seen, rng=rng)
    except sampling.BankTooSmall as short:
        names = {d.pk: d.name for d in domains}
        details = "; ".join(
            f"{names[domain_id]} needs {needed}, has {available}" for domain_id, needed, available in short.shortfalls
        )
        raise StartRefused(
            f"This exam cannot be drawn yet: its question bank is too small ({details}). "
            "Ask an instructor to add questions."
        ) from None

    questions = Question.objects.filter(pk__in=[question_id for _, question_id in slots]).prefetch_related(
        Prefetch("choices", queryset=Choice.objects.order_by("order", "pk"))
    )
    by_id = {question.pk: question for question in questions}
    versions = QuestionVersion.objects.current_for(by_id.values())

    factor = Profile.objects.for_user(user).accommodation_factor
    limit = timedelta(minutes=float(exam.time_limit_minutes * factor)) if mode == AttemptMode.MOCK else None
    attempt = Attempt.objects.create(
        user=user,
        exam=exam,
        mode=mode,
        deadline=ExpressionWrapper(Now() + limit, output_field=DateTimeField()) if limit else None,
    )
    attempt.refresh_from_db(fields=["started_at", "deadline"])
    Response.objects.bulk_create(
        Response(
            attempt=attempt,
            position=position,
            question_id=question_id,
            version=versions[question_id],
            choice_order=sampling.shuffle_choices(
                choice_ids=[choice.pk for choice in by_id[question_id].choices.all()],
                keep_order=by_id[question_id].keep_order,
                rng=rng,
            ),
        )
        for position, (_, question_id) in enumerate(slots, start=1)
    )
    return attempt


def confirmed_keys(*, attempt: Attempt, question_ids) -> dict[int, grading.ItemKey]:
    """The key each question is graded against in this attempt, confirmed errata applied."""
    correct: dict[int, set[int]] = defaultdict(set)
    for question_id, choice_id in Choice.objects.filter(question_id__in=question_ids, is_correct=True).values_list(
        "question_id", "pk"
    ):
        correct[question_id].add(choice_id)
    errata = (
        Erratum.objects.filter(question_id__in=question_ids, status=ErratumStatus.CONFIRMED)
        .order_by("question_id", "decided_at", "pk")
        .prefetch_related("published_key")
    )
    latest = {erratum.question_id: erratum for erratum in errata}
    keys = {}
    for question_id in question_ids:
        erratum = latest.get(question_id)
        finished_before = bool(
            erratum and attempt.finished_at and erratum.decided_at and attempt.finished_at < erratum.decided_at
        )
        keys[question_id] = grading.key_for(
            correct=correct[question_id],
            published=[choice.pk for choice in erratum.published_key.all()] if erratum else None,
            policy=grading.Policy(erratum.policy) if erratum else None,
            finished_before_confirmation=finished_before,
        )
    return keys


def grade_responses(*, attempt: Attempt) -> grading.AttemptGrade:
    """Grade every slot of the attempt and store each response's result."""
    responses = list(
        attempt.responses.select_related("question").prefetch_related("picks").order_by("position")
    )
    keys = confirmed_keys(attempt=attempt, question_ids={response.question_id for response in responses})
    slots = [
        grading.Slot(
            domain_id=response.question.domain_id,
            selected=frozenset(pick.choice_id for pick in response.picks.all()),
            key=keys[response.question_id],
        )
        for response in responses
    ]
    grade = grading.grade_attempt(slots=slots, passing_score=attempt.exam.passing_score)
    for response, result in zip(responses, grade.item_results, strict=True):
        response.is_correct = result
    Response.objects.bulk_update(responses, ["is_correct"])
    return grade


# The page's countdown may reach zero a moment before the server's clock does.
CLOCK_TOLERANCE = timedelta(seconds=5)


def attempt_submit(*, user, attempt_id: int, timed_out: bool = False) -> Attempt:
    """End the learner's attempt; a submit at or after the deadline records it as expired.

    Idempotent: a second submit (double click, another tab) waits for the row lock and
    finds the attempt already graded.
    """
    from exams.access import owned_attempt

    with transaction.atomic():
        attempt = owned_attempt(user, attempt_id, for_update=True, with_clock=True)
        if not attempt.is_finished:
            deadline = attempt.deadline
            expired = deadline is not None and (
                attempt.db_now >= deadline or (timed_out and attempt.db_now >= deadline - CLOCK_TOLERANCE)
            )
            attempt.finish(expired=expired)
    return attempt


def finalize_expired(*, user=None) -> int:
    """Finish every attempt past its deadline and grace (one learner's, or everyone's)."""
    candidates = Attempt.objects.past_grace()
    if user is not None:
        candidates = candidates.filter(user=user)
    finished = 0
    for attempt_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            # skip_locked: an attempt being submitted right now is that request's to finish.
            attempt = Attempt.objects.select_for_update(skip_locked=True).select_related("exam").filter(pk=attempt_id).first()
            if attempt is not None and not attempt.is_finished:
                finished += attempt.finish(expired=True)
    return finished


def domain_results(*, attempts) -> dict[int, dict[int, tuple[int, int]]]:
    """Per attempt, per domain: (right, total), void items left out. One query."""
    rows = (
        Response.objects.filter(attempt__in=attempts)
        .values("attempt_id", "question__domain_id")
        .annotate(
            right=Count("pk", filter=Q(is_correct=True)),
            total=Count("pk", filter=Q(is_correct__isnull=False)),
        )
        .order_by()
    )
    results: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
    for row in rows:
        results[row["attempt_id"]][row["question__domain_id"]] = (row["right"], row["total"])
    return results
