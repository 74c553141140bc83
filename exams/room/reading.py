"""The exam room's other hot path: what the question page shows, read in one statement.

A learner on a question of a running attempt reloads it or moves to another one (the
navigator, Next, Previous) far more often than anything else but a save. On PostgreSQL,
`question_page` reads everything such a page shows in one statement, run in autocommit:

- the attempt, if this user owns it, with its exam, the database clock and the learner's
  shortcut and certainty-in-mocks settings;
- the slot at this position, its question's `kind` and `choose`, the version it shows, and
  its picks and strike-outs;
- the navigator: every slot's position and whether it is answered, incomplete or flagged;

and moves the attempt's resume point (`last_position`) to this slot in the same statement.

It answers only the common case: an attempt in progress, within its deadline plus grace,
on a slot that exists and is not checked. For anything else it returns None, writes
nothing, and the view's general path gives the answer it always gave (404, the results,
time up, a redirect to the resume point, a checked answer with its feedback). Elsewhere
(SQLite) it always returns None.

`read_by_orm` reads the same `Shown` through the ORM, for the general path (a page shown
after a save, a refused post, a checked slot) and as the reference the fast read is tested
against (tests/exams/room/test_reading.py).
"""
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count
from psycopg.types.numeric import Int2, Int4, Int8

from accounts.models import Profile
from exams.models import Attempt, AttemptStatus, Exam, Question, QuestionVersion, Response


@dataclass
class Shown:
    """One slot of an attempt as the question page shows it."""

    attempt: Attempt  # with `exam`, `db_now`, `shortcuts_enabled` and `ask_certainty_in_mocks` (None: no profile yet)
    response: Response  # with `question` and `version`
    picked: frozenset[int]  # choice ids
    struck: frozenset[int]
    navigator: list[dict]  # {"position", "answered", "incomplete", "flagged"} in position order


def navigator_item(position: int, *, answered: bool, picked: int, choose: int, flagged: bool) -> dict:
    return {"position": position, "answered": answered, "incomplete": 0 < picked < choose, "flagged": flagged}


def slot_by_orm(attempt: Attempt, position: int, *, with_text: bool = True) -> Response | None:
    """One slot with its picks and strike-outs (three statements); `with_text` also loads the
    version a page shows (saves skip it). None when there is no such slot."""
    related = ("version", "question") if with_text else ("question",)
    return attempt.responses.select_related(*related).prefetch_related("picks", "strikes").filter(position=position).first()


def read_by_orm(attempt: Attempt, position: int) -> Shown | None:
    """The slot at `position` of an attempt already loaded (and checked to be the user's), as
    the page shows it: four statements (the slot, its picks, its strike-outs, the
    navigator); None when there is no such slot."""
    response = slot_by_orm(attempt, position)
    return None if response is None else shown_by_orm(attempt, response)


def shown_by_orm(attempt: Attempt, response: Response) -> Shown:
    """A slot read by `slot_by_orm` (with its text), and the navigator (one statement)."""
    return Shown(
        attempt=attempt,
        response=response,
        picked=frozenset(pick.choice_id for pick in response.picks.all()),
        struck=frozenset(strike.choice_id for strike in response.strikes.all()),
        navigator=navigator_by_orm(attempt),
    )


def navigator_by_orm(attempt: Attempt) -> list[dict]:
    rows = (
        attempt.responses.annotate(picked=Count("picks"))
        .values("position", "answered_at", "flagged", "picked", "question__choose")
        .order_by("position")
    )
    return [
        navigator_item(row["position"], answered=row["answered_at"] is not None, picked=row["picked"],
                       choose=row["question__choose"], flagged=row["flagged"])
        for row in rows
    ]


def _columns(model, alias: str) -> tuple[list[str], str]:
    fields = [field for field in model._meta.concrete_fields]
    return [field.attname for field in fields], ", ".join(f'{alias}."{field.column}"' for field in fields)


ATTEMPT_FIELDS, ATTEMPT_COLUMNS = _columns(Attempt, "a")
EXAM_FIELDS, EXAM_COLUMNS = _columns(Exam, "e")
RESPONSE_FIELDS, RESPONSE_COLUMNS = _columns(Response, "r")
VERSION_FIELDS, VERSION_COLUMNS = _columns(QuestionVersion, "v")
# Of the question, only what the page reads: a deferred field would cost a query, which
# tests/exams/room/test_page_costs.py would count.
QUESTION_FIELDS = ["id", "kind", "choose"]
QUESTION_COLUMNS = ", ".join(f'q."{Question._meta.get_field(name).column}"' for name in QUESTION_FIELDS)

# The conditions of the common case, on the attempt `a` and the slot `r`.
SHOWABLE = """a.user_id = %(user)s AND a.status = %(in_progress)s
      AND (a.deadline IS NULL OR statement_timestamp() <= a.deadline + %(grace)s)
      AND r.checked_at IS NULL"""

