"""Results sharing (issue 27): an invitation says whether it asks; a membership records the consent.

Existing members share nothing (results_shared_at empty) and were never asked
(results_asked_at empty): My cohorts asks them once.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cohorts', '0002_instructors_run_cohorts'),
    ]

    operations = [
        migrations.AddField(
            model_name='invitation',
            name='shares_results',
            field=models.BooleanField(default=False, help_text='The link asks each learner who joins whether to share their mock results with you: the score, the per-domain table and which questions they got right, wrong or left unanswered.', verbose_name='asks to share results'),
        ),
        migrations.AddField(
            model_name='membership',
            name='results_asked_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='membership',
            name='results_shared_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
