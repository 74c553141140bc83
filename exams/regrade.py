"""Confirming or rejecting an erratum, and regrading every finished attempt in set-based SQL."""
from collections.abc import Iterable
from contextlib import contextmanager
from datetime import UTC, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    DecimalField,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Now
from django.db.models.lookups import Exact, GreaterThan, GreaterThanOrEqual

from exams.models import (
    Attempt,
    Choice,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    Exam,
    Question,
    QuestionKind,
    RegradeChange,
    RegradeEvent,
    Response,
    ResponseChoice,
    ReviewItem,
)


def erratum_confirm(
    *,
    erratum: Erratum,
    policy: str,
    corrected_choice_ids: Iterable[int] | None,
    user: AbstractBaseUser | None = None,
    note: str | None = None,
) -> RegradeEvent:
    """Set the corrected key, confirm the erratum with a policy and regrade past attempts.

    For a void item `corrected_choice_ids` may be empty: the current key is kept.
    Raises ValueError (changing nothing) for an unknown policy, a key that does not fit
    the question, or an erratum that was already decided.
    """
    if policy not in ErratumPolicy.values:
        raise ValueError(f"unknown erratum policy {policy!r}; expected one of {', '.join(ErratumPolicy.values)}")
    policy = ErratumPolicy(policy)
    with transaction.atomic():
        question = _lock_question(question_id=erratum.question_id)
        erratum = Erratum.objects.select_for_update().get(pk=erratum.pk)
        if erratum.status != ErratumStatus.REPORTED:
            raise ValueError(f"this erratum was already {erratum.get_status_display().lower()}; only a reported one can be confirmed")
        key = _validated_key(question=question, choice_ids=corrected_choice_ids, policy=policy)
        Choice.objects.filter(question=question).update(
            is_correct=Case(When(pk__in=key, then=Value(True)), default=Value(False))
        )
        decision = {"status": ErratumStatus.CONFIRMED, "policy": policy, "decided_at": Now(), "decided_by": user}
        if note is not None:
            decision["note"] = note
        Erratum.objects.filter(pk=erratum.pk).update(**decision)
        erratum.refresh_from_db()
        if policy == ErratumPolicy.VOID:
            Question.objects.filter(pk=question.pk).update(is_active=False)
        published = _published_key(erratum=erratum)
        event = _regrade_locked(question=question, erratum=erratum, key=key, published=published, user=user)
        if policy != ErratumPolicy.VOID and published and published != key:
            _schedule_review(question=question, erratum=erratum, picked=published)
    return event


def erratum_reject(*, erratum: Erratum, user: AbstractBaseUser | None = None, note: str) -> Erratum:
    """Close a reported erratum without changing the key; nothing is regraded."""
    if not note or not note.strip():
        raise ValueError("a rejection needs a note saying why the key stands")
    with transaction.atomic():
        erratum = Erratum.objects.select_for_update().get(pk=erratum.pk)
        if erratum.status != ErratumStatus.REPORTED:
            raise ValueError(f"this erratum was already {erratum.get_status_display().lower()}; only a reported one can be rejected")
        Erratum.objects.filter(pk=erratum.pk).update(
            status=ErratumStatus.REJECTED, decision_note=note, decided_at=Now(), decided_by=user
        )
        erratum.refresh_from_db()
    return erratum


def regrade_question(*, question: Question, user: AbstractBaseUser | None = None) -> RegradeEvent:
    """Regrade every finished attempt holding the question under its latest confirmed erratum.

    Safe to run again: once the stored grades agree with the key and policy, a second
    run records an event with nothing changed.
    """
    with transaction.atomic():
        question = _lock_question(question_id=question.pk)
        erratum = _latest_confirmed(question=question)
        if erratum is None:
            raise ValueError(f"question {question.pk} has no confirmed erratum to regrade by")
        key = frozenset(Choice.objects.filter(question=question, is_correct=True).order_by().values_list("pk", flat=True))
        return _regrade_locked(
            question=question, erratum=erratum, key=key, published=_published_key(erratum=erratum), user=user
        )


def score_changes_for(
    *, user: AbstractBaseUser, attempt: Attempt | None = None, limit: int = 20
) -> list[RegradeChange]:
    """The learner's latest score changes caused by errata, newest first, in one query.

    Each change comes with `event.erratum.question` (its title names the correction)
    and `attempt.exam` loaded.
    """
    changes = RegradeChange.objects.filter(attempt__user=user)
    if attempt is not None:
        changes = changes.filter(attempt=attempt)
    return list(
        changes.select_related("event__erratum__question", "attempt__exam").order_by(
            "-event__created_at", "-event_id", "attempt_id"
        )[:limit]
    )


