"""Reads behind the dashboard: mastery, readiness, trend, reviews due — aggregates in SQL."""
import datetime
from dataclasses import dataclass

from django.db import connection
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

from exams import readiness
from exams.models import Attempt, AttemptMode, AttemptStatus, Exam, Response, ReviewItem

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

    @property
    def mastery(self) -> float | None:
        return readiness.mastery(right=self.right, answered=self.answered)


def domain_standings(*, user, exam: Exam) -> list[DomainStanding]:
    """Per domain: right out of the last 50 answered responses in finished attempts (all modes).

    A window function numbers each domain's responses newest first (portable to SQLite
    3.25+); unanswered and voided responses are left out. To keep the dashboard's cost
    flat as history grows, it first numbers only the responses of the learner's latest
    attempts, and widens that window only for an answer it cannot yet prove is complete
    (see `_window_counts`); a learner who has taken every domain lately needs one query.
    """
    domains = list(exam.domains.all())
    counts: dict[int, tuple[int, int]] = {}
    pending = {domain.pk for domain in domains}
    limit: int | None = FIRST_ATTEMPT_WINDOW
    while pending:
        window = _window_counts(user=user, exam=exam, limit=limit)
        for domain_id in list(pending):
            right, answered, oldest = window.domains.get(domain_id, (0, 0, None))
            # Exact once nothing outside the window can be newer than this domain's 50th
            # answer, or when the window holds every finished attempt.
            if window.complete or (answered == MASTERY_WINDOW and oldest > window.newest_outside):
                counts[domain_id] = (right, answered)
                pending.discard(domain_id)
        limit = limit * WINDOW_GROWTH if limit and limit * WINDOW_GROWTH < LAST_WINDOW else None
    return [
        DomainStanding(
            domain_id=domain.pk, name=domain.name, weight=domain.weight,
            right=counts[domain.pk][0], answered=counts[domain.pk][1],
        )
        for domain in domains
    ]


# The first window of latest attempts, how fast it widens, and the width past which the
# whole history is read at once.
FIRST_ATTEMPT_WINDOW = 25
WINDOW_GROWTH = 4
LAST_WINDOW = 1000


@dataclass(frozen=True)
class _Window:
    # domain id → (right, answered, answered_at of the oldest of the counted answers)
    domains: dict
    # True when the window held every finished attempt of the learner on this exam.
    complete: bool
    # No answer outside the window is later than this: an answer is saved before its
    # attempt finishes, or within the grace after an expired attempt's deadline.
    newest_outside: object


def _window_counts(*, user, exam: Exam, limit: int | None) -> _Window:
    """Mastery counts over the learner's `limit` latest finished attempts (all when None).

    One query; its last row (domain NULL) carries how many attempts the window took and
    when the oldest of them finished.
    """
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    limit_sql = "LIMIT %s" if limit else ""
    sql = f"""
        WITH recent AS (
            SELECT id, finished_at FROM {attempt}
            WHERE user_id = %s AND exam_id = %s AND status IN (%s, %s)
            ORDER BY finished_at DESC, id DESC {limit_sql}
        ),
        latest AS (
            SELECT r.domain_id AS domain_id, r.is_correct AS is_correct, r.answered_at AS answered_at,
                   ROW_NUMBER() OVER (PARTITION BY r.domain_id ORDER BY r.answered_at DESC, r.id DESC) AS n
            FROM {response} r
            JOIN recent a ON a.id = r.attempt_id
            WHERE r.answered_at IS NOT NULL AND r.is_correct IS NOT NULL
        )
        SELECT domain_id, SUM(CASE WHEN is_correct THEN 1 ELSE 0 END), COUNT(*), MIN(answered_at)
        FROM latest WHERE n <= %s GROUP BY domain_id
        UNION ALL
        SELECT NULL, 0, COUNT(*), MIN(finished_at) FROM recent
    """
    params = [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED]
    params += [limit] if limit else []
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, MASTERY_WINDOW])
        rows = cursor.fetchall()
    domains, complete, newest_outside = {}, True, None
    for domain_id, right, answered, oldest in rows:
        if domain_id is None:
            complete = limit is None or answered < limit
            if oldest is not None:
                newest_outside = _as_datetime(oldest) + Attempt.GRACE
        else:
            domains[domain_id] = (int(right), int(answered), _as_datetime(oldest))
    return _Window(domains=domains, complete=complete, newest_outside=newest_outside)


def _as_datetime(value):
    """SQLite hands a raw cursor's timestamps back as text."""
    if isinstance(value, str):
        parsed = parse_datetime(value)
        return make_aware(parsed, timezone=datetime.UTC) if is_naive(parsed) else parsed
    return value


def readiness_estimate(standings: list[DomainStanding]) -> readiness.Readiness | None:
    return readiness.estimate(
        domains=[readiness.DomainEvidence(weight=s.weight, right=s.right, answered=s.answered) for s in standings]
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
    left, top, width, height = 40, 10, 520, 180
    step = width / max(1, len(trend) - 1)
    points = []
    for index, attempt in enumerate(trend):
        x = left + (index * step if len(trend) > 1 else width / 2)
        y = top + height - float(attempt.score) / 100 * height
        points.append({"x": round(x, 1), "y": round(y, 1), "attempt": attempt})
    return {
        "points": points,
        "polyline": " ".join(f"{p['x']},{p['y']}" for p in points),
        "pass_y": round(top + height - passing_score / 100 * height, 1),
        "left": left, "right": left + width, "top": top, "bottom": top + height,
        "width": left + width + 20, "height": top + height + 30,
        "ticks": [{"y": round(top + height - v / 100 * height, 1), "label": v} for v in (0, 50, 100)],
        "passing_score": passing_score,
    }
