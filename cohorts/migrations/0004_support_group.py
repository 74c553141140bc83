"""The Support group: sees every learner's attempts and cohorts, for support, and changes nothing.

Instructors see a learner's attempts only through cohorts they own whose member shares
results (cohorts.access); Support sees them all. View permissions only.
"""
from django.db import migrations

GROUP = "Support"
APPS = ("exams", "cohorts", "jobs", "accounts")


def create_support(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally made after all migrations (post_migrate): make them now.
    for label in (*APPS, "auth"):
        config = apps.get_app_config(label)
        config.models_module = True
        create_permissions(config, apps=apps, verbosity=0)
        config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.set(
        Permission.objects.filter(content_type__app_label__in=APPS, codename__startswith="view_")
        | Permission.objects.filter(content_type__app_label="auth", codename="view_user")
    )


def remove_support(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("cohorts", "0003_results_sharing"),
        ("exams", "0022_i26_abandoned_practice"),
        ("jobs", "0003_i27_jobs_queue_behind"),
        ("accounts", "0003_i16_user_email_unique"),
    ]
    operations = [migrations.RunPython(create_support, remove_support)]
