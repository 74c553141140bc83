"""Workflows that span several models: drawing an attempt, grading it, ending it."""
import json
import random
import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import EmptyResultSet
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, DateTimeField, ExpressionWrapper, FloatField, OuterRef, Q, Subquery
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import Profile
from exams.letters import choice_label
from exams.models import (
    Attempt,
    AttemptMode,
    Choice,
    Domain,
    Erratum,
    ErratumStatus,
    Exam,
    ItemStatistic,
    Question,
    QuestionVersion,
    Response,
    choice_texts,
)
from exams.room import draw, grading, navigation, reading
from exams.room.access import in_running_mock, running_mock_question_ids
from exams.statistics import equating
from exams.statistics.rasch import LEVEL_OFFSET
from exams.study.reviews import due_cards, mistake_questions, review_of, reviews_record


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
# A review session takes this many questions at most: the learner picks one of these sizes
# (remembered on their profile), 20 until they do.
REVIEW_SESSION_SIZES = (10, 20, 50)
REVIEW_SESSION_SIZE = 20


def attempt_start(
    *,
    user,
    exam: Exam,
    mode: str = AttemptMode.MOCK,
    domain: Domain | None = None,
    count: int | None = None,
    seed: int | None = None,
    question_ids: list[int] | None = None,
    minutes: float | None = None,
    feedback_at_end: bool = False,
    mistakes: bool = False,
) -> Started:
    """Draw a new attempt, or hand back the one already in progress for this exam and mode.

    `question_ids` makes a practice of exactly those questions (the active ones among them),
    as "Practise the ones I got wrong" and the practice builder do. A practice may be timed
    (`minutes`, the learner's accommodation factor already applied) and keep its feedback
    to the end (`feedback_at_end`). A review takes `count` questions (10, 20 or 50): the due
    ones, or with `mistakes` ("Practise my mistakes now") those on a learning step and those
    answered wrong in the last seven days; its answers are reviews like any other.
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
        wanted = set(
            Question.objects.active().filter(exam=exam, pk__in=question_ids)
            .exclude(pk__in=running_mock_question_ids(user)).values_list("pk", flat=True)
        )
        question_ids = [pk for pk in question_ids if pk in wanted]
        if not question_ids:
            raise StartRefused("None of these questions is in the bank any more: there is nothing to practise.")
        count = len(question_ids)
    elif mode == AttemptMode.MOCK:
        question_ids = _mock_questions(user=user, exam=exam, rng=rng)
    elif mode == AttemptMode.REVIEW:
        # The page offers REVIEW_SESSION_SIZES and its form refuses any other (SessionForm).
        size = count or REVIEW_SESSION_SIZE
        if mistakes:
            question_ids = _mistake_questions(user=user, exam=exam, size=size)
        else:
            question_ids = _due_questions(user=user, exam=exam, size=size)
    else:
        if mode == AttemptMode.DRILL and domain is None:
            raise StartRefused("A drill needs a domain: pick one.")
        question_ids = _session_questions(user=user, exam=exam, domain=domain, count=count or SESSION_SIZE, rng=rng)
    try:
        with transaction.atomic():
            attempt = _create(
                user=user, exam=exam, mode=mode, domain=domain, question_ids=question_ids, rng=rng,
                minutes=minutes, feedback_at_end=feedback_at_end,
            )
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
    difficulty: dict[int, float] = {}
    # The calibrated difficulty balances the form (draw.balance); before a calibration, the
    # author's level stands in for it.
    calibrated = ItemStatistic.objects.filter(question=OuterRef("pk"), first_mock_only=False).values("rasch_difficulty")[:1]
    # No ordering: the default one (exam code, domain order) joins two tables for 500 rows.
    for question_id, domain_id, group, level, rasch_difficulty in (
        Question.objects.active().filter(exam=exam).order_by()
        .annotate(rasch=Subquery(calibrated, output_field=FloatField()))
        .values_list("pk", "domain_id", "exclusion_group", "difficulty", "rasch")
    ):
        pool[domain_id].append(question_id)
        if group:
            groups[question_id] = group
        difficulty[question_id] = rasch_difficulty if rasch_difficulty is not None else LEVEL_OFFSET.get(level, 0.0)
    quotas = draw.quotas(
        domains=[draw.DomainQuota(domain_id=d.pk, weight=d.weight, order=d.order) for d in domains],
        total=exam.question_count,
    )
    seen = set(
        Response.objects.filter(attempt__user=user, attempt__exam=exam, attempt__mode=AttemptMode.MOCK)
        .order_by()  # the default ordering would drag the attempt's columns into the DISTINCT
        .values_list("question_id", flat=True)
        .distinct()
    )
    try:
        slots = draw.draw(pool=pool, quotas=quotas, seen=seen, rng=rng, groups=groups, difficulty=difficulty)
    except draw.BankTooSmall as short:
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
    # The key rule: a running mock's questions are not drawn into a session that shows keys.
    questions = Question.objects.active().filter(exam=exam).exclude(pk__in=running_mock_question_ids(user))
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
    return draw.one_per_group(fresh + again, groups)[:count]


def _due_questions(*, user, exam: Exam, size: int) -> list[int]:
    """The due cards' questions, sure-and-wrong first, then most overdue (at most `size`)."""
    cards = list(due_cards(user=user, exam=exam, excluded=running_mock_question_ids(user)))
    groups = {question_id: group for question_id, group in cards if group}
    # Two due questions of one group wait their turn: the next review session takes the other.
    due = draw.one_per_group([question_id for question_id, _ in cards], groups)[:size]
    if not due:
        raise StartRefused("Nothing is due for review now. Questions you answer in mocks and practice come back here.")
    return due


