"""Reads behind the dashboard: mastery, readiness, trend, mastery over time, reviews due — aggregates in SQL."""
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count, Min, Q, QuerySet
from django.db.models.functions import Now
from django.utils import formats
from django.utils.timezone import template_localtime

from exams.models import (
    Attempt, AttemptMode, AttemptStatus, Certainty, Domain, Exam, Response, ReviewCard, learner_questions,
)
from exams.room import draw
from exams.room.access import running_mock_question_ids
from exams.study import readiness, reviews

# Mastery looks at this many of the learner's latest answered responses per domain.
MASTERY_WINDOW = 50
# Mock scores drawn on the trend chart.
TREND_LENGTH = 20


@dataclass(frozen=True)
class DomainStanding:
    domain_id: int
    name: str
    weight: int
    right: int
    answered: int
    order: int = 0
    # Counted answers to questions the learner's running mock holds: the figure is then held.
    held: int = 0

    @property
    def mastery(self) -> float | None:
        return readiness.mastery(right=self.right, answered=self.answered)


def _held_flag(held: frozenset[int]) -> tuple[str, list]:
    """SQL (over the alias r) that is 1 for an answer to a held question, and its params."""
    if not held:
        return "0", []
    return f"CASE WHEN r.question_id IN ({', '.join(['%s'] * len(held))}) THEN 1 ELSE 0 END", sorted(held)


def domain_standings(*, user, exam: Exam, held: frozenset[int] = frozenset()) -> list[DomainStanding]:
    """Per domain: right out of the last 50 counted responses in finished attempts (all modes).

    One query however long the history (see `_standings_sql`). Counted: every slot of a
    mock, an unanswered one as wrong (as the mock's score counts it); outside mocks a slot
    once graded, i.e. answered (checked, or graded when the session was submitted). Void
    slots never count. `held`: the running mock's questions (exams.room.access.held_back);
    a standing counting an answer to one says how many (`held`), so the page holds it back.
    """
    sql, params = _standings_sql(user=user, exam=exam, held=held)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        counts = {domain_id: (int(right), int(answered), int(held)) for domain_id, right, answered, held in cursor.fetchall()}
    return [
        DomainStanding(
            domain_id=domain.pk, name=domain.name, weight=domain.weight, order=domain.order,
            right=counts.get(domain.pk, (0, 0, 0))[0], answered=counts.get(domain.pk, (0, 0, 0))[1],
            held=counts.get(domain.pk, (0, 0, 0))[2],
        )
        for domain in exam.domains.all()
    ]


# Which responses mastery counts, and the time that orders them newest first: the one
# statement of the rule, used by the standings, mastery over time and the cohort report.
# SQL over the aliases r (the response) and a (its attempt, with its mode and finished_at).
# A mock's every slot counts (unanswered is wrong); elsewhere a slot counts once graded,
# i.e. answered in a finished session (checked, or graded at submit). Void slots never.
# A mock's unanswered slot takes its attempt's finish as its time.
MASTERY_COUNTED = f"r.is_correct IS NOT NULL AND (a.mode = '{AttemptMode.MOCK.value}' OR r.answered_at IS NOT NULL)"
MASTERY_STAMP = "COALESCE(r.answered_at, a.finished_at)"

# Mastery first reads the learner's latest 25 finished attempts, then 200, then all.
MASTERY_TIERS = (25, 200)
# How much later than its attempt's finish an answer may be stamped: saves are accepted
# for the grace after a deadline, and a save or submit stamps its time only after waiting
# for the attempt's lock (behind a regrade, say), so a wide margin. A larger one only
# sends more dashboards to the next tier; it never makes a count wrong.
MASTERY_MARGIN = Attempt.GRACE + timedelta(minutes=10)


def _plus_margin(value: str) -> str:
    """SQL for the time `value` plus MASTERY_MARGIN."""
    margin = int(MASTERY_MARGIN.total_seconds())
    if connection.vendor == "postgresql":
        return f"({value} + interval '{margin} seconds')"
    # Milliseconds kept (datetime() would drop the fraction), one second more for the
    # microseconds they lose; compared as text, as Django stores datetimes in SQLite.
    return f"strftime('%%Y-%%m-%%d %%H:%%M:%%f', {value}, '+{margin + 1} seconds')"


