"""Confirming or rejecting an erratum, and regrading every finished attempt in set-based SQL."""
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal

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
    OuterRef,
    Q,
    Value,
    When,
)
from django.db.models.functions import Now

from exams.bounds import TEXT_LIMITS
from exams.models import (
    Attempt,
    AttemptStatus,
    Choice,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    Exam,
    Question,
    QuestionKind,
    QuestionVersion,
    RegradeChange,
    RegradeEvent,
    Response,
    ResponseChoice,
    ReviewCard,
)
from exams.room import grading
from exams.room.services import confirmed_erratum
from exams.statistics.tasks import statistics_refresh_on_commit
from exams.tuning import local_work_mem


@dataclass(frozen=True)
class RegradeSummary:
    """What a regrade does to past attempts, as the dry run shows it and the event records it."""

    attempts_touched: int
    scores_changed: int
    pass_flips: int
    to_pass: int
    to_fail: int
    learners_affected: int
    # (change in percentage points, attempts), the largest fall first.
    distribution: tuple[tuple[Decimal, int], ...]

    @property
    def raised(self) -> int:
        return sum(count for change, count in self.distribution if change > 0)

    @property
    def lowered(self) -> int:
        return sum(count for change, count in self.distribution if change < 0)

    def digest(self) -> str:
        """A short fingerprint the confirm form carries, to tell whether the numbers moved."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:16]

    def as_json(self) -> dict:
        """For a job's payload; from_json gives back an equal summary (with the same digest)."""
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "distribution"}
        return {**fields, "distribution": [[str(change), count] for change, count in self.distribution]}

    @classmethod
    def from_json(cls, data: Mapping) -> "RegradeSummary":
        distribution = tuple((Decimal(change), int(count)) for change, count in data["distribution"])
        return cls(**{**{name: int(data[name]) for name in cls.__dataclass_fields__ if name != "distribution"},
                      "distribution": distribution})


@dataclass(frozen=True)
class RegradeOutcome:
    summary: RegradeSummary
    # None for a dry run: nothing was kept.
    event: RegradeEvent | None


class PreviewOutdated(Exception):
    """The numbers changed since the dry run (an attempt holding the question finished meanwhile)."""

    def __init__(self, summary: RegradeSummary):
        super().__init__("the regrade's numbers changed since the preview; check the new ones and confirm again")
        self.summary = summary


def erratum_confirm(
    *,
    erratum: Erratum,
    policy: str,
    corrected_choice_ids: Iterable[int] | None,
    user: AbstractBaseUser | None = None,
    note: str | None = None,
    explanation: str | None = None,
    feedback: Mapping[int, str] | None = None,
    dry_run: bool = False,
    expected: str | None = None,
    progress=None,
) -> RegradeOutcome:
    """Set the corrected key (and corrected text), confirm the erratum with a policy and regrade past attempts.

    `explanation` and `feedback` (choice id → text) replace the question's explanation and
    choice feedback; the question's text is then frozen as a new version, which results
    show beside the notice. For a void item `corrected_choice_ids` may be empty: the
    current key is kept.

    `dry_run` does all of it, by the same statements and under the same locks, and rolls
    it back: the summary says what confirming would do. `expected` is the digest of the
    summary the instructor saw: when the numbers differ now, nothing is kept and
    PreviewOutdated carries the new ones. `progress` (a job's, jobs.services.Progress) hears
    each of the REGRADE_STEPS as it starts.

    Raises ValueError (changing nothing) for an unknown policy, a key that does not fit
    the question, text too long, or an erratum that was already decided.
    """
    if policy not in ErratumPolicy.values:
        raise ValueError(f"unknown erratum policy {policy!r}; expected one of {', '.join(ErratumPolicy.values)}")
    policy = ErratumPolicy(policy)
    with transaction.atomic():
        _step(progress, 0)
        question = _lock_question(question_id=erratum.question_id)
        erratum = Erratum.objects.select_for_update().get(pk=erratum.pk)
        if erratum.status != ErratumStatus.REPORTED:
            raise ValueError(f"this erratum was already {erratum.get_status_display().lower()}; only a reported one can be confirmed")
        if not erratum.published_key.exists():
            # Opened without one: the key learners were graded on until now is the one corrected.
            erratum.published_key.set(Choice.objects.filter(question=question, is_correct=True))
        key = _validated_key(question=question, choice_ids=corrected_choice_ids, policy=policy)
        Choice.objects.filter(question=question).update(
            is_correct=Case(When(pk__in=key, then=Value(True)), default=Value(False))
        )
        version = _correct_text(question=question, explanation=explanation, feedback=feedback)
        decision = {
            "status": ErratumStatus.CONFIRMED, "policy": policy, "decided_at": Now(), "decided_by": user,
            "corrected_version": version,
        }
        if note is not None:
            decision["note"] = note
        Erratum.objects.filter(pk=erratum.pk).update(**decision)
        erratum.refresh_from_db()
        if policy == ErratumPolicy.VOID:
            Question.objects.filter(pk=question.pk).update(is_active=False)
        published = _published_key(erratum=erratum)
        event = _regrade_locked(question=question, erratum=erratum, key=key, user=user, progress=progress)
        if policy != ErratumPolicy.VOID and published and published != key:
            _schedule_review(question=question, erratum=erratum, picked=published)
        _step(progress, 3)
        summary = regrade_summary(event=event)
        if expected is not None and not dry_run and summary.digest() != expected:
            raise PreviewOutdated(summary)
        if dry_run:
            transaction.set_rollback(True)
            return RegradeOutcome(summary=summary, event=None)
        # Keys and scores changed: the exam's statistics are refreshed in the background.
        statistics_refresh_on_commit(exam=question.exam)
    return RegradeOutcome(summary=summary, event=event)


