"""A report names as many choices as the question's Choose N (issue 27, item 6).

`Dispute.choice` (one key) becomes `Dispute.choices` (many): each existing report keeps the
choice it named; one that named none keeps none ("no opinion").
"""
from django.db import migrations, models


def copy_forward(apps, schema_editor):
    Dispute = apps.get_model("exams", "Dispute")
    through = Dispute.choices.through
    through.objects.bulk_create(
        [through(dispute_id=pk, choice_id=choice_id) for pk, choice_id in Dispute.objects.filter(choice__isnull=False).values_list("pk", "choice_id")],
        batch_size=1000,
    )


def copy_back(apps, schema_editor):
    # Back to one choice: the first (by authored order) of those named.
    Dispute = apps.get_model("exams", "Dispute")
    for dispute in Dispute.objects.prefetch_related("choices"):
        named = sorted(dispute.choices.all(), key=lambda choice: (choice.order, choice.pk))
        if named:
            Dispute.objects.filter(pk=dispute.pk).update(choice=named[0])


class Migration(migrations.Migration):

    dependencies = [
        ("exams", "0025_i27_question_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="dispute",
            name="choices",
            field=models.ManyToManyField(
                blank=True, help_text="The choices the learner believes are right (none: no opinion).",
                related_name="disputes_named", to="exams.choice",
            ),
        ),
        migrations.RunPython(copy_forward, copy_back),
        migrations.RemoveField(model_name="dispute", name="choice"),
        migrations.AlterField(
            model_name="dispute",
            name="choices",
            field=models.ManyToManyField(
                blank=True, help_text="The choices the learner believes are right (none: no opinion).",
                related_name="disputes", to="exams.choice",
            ),
        ),
    ]
