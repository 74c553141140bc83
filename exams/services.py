"""Workflows that span several models: drawing an attempt, grading it, ending it."""
import random
import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta

from django.core.exceptions import EmptyResultSet
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, DateTimeField, ExpressionWrapper, Prefetch, Q
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import Profile
from exams import grading, sampling, schedule
from exams.models import (
    Attempt,
    AttemptMode,
    Choice,
    Dispute,
    Domain,
    Erratum,
    ErratumSource,
    ErratumStatus,
    Exam,
    Question,
    QuestionVersion,
    Response,
    ReviewItem,
)


class StartRefused(Exception):
    """The attempt cannot be drawn; the message says why in the learner's words."""


@dataclass(frozen=True)
class Started:
    attempt: Attempt
    created: bool
    # Set when fewer questions were available than asked for (drills, practice).
    asked: int | None = None


# Untimed sessions default to this many questions.
SESSION_SIZE = 10
# A review session takes at most this many due questions at once.
REVIEW_SESSION_MAX = 50


def attempt_start(
    *,
    user,
    exam: Exam,
    mode: str = AttemptMode.MOCK,
    domain: Domain | None = None,
    count: int | None = None,
    seed: int | None = None,
    question_ids: list[int] | None = None,
) -> Started:
    """Draw a new attempt, or hand back the one already in progress for this exam and mode.

    `question_ids` makes a practice of exactly those questions (the active ones among them),
    as "Practise the ones I got wrong" does.
    """
    existing = Attempt.objects.in_progress().filter(user=user, exam=exam, mode=mode).first()
    if existing is not None:
        return Started(existing, created=False)
    if mode != AttemptMode.MOCK and Attempt.objects.in_progress().filter(user=user, exam=exam, mode=AttemptMode.MOCK).exists():
        # Checking answers shows keys, which would give away the running mock's questions.
        raise StartRefused(
            f"You have a timed mock of {exam.code} running. Finish or submit it before practising: "
            "practice shows keys and explanations."
        )
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    if question_ids is not None:
        if mode != AttemptMode.PRACTICE:
            raise ValueError("chosen questions make a practice session")
        wanted = set(Question.objects.active().filter(exam=exam, pk__in=question_ids).values_list("pk", flat=True))
        question_ids = [pk for pk in question_ids if pk in wanted]
        if not question_ids:
            raise StartRefused("None of these questions is in the bank any more: there is nothing to practise.")
        count = len(question_ids)
    elif mode == AttemptMode.MOCK:
        question_ids = _mock_questions(user=user, exam=exam, rng=rng)
    elif mode == AttemptMode.REVIEW:
        question_ids = _due_questions(user=user, exam=exam, rng=rng)
    else:
        if mode == AttemptMode.DRILL and domain is None:
            raise StartRefused("A drill needs a domain: pick one.")
        question_ids = _session_questions(user=user, exam=exam, domain=domain, count=count or SESSION_SIZE, rng=rng)
    try:
        with transaction.atomic():
            attempt = _create(user=user, exam=exam, mode=mode, domain=domain, question_ids=question_ids, rng=rng)
    except IntegrityError:
        # Another tab started the same attempt at the same moment: use that one.
        existing = Attempt.objects.in_progress().filter(user=user, exam=exam, mode=mode).first()
        if existing is None:
            raise
        return Started(existing, created=False)
    asked = count or SESSION_SIZE
    short = mode in (AttemptMode.PRACTICE, AttemptMode.DRILL) and len(question_ids) < asked
    return Started(attempt, created=True, asked=asked if short else None)