# What a regrade's progress reports: a few statements over all the attempts, not one per attempt.
REGRADE_STEPS = (
    "Waiting for other regrades of the exam and gradings in flight",
    "Working out each attempt's new grade",
    "Recording the changes and writing the new scores",
    "Counting the changes",
)


def _step(progress, index: int) -> None:
    if progress is not None:
        progress(index, total=len(REGRADE_STEPS), stage=f"Step {index + 1} of {len(REGRADE_STEPS)}: {REGRADE_STEPS[index]}")


# A confirmation (or its dry run) of an erratum whose question more finished attempts hold
# than this runs as a background job (exams.tasks.regrade_erratum); smaller ones in the request.
BACKGROUND_REGRADE_OVER = 500
PREVIEW_JOB, REGRADE_JOB = "regrade_preview", "regrade"


def holding_attempts(*, erratum: Erratum) -> int:
    """How many finished attempts hold the erratum's question: what a regrade of it touches (one query)."""
    finished = Attempt.objects.filter(status__in=Attempt.FINISHED_STATUSES).values("pk")
    return Response.objects.filter(question_id=erratum.question_id, attempt_id__in=finished).count()


def decision_json(
    *, policy: str, corrected_choice_ids: Iterable[int], note: str | None, explanation: str | None,
    feedback: Mapping[int, str] | None,
) -> dict:
    """erratum_confirm's decision arguments, for a job's payload (erratum_confirm_job reads them back)."""
    return {
        "policy": policy, "corrected_choice_ids": sorted(int(pk) for pk in corrected_choice_ids), "note": note,
        "explanation": explanation, "feedback": {str(pk): text for pk, text in (feedback or {}).items()},
    }