def _mistake_questions(*, user, exam: Exam, size: int) -> list[int]:
    """"Practise my mistakes now": questions on a learning step, then wrong in the last 7 days."""
    rows = mistake_questions(user=user, exam=exam, excluded=running_mock_question_ids(user))
    groups = {question_id: group for question_id, group in rows if group}
    chosen = draw.one_per_group([question_id for question_id, _ in rows], groups)[:size]
    if not chosen:
        raise StartRefused("You have no mistakes to practise: nothing on a learning step and nothing answered wrong in the last 7 days.")
    return chosen


def _create(
    *, user, exam: Exam, mode: str, domain: Domain | None, question_ids: list[int], rng: random.Random,
    minutes: float | None = None, feedback_at_end: bool = False,
) -> Attempt:
    # The choices as plain tuples, not model instances: a mock's 60 questions have ~250.
    choices = choice_texts(question_ids)
    by_id = {question.pk: question for question in Question.objects.filter(pk__in=question_ids).order_by()}
    versions = QuestionVersion.objects.current_for(by_id.values(), choices=choices)
    limit = None
    if mode == AttemptMode.MOCK:
        # Read, not made: a learner without a profile yet has the default factor (1.00).
        factor = Profile.objects.filter(user=user).values_list("accommodation_factor", flat=True).first()
        factor = Profile._meta.get_field("accommodation_factor").default if factor is None else factor
        limit = timedelta(minutes=float(exam.time_limit_minutes * factor))
    elif minutes is not None:
        limit = timedelta(minutes=minutes)
    attempt = Attempt.objects.create(
        user=user,
        exam=exam,
        mode=mode,
        domain=domain,
        feedback_at_end=feedback_at_end,
        # The deadline comes from the database clock, which every web server shares.
        deadline=ExpressionWrapper(Now() + limit, output_field=DateTimeField()) if limit else None,
    )
    if not isinstance(attempt.started_at, datetime) or (limit and not isinstance(attempt.deadline, datetime)):
        # Django reads both back with the INSERT (RETURNING) where the database can.
        attempt.refresh_from_db(fields=["started_at", "deadline"])
    _insert_slots(attempt, [
        (position, question_id, by_id[question_id].domain_id, versions[question_id].pk, draw.shuffle_choices(
            choice_ids=[choice.pk for choice in choices[question_id]], keep_order=by_id[question_id].keep_order, rng=rng,
        ))
        for position, question_id in enumerate(question_ids, start=1)
    ])
    return attempt


INSERT_SLOTS = """
INSERT INTO exams_response (attempt_id, position, question_id, domain_id, version_id, choice_order, flagged)
SELECT %(attempt)s, position, question_id, domain_id, version_id, choice_order::jsonb, false
FROM unnest(%(positions)s::smallint[], %(questions)s::bigint[], %(domains)s::bigint[], %(versions)s::bigint[],
            %(orders)s::text[]) AS slot (position, question_id, domain_id, version_id, choice_order)
"""


