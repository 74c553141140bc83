"""Make the response's domain required.

Rows drawn by older code after 0009 ran (web servers left running during the upgrade)
have no domain yet: they are filled here first. PostgreSQL will not alter a table that
has deferred foreign-key checks pending, so those run at once after the fill.
"""
from importlib import import_module

from django.db import migrations, models

response_domain = import_module("exams.migrations.0009_response_domain")


def fill_the_rest(apps, schema_editor):
    response_domain.copy_domains(apps, schema_editor)
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [("exams", "0009_response_domain")]
    operations = [
        migrations.RunPython(fill_the_rest, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="response",
            name="domain",
            field=models.ForeignKey(
                db_index=False, on_delete=models.PROTECT, related_name="+", to="exams.domain",
                help_text="The question's domain when it was drawn.",
            ),
        ),
    ]