def erratum_confirm_job(*, job, progress) -> "JobResult":
    """The work of a regrade_preview or regrade job (jobs.services.job_run): erratum_confirm, as in the request.

    The payload holds the erratum, the decision (decision_json) and, for a regrade, the
    digest of the preview it confirms. The result kept on the job is the summary, its digest
    and the decision, so the job page can offer "Confirm" after a preview, or after a
    confirmation whose numbers moved (a failed job, which changed nothing).
    """
    from jobs.services import JobError, JobResult

    dry_run = job.kind == PREVIEW_JOB
    erratum = Erratum.objects.filter(pk=job.payload["erratum"]).first()
    if erratum is None:
        raise JobError("That erratum no longer exists.")
    decision = job.payload["decision"]
    kept = {"erratum": erratum.pk, "decision": decision}
    try:
        outcome = erratum_confirm(
            erratum=erratum, policy=decision["policy"], corrected_choice_ids=decision["corrected_choice_ids"],
            user=job.created_by, note=decision["note"], explanation=decision["explanation"],
            feedback={int(pk): text for pk, text in decision["feedback"].items()},
            dry_run=dry_run, expected=None if dry_run else job.payload["expected"], progress=progress,
        )
    except PreviewOutdated as changed:
        raise JobError(
            "The numbers changed since the preview (an attempt holding the question finished meanwhile), "
            "so nothing was confirmed: check the new ones below and confirm again.",
            result={**kept, "summary": changed.summary.as_json(), "digest": changed.summary.digest(), "outdated": True},
        ) from None
    except ValueError as refused:
        raise JobError(f"{str(refused)[:1].upper()}{str(refused)[1:]}.") from None
    summary = outcome.summary
    if dry_run:
        message = (
            f"Dry run: confirming would regrade {summary.attempts_touched:,} finished attempt(s); "
            f"{summary.scores_changed:,} score(s) would change. Nothing was saved."
        )
        return JobResult(message, {**kept, "summary": summary.as_json(), "digest": summary.digest()})
    return JobResult(confirmed_message(summary), {"erratum": erratum.pk})


def confirmed_message(summary: RegradeSummary) -> str:
    return (
        f"Confirmed: regraded {summary.attempts_touched:,} finished attempt(s); "
        f"{summary.scores_changed:,} score(s) changed, {summary.pass_flips:,} pass/fail flip(s), "
        f"{summary.learners_affected:,} learner(s) affected."
    )


def regrade_summary(*, event: RegradeEvent) -> RegradeSummary:
    """The event's counts with who and how much, read from its change records (three queries)."""
    changes = RegradeChange.objects.filter(event=event)
    tally = changes.aggregate(
        to_pass=Count("pk", filter=Q(old_passed=False, new_passed=True)),
        to_fail=Count("pk", filter=Q(old_passed=True, new_passed=False)),
    )
    learners = (
        Attempt.objects.filter(pk__in=changes.filter(~Q(old_score=F("new_score"))).values("attempt_id"))
        .order_by().values("user_id").distinct().count()
    )
    buckets: Counter[Decimal] = Counter()
    rows = (
        changes.filter(~Q(old_score=F("new_score")))
        .annotate(change=ExpressionWrapper(F("new_score") - F("old_score"), output_field=DecimalField(max_digits=6, decimal_places=2)))
        .order_by().values("change").annotate(n=Count("pk")).values_list("change", "n")
    )
    for change, count in rows:
        # SQLite subtracts decimals as floats: the same change may come back twice, a hair apart.
        buckets[Decimal(str(change)).quantize(Decimal("0.01"))] += count
    return RegradeSummary(
        attempts_touched=event.attempts_touched,
        scores_changed=event.scores_changed,
        pass_flips=event.pass_flips,
        to_pass=tally["to_pass"],
        to_fail=tally["to_fail"],
        learners_affected=learners,
        distribution=tuple(sorted(buckets.items())),
    )


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
    """Regrade every finished attempt holding the question by its confirmed errata, folded in order.

    The event is recorded against the latest confirmed erratum. Safe to run again: once
    the stored grades agree with the fold, a second run records an event with nothing changed.
    """
    with transaction.atomic():
        question = _lock_question(question_id=question.pk)
        erratum = _latest_confirmed(question=question)
        if erratum is None:
            raise ValueError(f"question {question.pk} has no confirmed erratum to regrade by")
        key = frozenset(Choice.objects.filter(question=question, is_correct=True).order_by().values_list("pk", flat=True))
        event = _regrade_locked(question=question, erratum=erratum, key=key, user=user)
        statistics_refresh_on_commit(exam=question.exam)
        return event


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


# Namespace of the advisory locks that make one exam's regrades take turns (any constant
# unlikely to be used by another application sharing the database).
REGRADE_LOCK_NAMESPACE = 0x63657274  # "cert"


