from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("exams", "0009_response_domain")]
    operations = [
        migrations.AlterField(
            model_name="response",
            name="domain",
            field=models.ForeignKey(
                db_index=False, on_delete=models.PROTECT, related_name="+", to="exams.domain",
                help_text="The question's domain when it was drawn.",
            ),
        ),
    ]