def _insert_slots(attempt: Attempt, slots: list[tuple[int, int, int, int, list[int]]]) -> None:
    """An attempt's slots (position, question, domain, version, choice order): on PostgreSQL
    one INSERT of arrays, which costs a 60-slot draw a third of the CPU bulk_create did
    (building and adapting 60 model instances); bulk_create elsewhere."""
    if connection.vendor != "postgresql":
        Response.objects.bulk_create(
            Response(attempt=attempt, position=position, question_id=question_id, domain_id=domain_id,
                     version_id=version_id, choice_order=order)
            for position, question_id, domain_id, version_id, order in slots
        )
        return
    positions, questions, domains, versions, orders = zip(*slots) if slots else ((),) * 5
    with connection.cursor() as cursor:
        cursor.execute(INSERT_SLOTS, {
            "attempt": attempt.pk, "positions": list(positions), "questions": list(questions), "domains": list(domains),
            "versions": list(versions), "orders": [json.dumps(order) for order in orders],
        })


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
    review = review_of(response, at=response.checked_at)
    if review is not None:
        reviews_record(user=attempt.user, reviews=[review])
    if not attempt.responses.filter(checked_at__isnull=True).exists():
        attempt_finish(attempt=attempt, expired=False)
    return right


def confirmed_keys(*, attempt: Attempt, question_ids) -> dict[int, grading.ItemKey]:
    """The key each question is graded against in this attempt, its confirmed errata folded in order.

    Call it inside the grading transaction: it first takes a share lock on the questions,
    so grading waits for an erratum being confirmed on one of them (exams.bank.errata.regrade holds
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
    """Grade every slot of the attempt, store each result, and review the answered ones (FSRS)."""
    responses = list(
        attempt.responses.prefetch_related("picks", "strikes").order_by("position")
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
    # Checked practice answers were reviewed when checked; the rest are reviews at the finish.
    reviews = [
        review_of(response, at=attempt.finished_at) for response in responses if response.checked_at is None
    ]
    reviews_record(user=attempt.user, reviews=[review for review in reviews if review is not None])
    return grade


def attempt_finish(*, attempt: Attempt, expired: bool) -> bool:
    """Grade and close the attempt once; the caller holds its row lock.

    Returns False when it had already ended (a second submit, another tab, an abandoned practice).
    """
    if attempt.has_ended:
        return False
    # Set before grading: errata policies depend on when an attempt finished.
    attempt.finished_at = attempt.end_time(expired=expired)
    attempt.finish(expired=expired, grade=grade_responses(attempt=attempt))
    if attempt.mode == AttemptMode.MOCK:
        # Frozen from the difficulties as they stand now (a later calibration leaves it be).
        equating.equate_mocks(exam=attempt.exam, attempts=Attempt.objects.filter(pk=attempt.pk))
    return True


# The page's countdown may reach zero a moment before the server's clock does.
CLOCK_TOLERANCE = timedelta(seconds=5)


def attempt_submit(*, user, attempt_id: int, timed_out: bool = False) -> Attempt:
    """End the learner's attempt; a submit at or after the deadline records it as expired.

    Idempotent: a second submit (double click, another tab) waits for the row lock and
    finds the attempt already graded.
    """
    from exams.room.access import owned_attempt

    with transaction.atomic():
        attempt = owned_attempt(user, attempt_id, for_update=True, with_clock=True)
        if not attempt.has_ended:
            deadline = attempt.deadline
            expired = deadline is not None and (
                attempt.db_now >= deadline or (timed_out and attempt.db_now >= deadline - CLOCK_TOLERANCE)
            )
            attempt_finish(attempt=attempt, expired=expired)
    return attempt


def attempt_abandon(*, user, attempt_id: int) -> Attempt:
    """End the learner's running practice without submitting it ("End it and start this one").

    It becomes abandoned: no score, and only the answers already checked were reviews. A
    timed practice whose time has run out is expired instead, graded as a submit then is.
    Idempotent, like a submit: an attempt that has ended is left as it is.
    """
    from exams.room.access import owned_attempt

    with transaction.atomic():
        attempt = owned_attempt(user, attempt_id, for_update=True, with_clock=True)
        if attempt.has_ended:
            return attempt
        if attempt.deadline is not None and attempt.db_now >= attempt.deadline:
            attempt_finish(attempt=attempt, expired=True)
        else:
            attempt.abandon()
    return attempt


def attempt_expire(*, attempt_id: int) -> None:
    """Finish an attempt whose time ran out, under its row lock (as submit and regrade take it)."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().select_related("exam").with_clock().get(pk=attempt_id)
        if not attempt.has_ended:
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
            if attempt is not None and not attempt.has_ended:
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


def asks_certainty(attempt: Attempt) -> bool:
    """Whether this attempt's page asks "How sure are you?": practice, drills and reviews always,
    a mock when the learner's profile says so (`attempt.ask_certainty_in_mocks`, read with it)."""
    return attempt.mode != AttemptMode.MOCK or bool(getattr(attempt, "ask_certainty_in_mocks", False))