def _lock_question(*, question_id: int) -> Question:
    # One regrade per exam at a time, first: two regrades of different questions held by
    # the same attempts each move its counts by a difference computed from what they
    # read, so running together the second would write back a count the first changed
    # (and their updates could lock shared attempts in different orders). SQLite has one
    # writer at a time anyway.
    if connection.vendor == "postgresql":
        exam_id = Question.objects.filter(pk=question_id).values_list("exam_id", flat=True).get()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [REGRADE_LOCK_NAMESPACE, exam_id])
    # Grading takes a share lock on its questions before reading their keys
    # (exams.room.services.confirmed_keys), so this lock waits for gradings in flight, and
    # gradings that start later wait for the regrade and read the new key: no attempt is
    # half-graded with the old key while we regrade, without locking each of the
    # (possibly 100,000) attempts that hold the question. The lock is NO KEY UPDATE: a
    # submit that files a review item (a foreign key to the question) takes a KEY SHARE
    # lock on it, which a plain FOR UPDATE would block.
    return Question.objects.select_for_update(no_key=True).get(pk=question_id)


def _latest_confirmed(*, question: Question) -> Erratum | None:
    # The same erratum exams.room.services.confirmed_keys grades new submissions by.
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


def _correct_text(
    *, question: Question, explanation: str | None, feedback: Mapping[int, str] | None
) -> QuestionVersion:
    """Store the corrected explanation and choice feedback; the question's text as a version.

    The version the confirmation records is frozen from then on (QuestionVersion.objects),
    so results can show "corrected" beside "as shown in your attempt".
    """
    choices = {choice.pk: choice for choice in Choice.objects.filter(question=question)}
    feedback = {int(pk): text for pk, text in (feedback or {}).items()}
    foreign = feedback.keys() - choices.keys()
    if foreign:
        raise ValueError(f"choices {sorted(foreign)} are not choices of question {question.pk}")
    texts = [("explanation", explanation)] if explanation is not None else []
    texts += [("feedback", text) for text in feedback.values()]
    for kind, text in texts:
        if "\x00" in text:
            raise ValueError(f"the {kind} holds a NUL character")
        if len(text) > TEXT_LIMITS[kind]:
            raise ValueError(f"the {kind} has {len(text):,} characters; at most {TEXT_LIMITS[kind]:,} are allowed")
    if explanation is not None and explanation != question.explanation:
        question.explanation = explanation
        question.save(update_fields=["explanation", "updated_at"])
    changed = [choices[pk] for pk, text in feedback.items() if choices[pk].feedback != text]
    for choice in changed:
        choice.feedback = feedback[choice.pk]
    if changed:
        Choice.objects.bulk_update(changed, ["feedback"])
    fresh = Question.objects.prefetch_related("choices").get(pk=question.pk)
    return QuestionVersion.objects.current_for([fresh])[question.pk]


def _selection_is(key: frozenset[int]) -> Q:
    """The response's picks are exactly `key` (a response correlated as OuterRef("pk"))."""
    picks = ResponseChoice.objects.filter(response=OuterRef("pk"))
    condition = ~Exists(picks.exclude(choice_id__in=key))
    for choice_id in sorted(key):
        condition &= Exists(picks.filter(choice_id=choice_id))
    return Q(condition)


def _credited(*, question: Question, key: frozenset[int]) -> Q | None:
    """When a response (correlated as OuterRef("pk")) earns credit now; None for a void item.

    exams.room.grading.key_for in SQL: the question's confirmed errata folded in order.
    """
    errata = [
        confirmed_erratum(erratum)
        for erratum in Erratum.objects.filter(question=question, status=ErratumStatus.CONFIRMED)
        .order_by("decided_at", "pk")
        .prefetch_related("published_key")
    ]
    if any(erratum.policy == grading.Policy.VOID for erratum in errata):
        return None
    credited = _selection_is(key)
    for erratum in errata:
        if erratum.policy == grading.Policy.CREDIT_EITHER and erratum.published and erratum.published != key:
            # Only attempts finished before this confirmation were graded by its published
            # key; later ones knew the key it corrected to.
            finished_before = Exists(
                Attempt.objects.filter(pk=OuterRef("attempt_id"), finished_at__lt=erratum.decided_at)
            )
            credited |= Q(finished_before) & _selection_is(erratum.published)
    return credited