def _standings_sql(*, user, exam: Exam, held: frozenset[int] = frozenset()) -> tuple[str, list]:
    """The mastery counts in one statement whose cost follows recent history, not all of it.

    A window function numbers each domain's answers newest first (portable to SQLite
    3.25+). Numbering every answer of a long history is what made the dashboard slow, so
    the statement first numbers only the answers of the learner's latest 25 attempts. That
    tier is the answer when it holds every finished attempt, or when each of the exam's
    domains has 50 answers there, the oldest of them later than anything outside the
    tier could be: an answer is stamped before its attempt finishes, or at most
    MASTERY_MARGIN after. Otherwise the next tier (200 attempts), then the
    whole history, answers. Each tier runs only when the one before fell short: on
    PostgreSQL its gate is a one-time filter, so a skipped tier is never executed.
    """
    response, attempt, domain = Response._meta.db_table, Attempt._meta.db_table, Domain._meta.db_table
    plus_margin = _plus_margin
    held_flag, held_params = _held_flag(held)
    ctes = [f"""
        recent AS (
            SELECT id, mode, finished_at, ROW_NUMBER() OVER (ORDER BY finished_at DESC, id DESC) AS k
            FROM {attempt}
            WHERE user_id = %s AND exam_id = %s AND status IN (%s, %s)
        )"""]
    params: list = [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED]
    selects, skipped = [], "1 = 1"
    for tier, size in enumerate((*MASTERY_TIERS, None), start=1):
        in_tier = f"a.k <= {size}" if size else "1 = 1"
        ctes.append(f"""
        tier{tier} AS (
            SELECT domain_id, SUM(CASE WHEN is_correct THEN 1 ELSE 0 END) AS right_count,
                   COUNT(*) AS answered, MIN(answered_at) AS oldest, SUM(held) AS held_count
            FROM (
                SELECT r.domain_id AS domain_id, r.is_correct AS is_correct, {MASTERY_STAMP} AS answered_at,
                       {held_flag} AS held,
                       ROW_NUMBER() OVER (PARTITION BY r.domain_id ORDER BY {MASTERY_STAMP} DESC, r.id DESC) AS n
                FROM {response} r
                JOIN recent a ON a.id = r.attempt_id
                WHERE {in_tier} AND {MASTERY_COUNTED} AND {skipped}
            ) numbered
            WHERE n <= %s
            GROUP BY domain_id
        )""")
        params += [*held_params, MASTERY_WINDOW]
        if size is None:
            selects.append(f"SELECT domain_id, right_count, answered, held_count FROM tier{tier} WHERE {skipped}")
            break
        ctes.append(f"""
        enough{tier} AS (
            SELECT (SELECT COUNT(*) FROM recent) <= {size} OR NOT EXISTS (
                SELECT 1 FROM {domain} d LEFT JOIN tier{tier} t ON t.domain_id = d.id
                WHERE d.exam_id = %s AND NOT (
                    COALESCE(t.answered, 0) = %s
                    AND t.oldest > {plus_margin(f"(SELECT MAX(finished_at) FROM recent WHERE k > {size})")}
                )
            ) AS ok
        )""")
        params += [exam.pk, MASTERY_WINDOW]
        selects.append(
            f"SELECT domain_id, right_count, answered, held_count FROM tier{tier} WHERE {skipped} AND (SELECT ok FROM enough{tier})"
        )
        skipped += f" AND NOT (SELECT ok FROM enough{tier})"
    return "WITH " + ",".join(ctes) + "\n" + "\nUNION ALL\n".join(selects), params


@dataclass(frozen=True)
class MasteryPoint:
    """A domain's mastery as it stood right after one mock."""

    mock_id: int
    finished_at: datetime
    right: int
    answered: int
    held: int = 0  # answers to questions the running mock holds: the point is held back

    @property
    def mastery(self) -> float | None:
        return readiness.mastery(right=self.right, answered=self.answered)


