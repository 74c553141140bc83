"""The exam room's hot path: a plain answer save (picks, strike-outs, flag of one slot) in one statement.

A plain save is what the page's script sends on every change: the slot's whole answer
(`answer=1` and its `choice`s, or bare `choice`s), optionally its strike-outs
(`struck_sent=1` and `struck`s), its flag (`on`/`off`/`toggle`) and how sure the learner is
(`certainty`: guess / fair / sure; in a mock only when their profile asks it, read in the
same statement). Nothing else: a move
(`go`), a check or a no-JavaScript strike button goes the general way in the view.

`save_plainly` either stores the save and says how the slot now stands, or stores nothing
and returns None, and the view's general path (which locks the attempt and reads
everything) then gives the answer it always gave: 400, 404, 409, 422, time up. So every
refusal keeps its exact wording; the fast path only ever answers "Saved".

On PostgreSQL it is one data-modifying statement, run in autocommit (no BEGIN/COMMIT):
it checks ownership, that the attempt is in progress and within its deadline plus grace,
that the slot exists and is not checked, validates the positions against the slot's
choices and the question's `choose`, maps them to choice ids and writes picks,
strike-outs, `answered_at` and the flag. It locks the attempt row `FOR KEY SHARE` (saves
of one attempt do not queue behind each other, and a submit's or expiry's `FOR UPDATE`
waits for them or makes them wait; a save that waited re-reads the attempt and, finding it
ended, writes nothing) and the slot's row `FOR NO KEY UPDATE` (two saves of one slot take
turns). A statement reads as of its start, so a save that waited on the slot's row could
read picks older than the save it waited for: it compares the slot row's version when
locked with the one it read (`xmin`) and, when they differ, writes nothing and is run
again. Every writer of picks or strike-outs therefore also updates the slot's row
(`Attempt.record_answer` stamps `answered_at`, `Attempt.record_strikes` touches it).

Elsewhere (SQLite) the same decisions are made in Python inside one transaction, which
SQLite takes IMMEDIATE: the database's write lock serializes it with every other writer.
"""
import re
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.db.models.functions import Now
from psycopg.types.numeric import Int2, Int4, Int8

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, AttemptStatus, Certainty, Response
from exams.room.reading import addressable

POSITION = re.compile(r"[1-9][0-9]?")
PLAIN_FIELDS = {"csrfmiddlewaretoken", "choice", "answer", "struck", "struck_sent", "flag", "walk", "certainty"}
RETRIES = 3


@dataclass(frozen=True)
class PlainSave:
    """What a plain save asks for, by position as shown (1 = the first choice)."""

    choices: tuple[int, ...]  # as sent, in order
    carries_answer: bool  # False: keep the picks (less any newly struck)
    struck: tuple[int, ...] | None  # None: keep the strike-outs
    flag: str | None  # "on", "off", "toggle" or None
    certainty: str | None = None  # "guess", "fair", "sure" or None (keep it)


@dataclass(frozen=True)
class Saved:
    """How the slot stands after the save: what the navigator and the clock show."""

    answered: bool
    incomplete: bool
    flagged: bool
    seconds_left: float | None


def plain_save(post) -> PlainSave | None:
    """The save a form post asks for, if it is a plain one the fast path takes; else None.

    Anything unusual (a move, a check, a malformed value) is None: the general path parses
    it strictly and gives its own answer.
    """
    if not set(post) <= PLAIN_FIELDS:
        return None
    choices = post.getlist("choice")
    struck = post.getlist("struck")
    if not all(POSITION.fullmatch(value) for value in (*choices, *struck)):
        return None
    if len(set(choices)) != len(choices):
        return None
    flags = {"answer": post.get("answer"), "struck_sent": post.get("struck_sent")}
    if any(value not in (None, "1") for value in flags.values()):
        return None
    flag = post.get("flag") or None
    if flag not in (None, "on", "off", "toggle") or post.get("walk", "") not in ("", "flagged", "unanswered"):
        return None
    certainty = post.getlist("certainty")
    if len(certainty) > 1 or (certainty and certainty[0] not in Certainty.values):
        return None
    return PlainSave(
        choices=tuple(int(value) for value in choices),
        carries_answer="choice" in post or flags["answer"] == "1",
        struck=tuple(sorted({int(value) for value in struck})) if flags["struck_sent"] == "1" else None,
        flag=flag,
        certainty=certainty[0] if certainty else None,
    )