def _mock_questions(*, user, exam: Exam, rng: random.Random) -> list[int]:
    domains = list(exam.domains.all())
    pool: dict[int, list[int]] = defaultdict(list)
    groups: dict[int, str] = {}
    for question_id, domain_id, group in Question.objects.active().filter(exam=exam).values_list(
        "pk", "domain_id", "exclusion_group"
    ):
        pool[domain_id].append(question_id)
        if group:
            groups[question_id] = group
    quotas = sampling.quotas(
        domains=[sampling.DomainQuota(domain_id=d.pk, weight=d.weight, order=d.order) for d in domains],
        total=exam.question_count,
    )
    seen = set(
        Response.objects.filter(attempt__user=user, attempt__exam=exam, attempt__mode=AttemptMode.MOCK)
        .order_by()  # the default ordering would drag the attempt's columns into the DISTINCT
        .values_list("question_id", flat=True)
        .distinct()
    )
    try:
        slots = sampling.draw(pool=pool, quotas=quotas, seen=seen, rng=rng, groups=groups)
    except sampling.BankTooSmall as short:
        names = {d.pk: d.name for d in domains}
        details = "; ".join(
            f"{names[domain_id]} needs {needed}, has {available}" for domain_id, needed, available in short.shortfalls
        )
        raise StartRefused(
            f"This exam cannot be drawn yet: its question bank is too small ({details}). "
            "Ask an instructor to add questions."
        ) from None
    return [question_id for _, question_id in slots]


def _session_questions(*, user, exam: Exam, domain: Domain | None, count: int, rng: random.Random) -> list[int]:
    """Up to `count` questions, those the learner has never answered first."""
    if count < 1:
        raise StartRefused("Ask for at least one question.")
    questions = Question.objects.active().filter(exam=exam)
    if domain is not None:
        questions = questions.filter(domain=domain)
    rows = list(questions.values_list("pk", "exclusion_group"))
    groups = {pk: group for pk, group in rows if group}
    available = sorted(pk for pk, _ in rows)
    if not available:
        where = f"the {domain.name} domain" if domain else exam.code
        raise StartRefused(f"There are no questions in {where} yet.")
    answered = set(
        Response.objects.filter(attempt__user=user, question_id__in=available, answered_at__isnull=False)
        .order_by()
        .values_list("question_id", flat=True)
        .distinct()
    )
    fresh = [pk for pk in available if pk not in answered]
    again = [pk for pk in available if pk in answered]
    rng.shuffle(fresh)
    rng.shuffle(again)
    return sampling.one_per_group(fresh + again, groups)[:count]


def due_count(*, user, exam: Exam) -> int:
    """How many questions of this exam are due for review today."""
    return ReviewItem.objects.filter(
        user=user, question__exam=exam, question__is_active=True, due_on__lte=learner_today(user=user)
    ).count()


def _due_questions(*, user, exam: Exam, rng: random.Random) -> list[int]:
    today = learner_today(user=user)
    due_items = (
        ReviewItem.objects.filter(user=user, question__exam=exam, question__is_active=True, due_on__lte=today)
        .order_by("due_on", "box", "pk")
        .values_list("question_id", "question__exclusion_group")
    )
    groups = {question_id: group for question_id, group in due_items if group}
    # Two due questions of one group wait their turn: the next review session takes the other.
    due = sampling.one_per_group([question_id for question_id, _ in due_items], groups)[:REVIEW_SESSION_MAX]
    if not due:
        raise StartRefused("Nothing is due for review today. Mistakes from your mocks and practice come back here.")
    rng.shuffle(due)
    return due


def _create(*, user, exam: Exam, mode: str, domain: Domain | None, question_ids: list[int], rng: random.Random) -> Attempt:
    questions = Question.objects.filter(pk__in=question_ids).prefetch_related(
        Prefetch("choices", queryset=Choice.objects.order_by("order", "pk"))
    )
    by_id = {question.pk: question for question in questions}
    versions = QuestionVersion.objects.current_for(by_id.values())
    limit = None
    if mode == AttemptMode.MOCK:
        factor = Profile.objects.for_user(user).accommodation_factor
        limit = timedelta(minutes=float(exam.time_limit_minutes * factor))
    attempt = Attempt.objects.create(
        user=user,
        exam=exam,
        mode=mode,
        domain=domain,
        # The deadline comes from the database clock, which every web server shares.
        deadline=ExpressionWrapper(Now() + limit, output_field=DateTimeField()) if limit else None,
    )
    attempt.refresh_from_db(fields=["started_at", "deadline"])
    Response.objects.bulk_create(
        Response(
            attempt=attempt,
            position=position,
            question_id=question_id,
            domain_id=by_id[question_id].domain_id,
            version=versions[question_id],
            choice_order=sampling.shuffle_choices(
                choice_ids=[choice.pk for choice in by_id[question_id].choices.all()],
                keep_order=by_id[question_id].keep_order,
                rng=rng,
            ),
        )
        for position, question_id in enumerate(question_ids, start=1)
    )
    return attempt