PAGE_SQL = f"""
WITH shown AS (
    SELECT {ATTEMPT_COLUMNS}, statement_timestamp() AS db_now,
           (SELECT p.shortcuts_enabled FROM {Profile._meta.db_table} p WHERE p.user_id = a.user_id) AS shortcuts,
           (SELECT p.ask_certainty_in_mocks FROM {Profile._meta.db_table} p WHERE p.user_id = a.user_id) AS asks_certainty,
           {EXAM_COLUMNS}, {RESPONSE_COLUMNS}, {QUESTION_COLUMNS}, {VERSION_COLUMNS},
           ARRAY(SELECT choice_id FROM exams_responsechoice WHERE response_id = r.id) AS picked,
           ARRAY(SELECT choice_id FROM exams_responsestrike WHERE response_id = r.id) AS struck
    FROM exams_attempt a
    JOIN exams_exam e ON e.id = a.exam_id
    JOIN exams_response r ON r.attempt_id = a.id AND r.position = %(position)s
    JOIN exams_question q ON q.id = r.question_id
    JOIN exams_questionversion v ON v.id = r.version_id
    WHERE a.id = %(attempt)s AND {SHOWABLE}
),
moved AS (
    UPDATE exams_attempt a SET last_position = %(position)s
    WHERE a.id = %(attempt)s AND a.last_position <> %(position)s AND EXISTS (SELECT 1 FROM shown)
),
navigator AS (
    SELECT array_agg(s.position ORDER BY s.position) AS positions,
           array_agg(s.answered_at IS NOT NULL ORDER BY s.position) AS answered,
           array_agg(s.flagged ORDER BY s.position) AS flagged,
           array_agg((SELECT count(*) FROM exams_responsechoice c WHERE c.response_id = s.id) ORDER BY s.position) AS picks,
           array_agg(sq.choose ORDER BY s.position) AS choose
    FROM exams_response s JOIN exams_question sq ON sq.id = s.question_id
    WHERE s.attempt_id = %(attempt)s AND EXISTS (SELECT 1 FROM shown)
)
SELECT shown.*, navigator.* FROM shown, navigator
"""


def addressable(attempt_id: int, position: int) -> bool:
    """Whether an attempt id and a slot position from a URL fit their columns' types
    (bigint, smallint). Ones that do not cannot match a row: the general path (the ORM)
    says so (404) without sending them to the database."""
    return -(2**63) <= attempt_id < 2**63 and -(2**15) <= position < 2**15


def question_page(*, user_id: int, attempt_id: int, position: int) -> Shown | None:
    """The slot on screen read in one statement (moving the resume point to it), or None
    when the general path must answer (see the module's docstring).

    An ordinary statement: psycopg prepares it on a connection that has run it
    `prepare_threshold` times (config/settings.py); its ids are sent typed as their
    columns, so every attempt shares one prepared statement."""
    if connection.vendor != "postgresql" or not addressable(attempt_id, position):
        return None
    with connection.cursor() as cursor:
        cursor.execute(PAGE_SQL, {
            "attempt": Int8(attempt_id), "user": Int4(user_id), "position": Int2(position),
            "in_progress": AttemptStatus.IN_PROGRESS, "grace": Attempt.GRACE,
        })
        row = cursor.fetchone()
    if row is None:
        return None
    return _shown(list(row), position)


def _take(row: list, count: int) -> list:
    taken = row[:count]
    del row[:count]
    return taken


def _shown(row: list, position: int) -> Shown:
    alias = connection.alias
    attempt = Attempt.from_db(alias, ATTEMPT_FIELDS, _take(row, len(ATTEMPT_FIELDS)))
    attempt.db_now, attempt.shortcuts_enabled, attempt.ask_certainty_in_mocks = _take(row, 3)
    attempt.exam = Exam.from_db(alias, EXAM_FIELDS, _take(row, len(EXAM_FIELDS)))
    # The resume point as the statement left it (the general path's update does the same).
    attempt.last_position = position
    response = Response.from_db(alias, RESPONSE_FIELDS, _take(row, len(RESPONSE_FIELDS)))
    response.attempt = attempt
    response.question = Question.from_db(alias, QUESTION_FIELDS, _take(row, len(QUESTION_FIELDS)))
    version_values = _take(row, len(VERSION_FIELDS))
    # What a JSONField's query gives: the driver hands jsonb over as text, the field decodes it.
    content = QuestionVersion._meta.get_field("content")
    version_values[VERSION_FIELDS.index("content")] = content.from_db_value(
        version_values[VERSION_FIELDS.index("content")], None, connection
    )
    response.version = QuestionVersion.from_db(alias, VERSION_FIELDS, version_values)
    order = Response._meta.get_field("choice_order")
    response.choice_order = order.from_db_value(response.choice_order, None, connection)
    picked, struck, positions, answered, flagged, picks, choose = row
    return Shown(
        attempt=attempt,
        response=response,
        picked=frozenset(picked),
        struck=frozenset(struck),
        navigator=[
            navigator_item(p, answered=a, picked=n, choose=c, flagged=f)
            for p, a, f, n, c in zip(positions, answered, flagged, picks, choose)
        ],
    )
