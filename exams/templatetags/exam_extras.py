"""Small display filters for exam pages."""
from datetime import timedelta

from django import template

from exams.room.grading import shown_percent

register = template.Library()


@register.filter
def duration_minutes(value: timedelta | None) -> str:
    """A time span as "42 min 05 s"."""
    if value is None:
        return "—"
    seconds = max(0, int(value.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds:02d} s"


@register.filter
def seconds_as_clock(value: float | None) -> str:
    """Seconds left as "47:05" (or "1:02:03")."""
    if value is None:
        return "—"
    total = max(0, int(value))
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


@register.filter
def percent(value) -> str:
    """A score as learners see it everywhere: one decimal, halves up, from the stored value ("66.7%")."""
    if value is None or value == "":
        return "—"
    return f"{shown_percent(value)}%"


@register.filter
def chance(value) -> str:
    """A probability as a whole percent, never a false certainty: "under 1%", "43%", "over 99%"."""
    if value is None or value == "":
        return "—"
    if value < 0.005:
        return "under 1%"
    if value > 0.995:
        return "over 99%"
    return f"{round(100 * value)}%"
