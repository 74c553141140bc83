"""Issue 26: the review session size the learner last chose (default 20), and whether mocks ask how sure they are."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_i16_user_email_unique'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='profile',
            name='ask_certainty_in_mocks',
            field=models.BooleanField(default=False, help_text='Adds “How sure are you?” (guessing / fairly sure / sure) beside the choices in timed mocks, as practice always offers it. It never changes a score.', verbose_name='ask how sure I am in mocks'),
        ),
        migrations.AddField(
            model_name='profile',
            name='review_session_size',
            field=models.PositiveSmallIntegerField(choices=[(10, '10'), (20, '20'), (50, '50')], default=20, help_text='How many questions a review session takes: 10, 20 or 50. Set when you start one.', verbose_name='review session size'),
        ),
        migrations.AddConstraint(
            model_name='profile',
            constraint=models.CheckConstraint(condition=models.Q(('review_session_size__in', [10, 20, 50])), name='profile_review_session_size'),
        ),
    ]
