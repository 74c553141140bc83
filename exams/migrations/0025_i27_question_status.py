"""Question status (issue 27): draft / ready beside is_active.

Every question that exists is ready (learners already see it); from now on a question made
in the admin or by an import starts as a draft.
"""
from django.db import migrations, models

HELP = "Draft: being written, never shown to learners. Ready: drawn into attempts (while active)."
CHOICES = [("draft", "Draft"), ("ready", "Ready")]


class Migration(migrations.Migration):

    dependencies = [
        ("exams", "0024_i26b_certainty"),
    ]

    operations = [
        # Added as ready, so the rows already there are ready ...
        migrations.AddField(
            model_name="question",
            name="status",
            field=models.CharField(choices=CHOICES, db_default="ready", default="ready", help_text=HELP, max_length=5),
        ),
        # ... then new rows default to draft.
        migrations.AlterField(
            model_name="question",
            name="status",
            field=models.CharField(choices=CHOICES, db_default="draft", default="draft", help_text=HELP, max_length=5),
        ),
    ]