def learner_today(*, user) -> date:
    """The learner's calendar date in their own time zone (review due dates use it)."""
    return schedule.local_today(now=timezone.now(), tz_name=Profile.objects.for_user(user).time_zone)


def update_schedule(*, user, results: dict[int, bool], in_review: bool) -> None:
    """Move each answered question through the Leitner boxes (exams.schedule) in a few queries."""
    if not results:
        return
    today = learner_today(user=user)
    items = {item.question_id: item for item in ReviewItem.objects.filter(user=user, question_id__in=results)}
    to_save, to_delete = [], []
    for question_id, right in results.items():
        item = items.get(question_id)
        state = schedule.ReviewState(box=item.box, due_on=item.due_on) if item else None
        after = schedule.after_answer(state=state, right=right, in_review=in_review, today=today)
        if after is None:
            if item is not None:
                to_delete.append(item.pk)
        elif after != state:
            to_save.append(ReviewItem(user=user, question_id=question_id, box=after.box, due_on=after.due_on))
    if to_delete:
        ReviewItem.objects.filter(pk__in=to_delete).delete()
    if to_save:
        ReviewItem.objects.bulk_create(
            to_save,
            update_conflicts=True,
            unique_fields=["user", "question"],
            update_fields=["box", "due_on", "updated_at"],
        )


def attempt_check(*, attempt: Attempt, response: Response) -> bool | None:
    """Practice: grade one answer now and lock it (the caller holds the attempt's row lock).

    Returns whether it was right (None for a voided question). The session ends by itself
    once every question is checked.
    """
    selected = frozenset(pick.choice_id for pick in response.picks.all())
    # The last check also grades the whole session, share-locking all its questions: lock
    # them all now, in id order, so this transaction never takes question locks out of
    # order (a draw locking two of them the other way round would deadlock with it).
    _share_questions(attempt.responses.values("question_id"))
    key = confirmed_keys(attempt=attempt, question_ids=[response.question_id])[response.question_id]
    right = None if key.void else grading.is_right(selected=selected, key=key)
    response.is_correct = right
    response.checked_at = timezone.now()
    response.save(update_fields=["is_correct", "checked_at"])
    if right is not None:
        update_schedule(user=attempt.user, results={response.question_id: right}, in_review=attempt.mode == AttemptMode.REVIEW)
    if not attempt.responses.filter(checked_at__isnull=True).exists():
        attempt_finish(attempt=attempt, expired=False)
    return right


def confirmed_keys(*, attempt: Attempt, question_ids) -> dict[int, grading.ItemKey]:
    """The key each question is graded against in this attempt, its confirmed errata folded in order.

    Call it inside the grading transaction: it first takes a share lock on the questions,
    so grading waits for an erratum being confirmed on one of them (exams.regrade holds
    the question's row) and then reads the new key; and a confirmation waits for gradings
    in flight, then regrades them with the rest.
    """
    _share_questions(question_ids)
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
    folded: dict[int, list[grading.ConfirmedErratum]] = defaultdict(list)
    for erratum in errata:
        folded[erratum.question_id].append(confirmed_erratum(erratum))
    return {
        question_id: grading.key_for(
            correct=correct[question_id], errata=folded[question_id], finished_at=attempt.finished_at
        )
        for question_id in question_ids
    }


def confirmed_erratum(erratum: Erratum) -> grading.ConfirmedErratum:
    """A confirmed erratum as grading folds it (prefetch `published_key`)."""
    return grading.ConfirmedErratum(
        policy=grading.Policy(erratum.policy),
        published=frozenset(choice.pk for choice in erratum.published_key.all()),
        decided_at=erratum.decided_at,
    )


