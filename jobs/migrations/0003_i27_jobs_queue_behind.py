"""A refresh asked for while one runs queues behind it: one running and one queued per kind and target."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0002_instructors_see_jobs'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='job',
            name='one_active_job_per_kind_and_target',
        ),
        migrations.AddField(
            model_name='job',
            name='queues_behind',
            field=models.BooleanField(default=False, help_text='A request while one runs waits behind it (one running, one queued) instead of being refused.'),
        ),
        migrations.AddConstraint(
            model_name='job',
            constraint=models.UniqueConstraint(condition=models.Q(('queues_behind', False), ('status__in', ('queued', 'running'))), fields=('kind', 'target'), name='one_active_job_per_kind_and_target', violation_error_message='A job of this kind is already queued or running for this target.'),
        ),
        migrations.AddConstraint(
            model_name='job',
            constraint=models.UniqueConstraint(condition=models.Q(('queues_behind', True), ('status', 'queued')), fields=('kind', 'target'), name='one_queued_job_behind_per_kind_and_target', violation_error_message='A job of this kind is already queued for this target.'),
        ),
        migrations.AddConstraint(
            model_name='job',
            constraint=models.UniqueConstraint(condition=models.Q(('queues_behind', True), ('status', 'running')), fields=('kind', 'target'), name='one_running_job_behind_per_kind_and_target', violation_error_message='A job of this kind is already running for this target.'),
        ),
    ]