def _regrade_locked(
    *, question: Question, erratum: Erratum, key: frozenset[int], user: AbstractBaseUser | None, progress=None,
) -> RegradeEvent:
    """The regrade proper; the caller holds the question's row lock.

    A fixed number of statements however many attempts hold the question, and only the
    rows whose grade changes are written. Each slot's new grade (a few probes of its
    picks) is worked out once, into a temporary table that the writes then join.
    """
    credited = _credited(question=question, key=key)
    if not key and credited is not None:
        raise ValueError(f"question {question.pk} has no key to grade by")
    event = RegradeEvent.objects.create(erratum=erratum, policy=erratum.policy, created_by=user)

    # attempt_id IN (...) rather than attempt__status: it keeps the plan on the
    # response_by_question index instead of a join that reads the whole table.
    finished = Attempt.objects.filter(status__in=Attempt.FINISHED_STATUSES).values("pk")
    holding = Response.objects.filter(question=question, attempt_id__in=finished)
    new_grade = (
        Value(None, output_field=BooleanField()) if credited is None
        else Case(When(credited, then=Value(True)), default=Value(False), output_field=BooleanField())
    )
    slots = holding.order_by().annotate(new=new_grade).values_list("pk", "attempt_id", "is_correct", "new")

    # Enough memory for the bitmap of a question's responses to stay exact: with the default
    # 4 MB it turns lossy and rechecks far more rows than it updates.
    _step(progress, 1)
    with local_work_mem("64MB"), _temporary_tables() as cursor:
        sql, params = slots.query.get_compiler(connection=connection).as_sql()
        cursor.execute(f"INSERT INTO {SLOTS} (response_id, attempt_id, old, new) {sql}", params)
        cursor.execute(_ATTEMPT_GRADES_SQL, [question.pk, question.pk, 0 if credited is None else 1])
        _step(progress, 2)
        # The change records and the attempts read the stored grades, so the slots are
        # rewritten last; an attempt never graded has no old score to report.
        cursor.execute(f"""
            INSERT INTO {RegradeChange._meta.db_table} (event_id, attempt_id, old_score, new_score, old_passed, new_passed)
            SELECT %s, attempt_id, old_score, new_score, old_passed, new_passed FROM {GRADES}
            WHERE old_score IS NOT NULL AND old_passed IS NOT NULL
              AND NOT (old_score = new_score AND old_passed = new_passed)
        """, [event.pk])
        attempt = Attempt._meta.db_table
        cursor.execute(f"""
            UPDATE {attempt} SET right_count = g.new_right, total_count = g.new_total,
                                 score = g.new_score, passed = g.new_passed, equated_score = NULL
            FROM {GRADES} g WHERE {attempt}.id = g.attempt_id
        """)
        response = Response._meta.db_table
        # The question's own condition lets the planner find its rows by index, where the
        # join alone read all six million (a temporary table has no statistics).
        cursor.execute(f"""
            UPDATE {response} SET is_correct = s.new FROM {SLOTS} s
            WHERE {response}.question_id = %s AND {response}.id = s.response_id AND ({_CHANGED.format(s="s")})
        """, [question.pk])
        cursor.execute(f"SELECT COUNT(*) FROM {SLOTS}")
        (touched,) = cursor.fetchone()
    tally = RegradeChange.objects.filter(event=event).aggregate(
        scores=Count("pk", filter=~Q(old_score=F("new_score"))),
        flips=Count("pk", filter=~Q(old_passed=F("new_passed"))),
    )
    event.attempts_touched, event.scores_changed, event.pass_flips = touched, tally["scores"], tally["flips"]
    event.save(update_fields=["attempts_touched", "scores_changed", "pass_flips"])
    return event


# The regrade's working tables, private to its connection and dropped when it is done.
SLOTS, GRADES = "regrade_slot", "regrade_attempt"

# A slot's stored grade differs from its new one (NULL: void). Portable: SQLite has no
# IS DISTINCT FROM before 3.39.
_CHANGED = "({s}.old IS NULL) <> ({s}.new IS NULL) OR {s}.old <> {s}.new"


def score_sql(right: str, total: str) -> str:
    """exams.room.grading.score_percent in SQL: 100·right/total, two places, halves up, exactly.

    A literal 100.0 is numeric on PostgreSQL (exact) and real on SQLite (correctly
    rounded, so it reads back as the same two-decimal value); a parameter would not be.
    """
    return f"CASE WHEN {total} = 0 THEN 0 ELSE (({right} * 20000 + {total}) / ({total} * 2)) / 100.0 END"