def save_plainly(*, user_id: int, attempt_id: int, position: int, save: PlainSave) -> Saved | None:
    """Store a plain save of one slot, or nothing (None) when the general path must answer."""
    if not addressable(attempt_id, position):
        return None  # no such attempt or slot: the general path answers
    if connection.vendor == "postgresql":
        for _ in range(RETRIES):
            outcome = _save_in_one_statement(user_id=user_id, attempt_id=attempt_id, position=position, save=save)
            if outcome != "stale":
                return outcome
        return None
    return _save_portably(user_id=user_id, attempt_id=attempt_id, position=position, save=save)


SAVE_SQL = """
WITH target AS (
    SELECT r.id, r.xmin::text AS locked_version, r.choice_order, r.flagged, r.certainty, q.choose,
           a.deadline - statement_timestamp() AS time_left,
           a.mode <> %(mock)s OR coalesce(
               (SELECT p.ask_certainty_in_mocks FROM {profile} p WHERE p.user_id = a.user_id), false) AS asks_certainty
    FROM exams_attempt a
    JOIN exams_response r ON r.attempt_id = a.id
    JOIN exams_question q ON q.id = r.question_id
    WHERE a.id = %(attempt)s AND a.user_id = %(user)s AND a.status = %(in_progress)s
      AND (a.deadline IS NULL OR statement_timestamp() <= a.deadline + %(grace)s)
      AND r.position = %(position)s AND r.checked_at IS NULL
    FOR KEY SHARE OF a FOR NO KEY UPDATE OF r
),
slot AS (
    SELECT t.*,
           (SELECT xmin::text FROM exams_response WHERE id = t.id) AS read_version,
           ARRAY(SELECT choice_id FROM exams_responsechoice WHERE response_id = t.id) AS picked,
           ARRAY(SELECT choice_id FROM exams_responsestrike WHERE response_id = t.id) AS struck_before,
           ARRAY(SELECT (t.choice_order ->> (p - 1))::bigint FROM unnest(%(choices)s::int[]) p) AS sent,
           CASE WHEN %(struck_sent)s
                THEN ARRAY(SELECT (t.choice_order ->> (p - 1))::bigint FROM unnest(%(struck)s::int[]) p)
                ELSE ARRAY(SELECT choice_id FROM exams_responsestrike WHERE response_id = t.id) END AS struck_after,
           (SELECT coalesce(max(p), 0) FROM unnest(%(choices)s::int[] || %(struck)s::int[]) p)
               <= jsonb_array_length(t.choice_order) AS in_range
    FROM target t
),
decided AS (
    SELECT s.*,
           CASE WHEN s.read_version <> s.locked_version THEN 'stale'
                WHEN NOT s.in_range OR cardinality(s.sent) > s.choose
                     OR (%(certainty)s::text IS NOT NULL AND NOT s.asks_certainty)
                     OR (%(carries)s AND EXISTS (
                         SELECT 1 FROM unnest(s.sent) c WHERE c = ANY(s.struck_after) AND c = ANY(s.struck_before)))
                     THEN 'general'
                ELSE 'saved' END AS verdict,
           ARRAY(SELECT c FROM unnest(CASE WHEN %(carries)s THEN s.sent ELSE s.picked END) c
                 WHERE NOT c = ANY(s.struck_after)) AS picks,
           CASE %(flag)s WHEN 'on' THEN true WHEN 'off' THEN false WHEN 'toggle' THEN NOT s.flagged
                ELSE s.flagged END AS flagged_after
    FROM slot s
),
changes AS (
    SELECT d.*,
           NOT (d.picks <@ d.picked AND d.picked <@ d.picks) AS picks_changed,
           NOT (d.struck_after <@ d.struck_before AND d.struck_before <@ d.struck_after) AS strikes_changed,
           coalesce(%(certainty)s::text, d.certainty) AS certainty_after
    FROM decided d WHERE d.verdict = 'saved'
),
unpicked AS (
    DELETE FROM exams_responsechoice rc USING changes c
    WHERE c.picks_changed AND rc.response_id = c.id AND NOT rc.choice_id = ANY(c.picks)
),
picked AS (
    INSERT INTO exams_responsechoice (response_id, choice_id)
    SELECT c.id, choice FROM changes c, unnest(c.picks) choice WHERE c.picks_changed AND NOT choice = ANY(c.picked)
),
restored AS (
    DELETE FROM exams_responsestrike rs USING changes c
    WHERE c.strikes_changed AND rs.response_id = c.id AND NOT rs.choice_id = ANY(c.struck_after)
),
struck AS (
    INSERT INTO exams_responsestrike (response_id, choice_id)
    SELECT c.id, choice FROM changes c, unnest(c.struck_after) choice
    WHERE c.strikes_changed AND NOT choice = ANY(c.struck_before)
),
stamped AS (
    UPDATE exams_response r
    SET answered_at = CASE WHEN NOT c.picks_changed THEN r.answered_at
                           WHEN cardinality(c.picks) > 0 THEN statement_timestamp() END,
        flagged = c.flagged_after,
        certainty = c.certainty_after
    FROM changes c
    WHERE r.id = c.id AND (c.picks_changed OR c.strikes_changed OR c.flagged_after <> r.flagged
                           OR c.certainty_after IS DISTINCT FROM r.certainty)
)
SELECT verdict, cardinality(picks), choose, flagged_after, extract(epoch FROM time_left) FROM decided
""".replace("{profile}", Profile._meta.db_table)