def _lock_question(*, question_id: int) -> Question:
    # Grading takes a share lock on its questions before reading their keys
    # (exams.services.confirmed_keys), so this lock waits for gradings in flight, and
    # gradings that start later wait for the regrade and read the new key: no attempt is
    # half-graded with the old key while we regrade, without locking each of the
    # (possibly 100,000) attempts that hold the question. The lock is NO KEY UPDATE: a
    # submit that files a review item (a foreign key to the question) takes a KEY SHARE
    # lock on it, which a plain FOR UPDATE would block.
    return Question.objects.select_for_update(no_key=True).get(pk=question_id)


def _latest_confirmed(*, question: Question) -> Erratum | None:
    # The same erratum exams.services.confirmed_keys grades new submissions by.
    return (
        Erratum.objects.filter(question=question, status=ErratumStatus.CONFIRMED)
        .order_by("-decided_at", "-pk")
        .first()
    )


def _published_key(*, erratum: Erratum) -> frozenset[int]:
    return frozenset(erratum.published_key.order_by().values_list("pk", flat=True))


def _validated_key(*, question: Question, choice_ids: Iterable[int] | None, policy: str) -> frozenset[int]:
    """The corrected key, checked against the question; a void item may keep its current key."""
    choices = dict(Choice.objects.filter(question=question).order_by().values_list("pk", "is_correct"))
    key = frozenset(int(pk) for pk in (choice_ids or ()))
    if not key and policy == ErratumPolicy.VOID:
        return frozenset(pk for pk, is_correct in choices.items() if is_correct)
    foreign = key - choices.keys()
    if foreign:
        raise ValueError(f"choices {sorted(foreign)} are not choices of question {question.pk}")
    needed = 1 if question.kind == QuestionKind.SINGLE else question.choose
    if len(key) != needed:
        kind = "a single-answer" if question.kind == QuestionKind.SINGLE else "this multiple-answer"
        raise ValueError(f"{kind} question needs exactly {needed} correct choice(s), got {len(key)}")
    return key


def _selection_is(key: frozenset[int]) -> Q:
    """The response's picks are exactly `key` (a response correlated as OuterRef("pk"))."""
    picks = ResponseChoice.objects.filter(response=OuterRef("pk"))
    condition = ~Exists(picks.exclude(choice_id__in=key))
    for choice_id in sorted(key):
        condition &= Exists(picks.filter(choice_id=choice_id))
    return Q(condition)


def _count_other_responses(*, question: Question, **conditions) -> Coalesce:
    """The response's attempt's count of its other slots meeting `conditions`."""
    per_attempt = (
        Response.objects.filter(attempt=OuterRef("attempt_id"), **conditions)
        .exclude(question=question)
        .order_by()
        .values("attempt")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(per_attempt, output_field=IntegerField()), Value(0))


class _HundredthsToPercent(Func):
    # A literal 100.0 is numeric on PostgreSQL (exact) and real on SQLite (correctly
    # rounded, so it reads back as the same two-decimal value); a parameter would not be.
    template = "(%(expressions)s / 100.0)"
    output_field = DecimalField(max_digits=5, decimal_places=2)


def _new_score(*, right=F("right_count"), total=F("total_count")) -> Case:
    """exams.grading.score_percent in SQL: 100·right/total, two places, halves up, exactly."""
    hundredths = ExpressionWrapper((right * 20000 + total) / (total * 2), output_field=IntegerField())
    return Case(
        When(Exact(total, 0), then=Value(0)),
        default=_HundredthsToPercent(hundredths),
        output_field=DecimalField(max_digits=5, decimal_places=2),
    )


def _new_passed(*, right=F("right_count"), total=F("total_count"), exam_id=OuterRef("exam_id")) -> Case:
    """exams.grading.is_passed in SQL: right·100 ≥ passing·total on the exact ratio."""
    passing = Subquery(Exam.objects.filter(pk=exam_id).order_by().values("passing_score"))
    reaches = GreaterThanOrEqual(
        ExpressionWrapper(right * 100, output_field=IntegerField()),
        ExpressionWrapper(passing * total, output_field=IntegerField()),
    )
    return Case(
        When(GreaterThan(total, 0) & Q(reaches), then=Value(True)),
        default=Value(False),
        output_field=BooleanField(),
    )