@dataclass(frozen=True)
class DomainHistory:
    domain_id: int
    name: str
    points: list[MasteryPoint]


def mastery_history(*, user, exam: Exam, mocks: list[Attempt], held: frozenset[int] = frozenset()) -> list[DomainHistory]:
    """Per domain, mastery as it stood after each of `mocks` (the trend's, oldest first).

    The standings' rule (MASTERY_COUNTED, MASTERY_STAMP, the last 50 per domain) over the
    responses of the attempts finished up to that mock, graded as they are now: a later
    correction moves past points too. Two queries for all the mocks: the first tier's
    answers, read once for every mock (`_first_tier_history`), and the tiered statement
    (`_history_sql`), which PostgreSQL skips without executing when the first tier answered.
    """
    domains = list(exam.domains.all())
    counts: dict[tuple[int, int], tuple[int, int, int]] | None = {}
    if mocks:
        mock_ids = [mock.pk for mock in mocks]
        counts = _first_tier_history(user=user, exam=exam, mock_ids=mock_ids, domain_ids=[d.pk for d in domains], held=held)
        sql, params = _history_sql(user=user, exam=exam, mock_ids=mock_ids, held=held, needed=counts is None)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if counts is None:
            counts = {
                (mock_id, domain_id): (int(right), int(n), int(held_count))
                for mock_id, domain_id, right, n, held_count in rows
            }
    return [
        DomainHistory(
            domain_id=domain.pk, name=domain.name,
            points=[MasteryPoint(mock.pk, mock.finished_at, *counts.get((mock.pk, domain.pk), (0, 0, 0))) for mock in mocks],
        )
        for domain in domains
    ]


def _microseconds(value: str) -> str:
    """SQL for a timestamp as whole microseconds since the epoch (PostgreSQL): exact, and
    read without building an aware datetime per row."""
    return f"(EXTRACT(EPOCH FROM {value}) * 1000000)::bigint"


