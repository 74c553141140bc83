"""Give the Instructors group the permissions of models added since 0002 (accommodations)."""
from django.db import migrations


def sync_instructors(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    exams_config = apps.get_app_config("exams")
    exams_config.models_module = True
    create_permissions(exams_config, apps=apps, verbosity=0)
    exams_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.set(Permission.objects.filter(content_type__app_label="exams"))


class Migration(migrations.Migration):
    dependencies = [("exams", "0005_learner_accommodation")]
    operations = [migrations.RunPython(sync_instructors, migrations.RunPython.noop)]
