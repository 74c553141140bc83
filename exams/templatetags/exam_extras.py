"""Small display filters for exam pages."""
from datetime import timedelta

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

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


# The mastery multiples' per-point markup, printed in Python: 7 domains x 20 mocks x 3 pieces went
# through the template engine's loops on every dashboard (a third of its Python time at 1,000
# attempts). The markup is the template's own, character for character.
@register.simple_tag
def mastery_chart_title(chart: dict, held_text: str) -> str:
    """The chart's accessible title: every mock's date and mastery, or held, or no answers yet."""
    def shown(point: dict) -> str:
        if point["held"]:
            return held_text
        return percent(point["point"].mastery) if point["y"] is not None else "no answers yet"

    each = "".join(f"; {point['day']}: {shown(point)}" for point in chart["points"])
    return mark_safe(escape(f"Mastery in {chart['name']} after each mock{each}"))  # noqa: S308 (escaped here)


@register.simple_tag
def mastery_chart_points(chart: dict) -> str:
    """Each mock's date label (where dated) and its point with a tooltip. Numbers are the chart's own
    floats and ints; the only text, the dates, is escaped."""
    pieces = []
    for point in chart["points"]:
        if point["dated"]:
            pieces.append(f'<text x="{point["x"]}" y="{chart["date_y"]}" text-anchor="middle" class="chart-date">{escape(point["day"])}</text>')
        if point["y"] is not None:
            mastered = point["point"]
            passing = " is-passing" if point["passing"] else ""
            pieces.append(f'<circle cx="{point["x"]}" cy="{point["y"]}" r="3.5" class="chart-point{passing}"><title>{escape(point["date"])}: '
                          f'{percent(mastered.mastery)} ({int(mastered.right)}/{int(mastered.answered)})</title></circle>')
    return mark_safe("\n".join(pieces))  # noqa: S308 (numbers, and text escaped above)
