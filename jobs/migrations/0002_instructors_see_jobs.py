"""Instructors may see background jobs (their imports' progress), never change them."""
from django.db import migrations


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    config = apps.get_app_config("jobs")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="jobs", codename="view_job"))


class Migration(migrations.Migration):
    dependencies = [("jobs", "0001_initial"), ("exams", "0002_instructors_group")]
    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