def _first_tier_history(
    *, user, exam: Exam, mock_ids: list[int], domain_ids: list[int], held: frozenset[int],
) -> dict[tuple[int, int], tuple[int, int, int]] | None:
    """`_history_sql`'s first tier, in Python over one read of its answers; None when it is not
    the answer (then the tiered statement is). One query.

    The mocks' windows of MASTERY_TIERS[0] attempts overlap (the trend's 20 mocks are mostly
    consecutive attempts), so the statement read each answer once per mock, numbering 20 times
    the rows: the heaviest statement of the 1,000-attempt dashboard (docs/BENCHMARKS.md). Here
    the answers of the attempts from the oldest mock's window to the newest mock are read once,
    newest first, with every attempt of that span and the one past each window (its finish is
    the tier's test), and each mock's window is taken from them. PostgreSQL only: elsewhere the
    tiered statement answers (None).
    """
    if connection.vendor != "postgresql":
        return None
    size = MASTERY_TIERS[0]
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    marks = ", ".join(["%s"] * len(mock_ids))
    sql = f"""
        WITH recent AS (
            SELECT id, mode, finished_at, ROW_NUMBER() OVER (ORDER BY finished_at DESC, id DESC) AS k
            FROM {attempt}
            WHERE user_id = %s AND exam_id = %s AND status IN (%s, %s)
        ), span AS (SELECT MIN(k) AS low, MAX(k) AS high FROM recent WHERE id IN ({marks}))
        SELECT a.id, a.k, {_microseconds("a.finished_at")}, r.id, r.question_id, r.domain_id, r.is_correct,
               {_microseconds(MASTERY_STAMP)}
        FROM recent a
        JOIN span ON a.k >= span.low AND a.k <= span.high + {size}
        LEFT JOIN {response} r ON r.attempt_id = a.id AND {MASTERY_COUNTED}
        ORDER BY {MASTERY_STAMP} DESC, r.id DESC
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, *mock_ids])
        rows = cursor.fetchall()
    rank: dict[int, int] = {}
    finished: dict[int, int] = {}
    margin = int(MASTERY_MARGIN / timedelta(microseconds=1))
    answers = []
    for attempt_id, k, finished_at, response_id, question_id, domain_id, is_correct, stamp in rows:
        rank[attempt_id] = k
        finished[k] = finished_at
        if response_id is not None:
            answers.append((k, domain_id, bool(is_correct), question_id in held, stamp))
    ranks = np.array([a[0] for a in answers], dtype=np.int64)
    domains = np.array([a[1] for a in answers], dtype=np.int64)
    right = np.array([a[2] for a in answers], dtype=bool)
    held_flags = np.array([a[3] for a in answers], dtype=bool)
    in_domain = {domain_id: np.flatnonzero(domains == domain_id) for domain_id in domain_ids}
    counts: dict[tuple[int, int], tuple[int, int, int]] = {}
    for mock_id in mock_ids:
        if mock_id not in rank:
            continue  # not a finished attempt of this learner and exam: the statement finds no row either
        k = rank[mock_id]
        beyond = finished.get(k + size)
        for domain_id, positions in in_domain.items():
            window = positions[(ranks[positions] >= k) & (ranks[positions] < k + size)][:MASTERY_WINDOW]
            # The tier holds unless an answer beyond the window could be newer than its oldest.
            if beyond is not None and not (len(window) == MASTERY_WINDOW and answers[window[-1]][4] > beyond + margin):
                return None
            if len(window):
                counts[(mock_id, domain_id)] = (int(right[window].sum()), len(window), int(held_flags[window].sum()))
    return counts


def _history_sql(
    *, user, exam: Exam, mock_ids: list[int], held: frozenset[int] = frozenset(), needed: bool = True,
) -> tuple[str, list]:
    """Each mock's mastery counts in one statement, tiered as `_standings_sql` is.

    Attempts are ranked newest first (k); a mock's eligible attempts are those ranked at
    or after it. Tier t reads, for each mock, only the MASTERY_TIERS[t] attempts from it
    back; it is the answer when every (mock, domain) either has no attempt beyond its
    window or has 50 answers there, the oldest later than anything beyond could be
    stamped. Otherwise the next tier, then the whole history. On PostgreSQL a skipped
    tier is never executed (its gate is a one-time filter).
    """
    response, attempt, domain = Response._meta.db_table, Attempt._meta.db_table, Domain._meta.db_table
    marks = ", ".join(["%s"] * len(mock_ids))
    held_flag, held_params = _held_flag(held)
    ctes = [f"""
        recent AS (
            SELECT id, mode, finished_at, ROW_NUMBER() OVER (ORDER BY finished_at DESC, id DESC) AS k
            FROM {attempt}
            WHERE user_id = %s AND exam_id = %s AND status IN (%s, %s)
        )""", f"""
        mocks AS (SELECT id, k FROM recent WHERE id IN ({marks}))"""]
    params: list = [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, *mock_ids]
    selects, skipped = [], "1 = 1"
    for tier, size in enumerate((*MASTERY_TIERS, None), start=1):
        in_window = f"a.k >= m.k AND a.k < m.k + {size}" if size else "a.k >= m.k"
        ctes.append(f"""
        tier{tier} AS (
            SELECT mock_id, domain_id, SUM(CASE WHEN is_correct THEN 1 ELSE 0 END) AS right_count,
                   COUNT(*) AS answered, MIN(stamp) AS oldest, SUM(held) AS held_count
            FROM (
                SELECT m.id AS mock_id, r.domain_id AS domain_id, r.is_correct AS is_correct, {MASTERY_STAMP} AS stamp,
                       {held_flag} AS held,
                       ROW_NUMBER() OVER (PARTITION BY m.id, r.domain_id ORDER BY {MASTERY_STAMP} DESC, r.id DESC) AS n
                FROM mocks m
                JOIN recent a ON {in_window}
                JOIN {response} r ON r.attempt_id = a.id
                WHERE {MASTERY_COUNTED} AND {skipped}
            ) numbered
            WHERE n <= %s
            GROUP BY mock_id, domain_id
        )""")
        params += [*held_params, MASTERY_WINDOW]
        if size is None:
            selects.append(f"SELECT mock_id, domain_id, right_count, answered, held_count FROM tier{tier} WHERE {skipped}")
            break
        beyond = f"(SELECT o.finished_at FROM recent o WHERE o.k = m.k + {size})"
        ctes.append(f"""
        enough{tier} AS (
            SELECT NOT EXISTS (
                SELECT 1 FROM mocks m
                JOIN {domain} d ON d.exam_id = %s
                LEFT JOIN tier{tier} t ON t.mock_id = m.id AND t.domain_id = d.id
                WHERE {beyond} IS NOT NULL AND NOT (
                    COALESCE(t.answered, 0) = %s AND t.oldest > {_plus_margin(beyond)}
                )
            ) AS ok
        )""")
        params += [exam.pk, MASTERY_WINDOW]
        selects.append(
            f"SELECT mock_id, domain_id, right_count, answered, held_count FROM tier{tier} WHERE {skipped} AND (SELECT ok FROM enough{tier})"
        )
        skipped += f" AND NOT (SELECT ok FROM enough{tier})"
    # Not needed (the first tier answered in Python): a constant false the planner folds, so
    # nothing runs, yet the page's statements stay the same in number.
    union = "\nUNION ALL\n".join(selects)
    return "WITH " + ",".join(ctes) + f"\nSELECT * FROM ({union}) tiers WHERE {'TRUE' if needed else 'FALSE'}", params


def standings_of_learners(*, learners: QuerySet, exam: Exam) -> dict[int, dict[int, DomainStanding]]:
    """domain_standings for many learners at once: per learner id, per domain id. One query.

    `learners` is a queryset of users (a cohort's members, say), read as a subquery. The
    rule is domain_standings' own (MASTERY_COUNTED, MASTERY_STAMP): the latest
    MASTERY_WINDOW counted responses per domain in finished attempts of every mode. Without the dashboard's tiers: a report over many
    learners numbers their whole histories once, instead of three statements per learner.
    """
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    try:
        learner_sql, learner_params = learners.order_by().values("pk").query.get_compiler(using="default").as_sql()
    except EmptyResultSet:
        return {}
    sql = f"""
        SELECT user_id, domain_id, SUM(CASE WHEN is_correct THEN 1 ELSE 0 END), COUNT(*)
        FROM (
            SELECT a.user_id AS user_id, r.domain_id AS domain_id, r.is_correct AS is_correct,
                   ROW_NUMBER() OVER (
                       PARTITION BY a.user_id, r.domain_id ORDER BY {MASTERY_STAMP} DESC, r.id DESC
                   ) AS n
            FROM {response} r
            JOIN {attempt} a ON a.id = r.attempt_id
            WHERE a.exam_id = %s AND a.status IN (%s, %s) AND a.user_id IN ({learner_sql}) AND {MASTERY_COUNTED}
        ) numbered
        WHERE n <= %s
        GROUP BY user_id, domain_id
    """
    params = [exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, *learner_params, MASTERY_WINDOW]
    counts: dict[int, dict[int, tuple[int, int]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for user_id, domain_id, right, answered in cursor.fetchall():
            counts.setdefault(user_id, {})[domain_id] = (int(right), int(answered))
    domains = list(exam.domains.all())
    return {
        user_id: {
            domain.pk: DomainStanding(
                domain_id=domain.pk, name=domain.name, weight=domain.weight, order=domain.order,
                right=by_domain.get(domain.pk, (0, 0))[0], answered=by_domain.get(domain.pk, (0, 0))[1],
            )
            for domain in domains
        }
        for user_id, by_domain in counts.items()
    }


def weakest_domain(standings: list[DomainStanding], ability: dict[int, float] | None = None) -> DomainStanding | None:
    """The domain to drill next: the lowest per-domain ability (exams.study.ability: the expected
    share right on the domain's reference questions, so practising one's mistakes does not make
    a domain look weaker), else the lowest mastery among those with answers, else the heaviest unseen.

    A held standing (one counting an answer the running mock holds) takes no part: which
    domain is weakest would tell its mastery.
    """
    standings = [s for s in standings if not s.held]
    answered = [s for s in standings if s.answered]
    if answered and ability:
        return min(answered, key=lambda s: (ability.get(s.domain_id, 100.0), -s.weight, s.domain_id))
    if answered:
        return min(answered, key=lambda s: (s.mastery, -s.weight, s.domain_id))
    return max(standings, key=lambda s: (s.weight, -s.domain_id), default=None)


def mock_trend(*, user, exam: Exam) -> list[Attempt]:
    """The learner's latest finished mocks, oldest first."""
    latest = list(
        Attempt.objects.finished()
        .filter(user=user, exam=exam, mode=AttemptMode.MOCK)
        .order_by("-finished_at", "-pk")
        .only("pk", "finished_at", "score", "passed")[:TREND_LENGTH]
    )
    return latest[::-1]


def reviews_due(*, user, exam: Exam) -> int:
    """How many of the learner's review cards of this exam are due now."""
    return ReviewCard.objects.due(user=user, exam=exam).count()


@dataclass(frozen=True)
class ReviewOutlook:
    due: int
    next_due: datetime | None  # the first card due after now
    # "Practise my mistakes now": questions on a learning step or answered wrong in the last
    # 7 days; counted only when nothing is due (it is offered only then), else 0.
    mistakes: int = 0


def review_outlook(*, user, exam: Exam) -> ReviewOutlook:
    """Cards due now, when the next one falls due, and the mistakes to offer: two queries.

    A running mock's questions are left out, as the review draw leaves them out: when a
    card falls due follows whether it was answered right (the key rule).
    """
    cards = ReviewCard.objects.filter(learner_questions("question__"), user=user, question__exam=exam).exclude(
        question_id__in=running_mock_question_ids(user)
    )
    counts = cards.aggregate(due_now=Count("pk", filter=Q(due__lte=Now())), due_later=Min("due", filter=Q(due__gt=Now())))
    # Always run, so the page's query count is fixed; one count over both sources, driven by
    # the learner's own rows (both keep to the exam's active questions): counting the bank's
    # questions that are in either read all 10,000 at bench/scale.
    excluded = running_mock_question_ids(user)
    mistakes = (
        reviews.learning_cards(user=user, exam=exam).exclude(question_id__in=excluded).order_by().values("question_id")
        .union(reviews.recent_mistakes(user=user, exam=exam).exclude(question_id__in=excluded).order_by().values("question_id"))
        .count()
    )
    return ReviewOutlook(due=counts["due_now"], next_due=counts["due_later"], mistakes=0 if counts["due_now"] else mistakes)


# Calibration shows once this many "sure" answers are graded: fewer would say little.
CALIBRATION_AFTER = 20


@dataclass(frozen=True)
class Calibration:
    """How often the learner was right when they said they were sure (issue 26)."""

    sure: int
    right: int

    @property
    def shown(self) -> bool:
        return self.sure >= CALIBRATION_AFTER

    @property
    def percent(self) -> int:
        return round(100 * self.right / self.sure) if self.sure else 0


def certainty_calibration(*, user, exam: Exam) -> Calibration:
    """The learner's graded "sure" answers of this exam, and how many were right: one query.

    Counted: a finished attempt's graded answers, and answers already checked in a session
    still running (their verdict is on the page). Never an abandoned practice's, nor a
    running mock's (no verdict yet), nor a voided item (no key).
    """
    counts = Response.objects.filter(
        Q(attempt__status__in=Attempt.FINISHED_STATUSES) | Q(attempt__status=AttemptStatus.IN_PROGRESS, checked_at__isnull=False),
        attempt__user=user, attempt__exam=exam, certainty=Certainty.SURE, answered_at__isnull=False, is_correct__isnull=False,
    ).aggregate(sure=Count("pk"), right=Count("pk", filter=Q(is_correct=True)))
    return Calibration(sure=counts["sure"], right=counts["right"])


def _dated_indexes(count: int, *, most: int) -> set[int]:
    """Which of `count` evenly spaced points get a date under the axis: at most `most`,
    first and last included, never two so close that they overlap."""
    if count == 0:
        return set()
    every = max(1, -(-(count - 1) // (most - 1)))
    dated = {index for index in range(count) if index % every == 0}
    last = count - 1
    if last not in dated:
        dated.add(last)
        previous = last - last % every
        if last - previous < every / 2 and previous != 0:
            dated.discard(previous)  # too close to the last date, unless it is the first
    return dated


def trend_chart(trend: list[Attempt], passing_score: int, *, held: frozenset[int] = frozenset()) -> dict | None:
    """Geometry of the mock score line chart (server-rendered SVG, presentation attributes only).

    A mock in `held` (attempt ids whose score counts a question the running mock holds)
    keeps its place and date but no height: it is named held, and the line skips it.
    """
    if not trend:
        return None
    # The left margin holds "100%" at the phone's larger label size (22 units), not just the desktop's.
    left, top, width, height = 72, 16, 500, 180
    step = width / max(1, len(trend) - 1)
    dated = _dated_indexes(len(trend), most=5)
    points = []
    for index, attempt in enumerate(trend):
        x = left + (index * step if len(trend) > 1 else width / 2)
        is_held = attempt.pk in held
        y = None if is_held else round(top + height - float(attempt.score) / 100 * height, 1)
        points.append({"x": round(x, 1), "y": y, "attempt": attempt, "dated": index in dated, "held": is_held})
    return {
        "points": points,
        "polyline": " ".join(f"{p['x']},{p['y']}" for p in points if p["y"] is not None),
        "drawn": sum(p["y"] is not None for p in points),
        "pass_y": round(top + height - passing_score / 100 * height, 1),
        "left": left, "right": left + width, "top": top, "bottom": top + height,
        "width": left + width + 40, "height": top + height + 34, "date_y": top + height + 24,
        "ticks": [{"y": round(top + height - v / 100 * height, 1), "label": v} for v in (0, 50, 100)],
        "passing_score": passing_score,
    }


def mastery_charts(histories: list[DomainHistory], passing_score: int) -> list[dict]:
    """Geometry of the small multiples: one line per domain, mastery after each mock, dated.

    Every chart shares the same mocks on its x axis and 0–100% on its y axis, so they
    compare at a glance; a mock with no counted answer in a domain yet leaves a gap.
    """
    left, top, width, height = 38, 8, 210, 84
    charts = []
    # Each mock's date as the template's |date:"j M" and "j M Y" print it, formatted once per
    # mock rather than in every chart (7 domains x 20 points x 3 dates went through the
    # template's localized date filter on every dashboard).
    days: dict[datetime, tuple[str, str]] = {}
    for history in histories:
        for point in history.points:
            if point.finished_at not in days:
                local = template_localtime(point.finished_at)
                days[point.finished_at] = (formats.date_format(local, "j M"), formats.date_format(local, "j M Y"))
    for history in histories:
        count = len(history.points)
        if not count:
            continue
        step = width / max(1, count - 1)
        dated = _dated_indexes(count, most=3)
        points, runs, run = [], [], []
        for index, point in enumerate(history.points):
            x = round(left + (index * step if count > 1 else width / 2), 1)
            # A point counting a held answer is drawn as a gap and named held.
            mastery = None if point.held else point.mastery
            y = None if mastery is None else round(top + height - mastery / 100 * height, 1)
            passing = mastery is not None and mastery >= passing_score
            day, date = days[point.finished_at]
            points.append({"x": x, "y": y, "point": point, "dated": index in dated, "passing": passing, "held": bool(point.held),
                           "day": day, "date": date})
            if y is not None:
                run.append(f"{x},{y}")
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
        last = next((p for p in reversed(history.points) if p.mastery is not None), None)
        charts.append({
            "domain_id": history.domain_id, "name": history.name,
            "latest": last.mastery if last is not None and not last.held else None,
            "latest_held": last is not None and bool(last.held),
            "points": points, "lines": [" ".join(r) for r in runs if len(r) > 1],
            "pass_y": round(top + height - passing_score / 100 * height, 1),
            "left": left, "right": left + width, "top": top, "bottom": top + height,
            "width": left + width + 24, "height": top + height + 26, "date_y": top + height + 18,
            "ticks": [{"y": round(top + height - v / 100 * height, 1), "label": v} for v in (0, 100)],
            "passing_score": passing_score,
        })
    return charts
