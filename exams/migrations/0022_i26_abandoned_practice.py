"""Abandoned practice (issue 26): a practice ended before it was submitted is no score.

Before this, "End it and start this one" submitted the running practice, so a session left
with nothing answered stood in the history as "Practice 0.0% (0/21)". Past practices that
were submitted with no answered slot become abandoned: no score, and their never-checked
slots lose the grade the submit gave them. The rest are left as they are, and a timed
practice that ran out stays expired.

An unanswered slot was never a review (exams.study.scheduling.rating_for), so no review
card changes.
"""
from django.db import migrations, models
from django.db.models import Exists, OuterRef

SCORE_FIELDS = {"score": None, "published_score": None, "right_count": None, "total_count": None, "passed": None}


def _unanswered_practices(apps):
    Attempt, Response = apps.get_model("exams", "Attempt"), apps.get_model("exams", "Response")
    answered = Response.objects.filter(attempt=OuterRef("pk"), answered_at__isnull=False)
    return Attempt.objects.filter(mode="practice", status="submitted").filter(~Exists(answered))


def practices_to_abandoned(apps, schema_editor):
    Attempt, Response = apps.get_model("exams", "Attempt"), apps.get_model("exams", "Response")
    abandoned = list(_unanswered_practices(apps).values_list("pk", flat=True))
    Response.objects.filter(attempt_id__in=abandoned, checked_at__isnull=True).update(is_correct=None)
    Attempt.objects.filter(pk__in=abandoned).update(status="abandoned", **SCORE_FIELDS)


def abandoned_to_practices(apps, schema_editor):
    """Back as the old code stored them: submitted, every slot never checked graded wrong."""
    Attempt, Response = apps.get_model("exams", "Attempt"), apps.get_model("exams", "Response")
    abandoned = Attempt.objects.filter(status="abandoned")
    Response.objects.filter(attempt__in=abandoned, checked_at__isnull=True).update(is_correct=False)
    for attempt in abandoned:
        slots = Response.objects.filter(attempt=attempt)
        right = slots.filter(is_correct=True).count()
        total = slots.filter(is_correct__isnull=False).count()
        score = round(100 * right / total, 2) if total else 0
        Attempt.objects.filter(pk=attempt.pk).update(
            status="submitted", score=score, published_score=score, right_count=right, total_count=total, passed=False,
        )


class Migration(migrations.Migration):

    dependencies = [
        ("exams", "0021_question_difficulty_reviewed_on"),
    ]

    operations = [
        migrations.AlterField(
            model_name="attempt",
            name="status",
            field=models.CharField(
                choices=[
                    ("in_progress", "In progress"), ("submitted", "Submitted"), ("expired", "Expired"),
                    ("abandoned", "Abandoned"),
                ],
                default="in_progress",
                max_length=12,
            ),
        ),
        migrations.RunPython(practices_to_abandoned, abandoned_to_practices),
    ]
