"""How sure the learner was of each answer (issue 26): Response.certainty, empty when not asked."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('exams', '0022_i26_abandoned_practice'),
    ]

    operations = [
        migrations.AddField(
            model_name='response',
            name='certainty',
            field=models.CharField(blank=True, choices=[('guess', 'Guessing'), ('fair', 'Fairly sure'), ('sure', 'Sure')], max_length=5, null=True),
        ),
        migrations.AddConstraint(
            model_name='response',
            constraint=models.CheckConstraint(condition=models.Q(('certainty__isnull', True), ('certainty__in', ['guess', 'fair', 'sure']), _connector='OR'), name='response_certainty'),
        ),
    ]