def passed_sql(right: str, total: str, passing: str) -> str:
    """exams.room.grading.is_passed in SQL: right·100 ≥ passing·total on the exact ratio."""
    return f"CASE WHEN {total} > 0 AND {right} * 100 >= {passing} * {total} THEN TRUE ELSE FALSE END"


# Each attempt whose grade may move, with its new counts, score and pass. Only this
# question's grade changes, so the counts move by the slot's new grade minus its stored
# one instead of being recounted over all 60 slots; an attempt finished but never graded
# (no counts) is counted from its other slots instead, as a recount would.
# Parameters: the question (twice), then 1 when the item counts towards the total (0: void).
_ATTEMPT_GRADES_SQL = f"""
    INSERT INTO {GRADES} (attempt_id, old_score, old_passed, new_right, new_total, new_score, new_passed)
    SELECT attempt_id, old_score, old_passed, new_right, new_total,
           {score_sql("new_right", "new_total")}, {passed_sql("new_right", "new_total", "passing")}
    FROM (
        SELECT s.attempt_id AS attempt_id, a.score AS old_score, a.passed AS old_passed, e.passing_score AS passing,
               COALESCE(a.right_count - CASE WHEN s.old THEN 1 ELSE 0 END,
                        (SELECT COUNT(*) FROM {Response._meta.db_table} o
                         WHERE o.attempt_id = s.attempt_id AND o.is_correct AND o.question_id <> %s))
               + CASE WHEN s.new THEN 1 ELSE 0 END AS new_right,
               COALESCE(a.total_count - CASE WHEN s.old IS NOT NULL THEN 1 ELSE 0 END,
                        (SELECT COUNT(*) FROM {Response._meta.db_table} o
                         WHERE o.attempt_id = s.attempt_id AND o.is_correct IS NOT NULL AND o.question_id <> %s))
               + %s AS new_total
        FROM {SLOTS} s
        JOIN {Attempt._meta.db_table} a ON a.id = s.attempt_id
        JOIN {Exam._meta.db_table} e ON e.id = a.exam_id
        WHERE ({_CHANGED.format(s="s")})
           OR a.right_count IS NULL OR a.total_count IS NULL OR a.score IS NULL OR a.passed IS NULL
    ) counted
"""


@contextmanager
def _temporary_tables():
    """The two working tables, created empty and dropped after; the caller is in a transaction."""
    with connection.cursor() as cursor:
        for table in (SLOTS, GRADES):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(
            f"CREATE TEMPORARY TABLE {SLOTS} (response_id bigint PRIMARY KEY, attempt_id bigint NOT NULL, "
            "old boolean, new boolean)"
        )
        cursor.execute(
            f"CREATE TEMPORARY TABLE {GRADES} (attempt_id bigint PRIMARY KEY, old_score numeric(5, 2), "
            "old_passed boolean, new_right integer, new_total integer, new_score numeric(5, 2), new_passed boolean)"
        )
        yield cursor
        # Only after success: after an error the transaction rolls back, taking the tables
        # with it, and a statement now would only hide that error behind "transaction aborted".
        for table in (SLOTS, GRADES):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def _schedule_review(*, question: Question, erratum: Erratum, picked: frozenset[int]) -> None:
    """Make the question due now for everyone whose finished attempt picked `picked`.

    Their card keeps its memory state; only its due time moves to the confirmation (the
    database's clock). A learner with no card yet gets a new one, due then.
    """
    holding = Response.objects.filter(question=question).filter(_selection_is(picked))
    # An abandoned practice's answer was a review only if it was checked.
    reviewed = holding.filter(checked_at__isnull=False).values("attempt_id")
    learners = (
        Attempt.objects.filter(
            Q(status__in=Attempt.FINISHED_STATUSES, pk__in=holding.values("attempt_id"))
            | Q(status=AttemptStatus.ABANDONED, pk__in=reviewed)
        )
        .order_by()
        .values_list("user_id", flat=True)
        .distinct()
    )
    ReviewCard.objects.bulk_create(
        [
            ReviewCard(user_id=user_id, question=question, due=erratum.decided_at, updated_at=erratum.decided_at)
            for user_id in learners
        ],
        update_conflicts=True,
        unique_fields=["user", "question"],
        update_fields=["due", "updated_at"],
    )