def _insert_select(*, model, columns: list[str], select: QuerySet) -> None:
    # The ORM has no INSERT ... SELECT; the SELECT is still compiled by it, so the
    # statement is the same portable SQL on PostgreSQL and SQLite.
    sql, params = select.query.get_compiler(connection=connection).as_sql()
    quoted = ", ".join(connection.ops.quote_name(column) for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({quoted}) {sql}", params)


def _update_from(*, model, key: str, columns: list[str], select: QuerySet) -> None:
    """UPDATE model SET column = d.column, ... FROM (select) d WHERE pk = d.key.

    The ORM's update() cannot read a joined row, so every new value would be a correlated
    subquery evaluated once per use; UPDATE ... FROM (PostgreSQL, SQLite ≥ 3.33) computes
    each row once and joins it. The SELECT is compiled by the ORM and names `key` and
    every column.
    """
    sql, params = select.query.get_compiler(connection=connection).as_sql()
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    assignments = ", ".join(f"{quote(column)} = {quote('d')}.{quote(column)}" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET {assignments} FROM ({sql}) {quote('d')} "
            f"WHERE {table}.{quote(model._meta.pk.column)} = {quote('d')}.{quote(key)}",
            params,
        )


def _credited(*, erratum: Erratum, key: frozenset[int], published: frozenset[int]) -> Q | None:
    """When a response (correlated as OuterRef("pk")) earns credit now; None for a void item."""
    if erratum.policy == ErratumPolicy.VOID:
        return None
    credited = _selection_is(key)
    if erratum.policy == ErratumPolicy.CREDIT_EITHER and published and published != key:
        # Only attempts finished before the confirmation were graded by the published
        # key (exams.grading.key_for); later ones knew the corrected one.
        finished_before = Exists(
            Attempt.objects.filter(pk=OuterRef("attempt_id"), finished_at__lt=erratum.decided_at)
        )
        credited |= Q(finished_before) & _selection_is(published)
    return credited


def _regraded_item(credited: Q | None) -> tuple[Q, Case | Value]:
    """(the stored grade differs from the new one, the new grade) of a response row."""
    if credited is None:
        return Q(is_correct__isnull=False), Value(None, output_field=BooleanField())
    new = Case(When(credited, then=Value(True)), default=Value(False), output_field=BooleanField())
    changed = Q(is_correct__isnull=True) | (Q(is_correct=True) & ~credited) | (Q(is_correct=False) & credited)
    return changed, new


def _one_if(condition: Q | None) -> Case | Value:
    if condition is None:
        return Value(0)
    return Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField())


def _attempt_regrades(*, holding: QuerySet, question: Question, credited: Q | None, changed: Q) -> QuerySet:
    """Each attempt whose grade may move: its new counts, score and pass, from its slot.

    Only this question's grade changes, so the counts move by the slot's new grade minus
    its stored one instead of being recounted over all 60 slots. An attempt finished but
    never graded (no counts) is counted from its other slots instead, as a recount would.
    Rows are responses (one per attempt) with their attempt joined.
    """
    right = ExpressionWrapper(
        Coalesce(F("attempt__right_count") - _one_if(Q(is_correct=True)),
                 _count_other_responses(question=question, is_correct=True))
        + _one_if(credited),
        output_field=IntegerField(),
    )
    total = ExpressionWrapper(
        Coalesce(F("attempt__total_count") - _one_if(Q(is_correct__isnull=False)),
                 _count_other_responses(question=question, is_correct__isnull=False))
        + Value(0 if credited is None else 1),
        output_field=IntegerField(),
    )
    ungraded = Q(attempt__right_count__isnull=True) | Q(attempt__total_count__isnull=True)
    ungraded |= Q(attempt__score__isnull=True) | Q(attempt__passed__isnull=True)
    return holding.filter(changed | ungraded).annotate(
        new_right=right,
        new_total=total,
        new_score=_new_score(right=right, total=total),
        new_passed=_new_passed(right=right, total=total, exam_id=OuterRef("attempt__exam_id")),
    )


