"""Instructors run cohorts: the Instructors group gets every permission of the cohorts app."""
from django.db import migrations


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    config = apps.get_app_config("cohorts")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="cohorts"))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group in Group.objects.filter(name="Instructors"):
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="cohorts"))


class Migration(migrations.Migration):
    dependencies = [("cohorts", "0001_initial"), ("exams", "0002_instructors_group")]
    operations = [migrations.RunPython(grant, revoke)]