class SlotRefused(Exception):
    """An answer the learner can put right (a struck-out pick, a locked or empty check); the message says how."""


@dataclass(frozen=True)
class SlotSaved:
    """What a save did: where to go next, and the slot's state for its navigator button."""

    go: int | str | None
    target: int
    walk: str
    checked: bool
    item: dict


def slot_save(*, user, attempt: Attempt, response: Response, answer: dict, carries_answer: bool, slot_count: int) -> SlotSaved:
    """Save one slot's answer, strike-outs and flag, check it (practice), and move the resume point.

    `answer` is AnswerForm's cleaned data; `carries_answer` says the post sends the answer
    itself (the page's answer=1, or choices), so a flag or a move alone never clears one.
    The caller holds the attempt's row lock. Raises SlotRefused before anything is written.
    """
    order = response.choice_order
    picks = [order[index - 1] for index in answer["choice"]]
    struck_before = {strike.choice_id for strike in response.strikes.all()}
    if answer["struck_sent"]:
        struck = {order[index - 1] for index in answer["struck"]}
    elif answer["strike"]:
        struck = struck_before ^ {order[answer["strike"] - 1]}
    else:
        struck = struck_before
    if set(picks) & struck & struck_before:
        letters = ", ".join(choice_label(order.index(pk)) for pk in sorted(set(picks) & struck & struck_before, key=order.index))
        raise SlotRefused(f"You struck out {letters}: restore it before picking it.")
    # Striking out a picked choice removes the pick.
    picks = [pk for pk in picks if pk not in struck]
    check, flag, go = answer["check"], answer["flag"], answer["go"]
    current_picks = sorted(pick.choice_id for pick in response.picks.all())
    was_checked = response.checked_at is not None
    # "How sure are you?": saved with the pick, refused (before anything is written) once
    # the answer is checked, and in a mock whose learner has not asked for it.
    certainty = answer.get("certainty") or None
    if certainty is not None and certainty != response.certainty:
        if was_checked:
            raise SlotRefused("You already checked this answer, so how sure you were can no longer change.")
        if not asks_certainty(attempt):
            raise SlotRefused("This mock does not ask how sure you are: turn it on in your profile for your next mock.")
        response.certainty = certainty
    else:
        certainty = None
    if was_checked:
        # A checked answer is locked; flags, strike-outs and moving on are still allowed,
        # and checking it again with the same picks (a retried request) changes nothing.
        if carries_answer and sorted(picks) != current_picks:
            raise SlotRefused("You already checked this answer, so it can no longer change.")
        check = False
    else:
        if not carries_answer:
            picks = [pk for pk in current_picks if pk not in struck]
        if check and not picks:
            raise SlotRefused("Pick an answer before checking it.")
        choose = response.question.choose
        if check and len(picks) < choose:
            # Graded now it would be wrong for a missing pick, not a wrong one: say so instead.
            raise SlotRefused(f"This question asks you to choose {choose}: pick {choose - len(picks)} more before checking it.")
        if check and in_running_mock(user, response.question_id):
            # Checking shows the key: not while the same question waits in a timed mock.
            raise SlotRefused("This question is also in your timed mock, which is still running: check it after the mock ends.")
        # A new pick and its certainty in one UPDATE of the slot's row.
        if attempt.record_answer(response=response, choice_ids=picks, also=("certainty",) if certainty else ()):
            certainty = None
    if struck != struck_before:
        attempt.record_strikes(response=response, choice_ids=struck)
    if flag or certainty:
        if flag:
            response.flagged = (not response.flagged) if flag == "toggle" else flag == "on"
        response.save(update_fields=[name for name, changed in (("flagged", flag), ("certainty", certainty)) if changed])
    if check:
        attempt_check(attempt=attempt, response=response)
    walk = answer["walk"]
    walked = navigation.walk_positions(reading.navigator_by_orm(attempt), walk) if walk and go in ("next", "prev") else None
    target = navigation.go_target(go, response.position, slot_count, walk=walked)
    if target == "review":
        go, target = "review", response.position
    # Only a move moves the resume point: a late save of the slot just left must not.
    if go is not None and target != attempt.last_position and not attempt.is_finished:
        Attempt.objects.filter(pk=attempt.pk).update(last_position=target)
    item = {
        "position": response.position,
        "answered": bool(picks) if not was_checked else bool(current_picks),
        "incomplete": 0 < len(picks) < response.question.choose,
        "flagged": response.flagged,
    }
    return SlotSaved(go=go, target=target, walk=walk, checked=check, item=item)
