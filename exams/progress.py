"""Reads behind the dashboard: mastery, readiness, trend, reviews due — aggregates in SQL."""
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from exams import readiness, sampling
from exams.models import Attempt, AttemptMode, AttemptStatus, Domain, Exam, Response, ReviewItem

# Mastery looks at this many of the learner's latest answered responses per domain.
MASTERY_WINDOW = 50
# The responses mastery counts, in SQL over a response r of a finished attempt a; the one
# statement of the rule, shared by the learner's dashboard and the cohort report. A mock's
# every slot counts (unanswered is wrong); elsewhere a slot counts once graded, i.e.
# answered in a finished session (checked, or graded at submit). Void slots never.
COUNTED_RESPONSE = f"r.is_correct IS NOT NULL AND (a.mode = '{AttemptMode.MOCK.value}' OR r.answered_at IS NOT NULL)"
# When a counted response was given, for "latest": a mock's unanswered slot takes its attempt's finish.
RESPONSE_STAMP = "COALESCE(r.answered_at, a.finished_at)"
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

    @property
    def mastery(self) -> float | None:
        return readiness.mastery(right=self.right, answered=self.answered)


def domain_standings(*, user, exam: Exam) -> list[DomainStanding]:
    """Per domain: right out of the last 50 counted responses in finished attempts (all modes).

    One query however long the history (see `_standings_sql`). Counted: every slot of a
    mock, an unanswered one as wrong (as the mock's score counts it); outside mocks a slot
    once graded, i.e. answered (checked, or graded when the session was submitted). Void
    slots never count.
    """
    sql, params = _standings_sql(user=user, exam=exam)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        counts = {domain_id: (int(right), int(answered)) for domain_id, right, answered in cursor.fetchall()}
    return [
        DomainStanding(
            domain_id=domain.pk, name=domain.name, weight=domain.weight, order=domain.order,
            right=counts.get(domain.pk, (0, 0))[0], answered=counts.get(domain.pk, (0, 0))[1],
        )
        for domain in exam.domains.all()
    ]


# Mastery first reads the learner's latest 25 finished attempts, then 200, then all.
MASTERY_TIERS = (25, 200)
# How much later than its attempt's finish an answer may be stamped: saves are accepted
# for the grace after a deadline, and a save or submit stamps its time only after waiting
# for the attempt's lock (behind a regrade, say), so a wide margin. A larger one only
# sends more dashboards to the next tier; it never makes a count wrong.
MASTERY_MARGIN = Attempt.GRACE + timedelta(minutes=10)


def _standings_sql(*, user, exam: Exam) -> tuple[str, list]:
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
    margin = int(MASTERY_MARGIN.total_seconds())
    if connection.vendor == "postgresql":
        plus_margin = lambda value: f"({value} + interval '{margin} seconds')"  # noqa: E731
    else:
        # Milliseconds kept (datetime() would drop the fraction), one second more for the
        # microseconds they lose; compared as text, as Django stores datetimes in SQLite.
        plus_margin = lambda value: f"strftime('%%Y-%%m-%%d %%H:%%M:%%f', {value}, '+{margin + 1} seconds')"  # noqa: E731
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
                   COUNT(*) AS answered, MIN(answered_at) AS oldest
            FROM (
                SELECT r.domain_id AS domain_id, r.is_correct AS is_correct, {RESPONSE_STAMP} AS answered_at,
                       ROW_NUMBER() OVER (PARTITION BY r.domain_id ORDER BY {RESPONSE_STAMP} DESC, r.id DESC) AS n
                FROM {response} r
                JOIN recent a ON a.id = r.attempt_id
                WHERE {in_tier} AND {COUNTED_RESPONSE} AND {skipped}
            ) numbered
            WHERE n <= %s
            GROUP BY domain_id
        )""")
        params.append(MASTERY_WINDOW)
        if size is None:
            selects.append(f"SELECT domain_id, right_count, answered FROM tier{tier} WHERE {skipped}")
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
            f"SELECT domain_id, right_count, answered FROM tier{tier} WHERE {skipped} AND (SELECT ok FROM enough{tier})"
        )
        skipped += f" AND NOT (SELECT ok FROM enough{tier})"
    return "WITH " + ",".join(ctes) + "\n" + "\nUNION ALL\n".join(selects), params


def standings_of_learners(*, learners: QuerySet, exam: Exam) -> dict[int, dict[int, DomainStanding]]:
    """domain_standings for many learners at once: per learner id, per domain id. One query.

    `learners` is a queryset of users (a cohort's members, say), read as a subquery. The
    rule is domain_standings' own (COUNTED_RESPONSE, RESPONSE_STAMP): the latest
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
                       PARTITION BY a.user_id, r.domain_id ORDER BY {RESPONSE_STAMP} DESC, r.id DESC
                   ) AS n
            FROM {response} r
            JOIN {attempt} a ON a.id = r.attempt_id
            WHERE a.exam_id = %s AND a.status IN (%s, %s) AND a.user_id IN ({learner_sql}) AND {COUNTED_RESPONSE}
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


def readiness_estimate(standings: list[DomainStanding], *, exam: Exam) -> readiness.Readiness | None:
    """Standing, next mock and P(pass); each domain's seats are the draw's own quotas."""
    if sum(s.answered for s in standings) < readiness.MIN_ANSWERED:
        return None  # also spares an exam without domains the quotas, which it cannot have
    seats = sampling.quotas(
        domains=[sampling.DomainQuota(domain_id=s.domain_id, weight=s.weight, order=s.order) for s in standings],
        total=exam.question_count,
    )
    return readiness.estimate(
        domains=[
            readiness.DomainEvidence(weight=s.weight, right=s.right, answered=s.answered, seats=seats[s.domain_id])
            for s in standings
        ],
        passing_score=exam.passing_score,
    )


def weakest_domain(standings: list[DomainStanding]) -> DomainStanding | None:
    """The domain to drill next: lowest mastery among those with answers, else the heaviest unseen."""
    answered = [s for s in standings if s.answered]
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


def reviews_due(*, user, exam: Exam, today) -> int:
    return ReviewItem.objects.filter(user=user, question__exam=exam, question__is_active=True, due_on__lte=today).count()


def trend_chart(trend: list[Attempt], passing_score: int) -> dict | None:
    """Geometry of the mock score line chart (server-rendered SVG, presentation attributes only)."""
    if not trend:
        return None
    left, top, width, height = 56, 10, 500, 180
    step = width / max(1, len(trend) - 1)
    points = []
    # At most five dates under the axis, first and last included, so they never overlap.
    every = max(1, -(-(len(trend) - 1) // 4))
    for index, attempt in enumerate(trend):
        x = left + (index * step if len(trend) > 1 else width / 2)
        y = top + height - float(attempt.score) / 100 * height
        points.append({"x": round(x, 1), "y": round(y, 1), "attempt": attempt, "dated": index % every == 0})
    last = len(points) - 1
    if not points[last]["dated"]:
        points[last]["dated"] = True
        previous = last - last % every
        if last - previous < every / 2:
            points[previous]["dated"] = previous == 0  # too close to the last date, unless it is the first
    return {
        "points": points,
        "polyline": " ".join(f"{p['x']},{p['y']}" for p in points),
        "pass_y": round(top + height - passing_score / 100 * height, 1),
        "left": left, "right": left + width, "top": top, "bottom": top + height,
        "width": left + width + 40, "height": top + height + 34, "date_y": top + height + 24,
        "ticks": [{"y": round(top + height - v / 100 * height, 1), "label": v} for v in (0, 50, 100)],
        "passing_score": passing_score,
    }