def _share_questions(question_ids) -> None:
    """FOR SHARE on these questions (ids, or a queryset of them), in id order.

    Django has no FOR SHARE; SQLite needs none (one writer at a time). Every transaction
    takes its question locks in one statement in id order, so two lockers never wait on
    each other in a ring.
    """
    if connection.vendor != "postgresql":
        return
    questions = Question.objects.filter(pk__in=question_ids).order_by("pk").values("pk")
    try:
        sql, params = questions.query.get_compiler(connection=connection).as_sql()
    except EmptyResultSet:  # no questions: nothing to lock
        return
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} FOR SHARE", params)


def grade_responses(*, attempt: Attempt) -> grading.AttemptGrade:
    """Grade every slot of the attempt, store each result, and schedule the mistakes for review."""
    responses = list(
        attempt.responses.prefetch_related("picks").order_by("position")
    )
    keys = confirmed_keys(attempt=attempt, question_ids={response.question_id for response in responses})
    slots = [
        grading.Slot(
            domain_id=response.domain_id,
            selected=frozenset(pick.choice_id for pick in response.picks.all()),
            key=keys[response.question_id],
        )
        for response in responses
    ]
    grade = grading.grade_attempt(slots=slots, passing_score=attempt.exam.passing_score)
    for response, result in zip(responses, grade.item_results, strict=True):
        response.is_correct = result
    Response.objects.bulk_update(responses, ["is_correct"])
    # Checked practice answers were scheduled when checked; unanswered slots are not answers.
    update_schedule(
        user=attempt.user,
        results={
            response.question_id: response.is_correct
            for response in responses
            if response.answered_at is not None and response.checked_at is None and response.is_correct is not None
        },
        in_review=attempt.mode == AttemptMode.REVIEW,
    )
    return grade


def attempt_finish(*, attempt: Attempt, expired: bool) -> bool:
    """Grade and close the attempt once; the caller holds its row lock.

    Returns False when it was already finished (a second submit, another tab).
    """
    if attempt.is_finished:
        return False
    # Set before grading: errata policies depend on when an attempt finished.
    attempt.finished_at = attempt.end_time(expired=expired)
    attempt.finish(expired=expired, grade=grade_responses(attempt=attempt))
    return True


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
            attempt_finish(attempt=attempt, expired=expired)
    return attempt


def attempt_expire(*, attempt_id: int) -> None:
    """Finish an attempt whose time ran out, under its row lock (as submit and regrade take it)."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().select_related("exam").with_clock().get(pk=attempt_id)
        if not attempt.is_finished:
            attempt_finish(attempt=attempt, expired=True)


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
                finished += attempt_finish(attempt=attempt, expired=True)
    return finished


def domain_results(*, attempts) -> dict[int, dict[int, tuple[int, int]]]:
    """Per attempt, per domain: (right, total), void items left out. One query."""
    rows = (
        Response.objects.filter(attempt__in=attempts)
        .values("attempt_id", "domain_id")
        .annotate(
            right=Count("pk", filter=Q(is_correct=True)),
            total=Count("pk", filter=Q(is_correct__isnull=False)),
        )
        .order_by()
    )
    results: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
    for row in rows:
        results[row["attempt_id"]][row["domain_id"]] = (row["right"], row["total"])
    return results


def dispute_report(*, user, response: Response, choice_id: int | None, reason: str) -> Dispute:
    """File or edit the learner's report on a question; reports gather on its one open erratum."""
    with transaction.atomic():
        erratum = Erratum.objects.filter(question_id=response.question_id, status=ErratumStatus.REPORTED).first()
        if erratum is None:
            try:
                with transaction.atomic():
                    erratum = Erratum.objects.create(
                        question_id=response.question_id, source=ErratumSource.LEARNERS, status=ErratumStatus.REPORTED
                    )
                    # What learners are graded on now is the key the reports dispute.
                    erratum.published_key.set(Choice.objects.filter(question_id=response.question_id, is_correct=True))
            except IntegrityError:
                # Someone else opened it a moment ago: join theirs.
                erratum = Erratum.objects.get(question_id=response.question_id, status=ErratumStatus.REPORTED)
        dispute, _ = Dispute.objects.update_or_create(
            erratum=erratum,
            learner=user,
            defaults={"choice_id": choice_id, "reason": reason, "response": response, "updated_at": timezone.now()},
        )
    return dispute
