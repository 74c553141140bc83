"""Small display filters for exam pages."""
from datetime import timedelta

from django import template

register = template.Library()


@register.filter
def duration_minutes(value: timedelta | None) -> str:
    """A time span as "42 min 05 s"."""
    if value is None:
        return "—"
    seconds = max(0, int(value.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds:02d} s"