@contextmanager
def _without_jit():
    """PostgreSQL's JIT off for the regrade's statements, back to the session's setting after.

    Their many CASE branches and subplans make the planner's cost estimate huge, so the
    server JIT-compiles them: measured ~0.9 s of compiling per statement against ~0.25 s
    of running (20,000 attempts). SET LOCAL cannot leak past the transaction.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        # Enough memory for the bitmap of a question's responses to stay exact: with the
        # default 4 MB it turns lossy and rechecks far more rows than it updates.
        cursor.execute("SET LOCAL work_mem = '64MB'")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit TO DEFAULT")
        cursor.execute("SET LOCAL work_mem TO DEFAULT")


def _regrade_locked(
    *, question: Question, erratum: Erratum, key: frozenset[int], published: frozenset[int],
    user: AbstractBaseUser | None,
) -> RegradeEvent:
    """The regrade proper; the caller holds the question's and its attempts' row locks.

    A fixed number of statements however many attempts hold the question, and only the
    rows whose grade changes are written.
    """
    if not key and erratum.policy != ErratumPolicy.VOID:
        raise ValueError(f"question {question.pk} has no key to grade by")
    event = RegradeEvent.objects.create(erratum=erratum, policy=erratum.policy, created_by=user)

    # attempt_id IN (...) rather than attempt__status: update() turns a join into
    # id IN (a second scan of the responses), which reads the whole table.
    finished = Attempt.objects.filter(status__in=Attempt.FINISHED_STATUSES).values("pk")
    holding = Response.objects.filter(question=question, attempt_id__in=finished)
    credited = _credited(erratum=erratum, key=key, published=published)
    changed, new_grade = _regraded_item(credited)
    regrades = _attempt_regrades(holding=holding, question=question, credited=credited, changed=changed)

    with _without_jit():
        _write_regrade(event=event, holding=holding, regrades=regrades, changed=changed, new_grade=new_grade)
    tally = RegradeChange.objects.filter(event=event).aggregate(
        scores=Count("pk", filter=~Q(old_score=F("new_score"))),
        flips=Count("pk", filter=~Q(old_passed=F("new_passed"))),
    )
    event.attempts_touched, event.scores_changed, event.pass_flips = holding.count(), tally["scores"], tally["flips"]
    event.save(update_fields=["attempts_touched", "scores_changed", "pass_flips"])
    return event


def _write_regrade(*, event: RegradeEvent, holding: QuerySet, regrades: QuerySet, changed: Q, new_grade) -> None:
    """The change records, the attempts' grades, then the slots' grades."""
    # Both statements read the stored grades, so they run before the slots are rewritten:
    # first the changes (old score beside the new), then the attempts themselves.
    # An attempt marked finished without ever being graded has no old score to report.
    # values_list keeps its arguments' order in the SELECT: the INSERT's column order.
    _insert_select(
        model=RegradeChange,
        columns=["event_id", "attempt_id", "old_score", "new_score", "old_passed", "new_passed"],
        select=regrades.filter(attempt__score__isnull=False, attempt__passed__isnull=False)
        .exclude(attempt__score=F("new_score"), attempt__passed=F("new_passed"))
        .order_by()
        .values_list(Value(event.pk), "attempt_id", "attempt__score", "new_score", "attempt__passed", "new_passed"),
    )
    _update_from(
        model=Attempt,
        key="regraded",
        columns=["right_count", "total_count", "score", "passed"],
        select=regrades.order_by().annotate(
            regraded=F("attempt_id"), right_count=F("new_right"), total_count=F("new_total"),
            score=F("new_score"), passed=F("new_passed"),
        ).values("regraded", "right_count", "total_count", "score", "passed"),
    )
    holding.filter(changed).update(is_correct=new_grade)


def _schedule_review(*, question: Question, erratum: Erratum, picked: frozenset[int]) -> None:
    """Put the question due in review for everyone whose finished attempt picked `picked`."""
    holding = Response.objects.filter(question=question).filter(_selection_is(picked)).values("attempt_id")
    learners = (
        Attempt.objects.filter(status__in=Attempt.FINISHED_STATUSES, pk__in=holding)
        .order_by()
        .values_list("user_id", flat=True)
        .distinct()
    )
    # Yesterday in UTC is today or earlier in every time zone, so the item is due now
    # wherever the learner is; decided_at is the database's clock.
    due_on = erratum.decided_at.astimezone(UTC).date() - timedelta(days=1)
    ReviewItem.objects.bulk_create(
        [
            ReviewItem(user_id=user_id, question=question, box=1, due_on=due_on, updated_at=erratum.decided_at)
            for user_id in learners
        ],
        update_conflicts=True,
        unique_fields=["user", "question"],
        update_fields=["box", "due_on", "updated_at"],
    )
