"""Freeze each response's domain at the draw, copying today's domain into existing rows.

Until now a response's domain was read live through its question, so moving a question
to another domain rewrote past per-domain results. The column is filled here and made
NOT NULL in 0010: PostgreSQL refuses to alter a table with pending deferred foreign-key
checks in the transaction that updated it.
"""
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_domains(apps, schema_editor):
    Response = apps.get_model("exams", "Response")
    Question = apps.get_model("exams", "Question")
    Response.objects.filter(domain__isnull=True).update(
        domain_id=Subquery(Question.objects.filter(pk=OuterRef("question_id")).values("domain_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [("exams", "0008_fillfactor")]
    operations = [
        migrations.AddField(
            model_name="response",
            name="domain",
            field=models.ForeignKey(
                null=True, db_index=False, on_delete=models.PROTECT, related_name="+", to="exams.domain",
                help_text="The question's domain when it was drawn.",
            ),
        ),
        migrations.RunPython(copy_domains, migrations.RunPython.noop),
    ]
