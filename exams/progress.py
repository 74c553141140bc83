"""Reads behind the dashboard: mastery, readiness, trend, reviews due — aggregates in SQL."""
from dataclasses import dataclass

from django.db import connection

from exams import readiness
from exams.models import Attempt, AttemptMode, AttemptStatus, Exam, Question, Response, ReviewItem

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

    One query: a window function numbers each domain's responses newest first (portable to
    SQLite 3.25+); unanswered and voided responses are left out.
    """
    response, attempt, question = Response._meta.db_table, Attempt._meta.db_table, Question._meta.db_table
    sql = f"""
        SELECT domain_id, SUM(CASE WHEN is_correct THEN 1 ELSE 0 END), COUNT(*)
        FROM (
            SELECT q.domain_id AS domain_id, r.is_correct AS is_correct,
                   ROW_NUMBER() OVER (PARTITION BY q.domain_id ORDER BY r.answered_at DESC, r.id DESC) AS n
            FROM {response} r
            JOIN {attempt} a ON a.id = r.attempt_id
            JOIN {question} q ON q.id = r.question_id
            WHERE a.user_id = %s AND a.exam_id = %s AND a.status IN (%s, %s)
              AND r.answered_at IS NOT NULL AND r.is_correct IS NOT NULL
        ) latest
        WHERE n <= %s
        GROUP BY domain_id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [user.pk, exam.pk, AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED, MASTERY_WINDOW])
        counts = {domain_id: (int(right), int(answered)) for domain_id, right, answered in cursor.fetchall()}
    return [
        DomainStanding(
            domain_id=domain.pk, name=domain.name, weight=domain.weight,
            right=counts.get(domain.pk, (0, 0))[0], answered=counts.get(domain.pk, (0, 0))[1],
        )
        for domain in exam.domains.all()
    ]


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