def _save_in_one_statement(*, user_id, attempt_id, position, save: PlainSave) -> Saved | str | None:
    # An ordinary statement: psycopg prepares it on a connection that has run it
    # `prepare_threshold` times (config/settings.py); ids go typed as their columns, so
    # every attempt shares one prepared statement.
    with connection.cursor() as cursor:
        cursor.execute(SAVE_SQL, {
            "attempt": Int8(attempt_id), "user": Int4(user_id), "position": Int2(position),
            "in_progress": AttemptStatus.IN_PROGRESS,
            "grace": Attempt.GRACE, "choices": list(save.choices), "carries": save.carries_answer,
            "struck_sent": save.struck is not None, "struck": list(save.struck or ()), "flag": save.flag,
            "certainty": save.certainty, "mock": AttemptMode.MOCK,
        })
        row = cursor.fetchone()
    if row is None:
        return None  # not theirs, ended, past its grace, no such slot, or checked
    verdict, picks, choose, flagged, time_left = row
    if verdict == "stale":
        return "stale"
    if verdict != "saved":
        return None
    return Saved(answered=picks > 0, incomplete=0 < picks < choose, flagged=flagged,
                 seconds_left=None if time_left is None else max(0.0, float(time_left)))


def _save_portably(*, user_id, attempt_id, position, save: PlainSave) -> Saved | None:
    with transaction.atomic():
        response = (
            Response.objects.filter(
                attempt_id=attempt_id, attempt__user_id=user_id, attempt__status=AttemptStatus.IN_PROGRESS,
                position=position, checked_at__isnull=True,
            )
            .filter(Q(attempt__deadline__isnull=True) | Q(attempt__deadline__gte=Now() - Attempt.GRACE))
            .select_related("attempt", "question")
            .prefetch_related("picks", "strikes")
            .annotate(db_now=Now(), asks_certainty=Subquery(
                Profile.objects.filter(user_id=OuterRef("attempt__user_id")).values("ask_certainty_in_mocks")[:1]
            ))
            .first()
        )
        if response is None:
            return None
        if save.certainty and response.attempt.mode == AttemptMode.MOCK and not response.asks_certainty:
            return None
        order = response.choice_order
        if max((*save.choices, *(save.struck or ())), default=0) > len(order) or len(save.choices) > response.question.choose:
            return None
        picked = {pick.choice_id for pick in response.picks.all()}
        struck_before = {strike.choice_id for strike in response.strikes.all()}
        sent = [order[p - 1] for p in save.choices]
        struck = {order[p - 1] for p in save.struck} if save.struck is not None else struck_before
        if save.carries_answer and set(sent) & struck & struck_before:
            return None
        picks = [pk for pk in (sent if save.carries_answer else picked) if pk not in struck]
        attempt = response.attempt
        attempt.record_answer(response=response, choice_ids=picks)
        attempt.record_strikes(response=response, choice_ids=struck)
        if save.flag:
            flagged = (not response.flagged) if save.flag == "toggle" else save.flag == "on"
            if flagged != response.flagged:
                response.flagged = flagged
                response.save(update_fields=["flagged"])
        if save.certainty and save.certainty != response.certainty:
            response.certainty = save.certainty
            response.save(update_fields=["certainty"])
        seconds_left = None if attempt.deadline is None else max(0.0, (attempt.deadline - response.db_now).total_seconds())
    return Saved(answered=bool(picks), incomplete=0 < len(picks) < response.question.choose, flagged=response.flagged,
                 seconds_left=seconds_left)

