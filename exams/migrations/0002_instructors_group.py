"""Create the Instructors group with every permission of the exams app, and only those."""
from django.db import migrations

GROUP = "Instructors"


def create_instructors(apps, schema_editor):
    # Permissions are normally made after all migrations (post_migrate); make them now so
    # the group really gets them on a fresh database.
    from django.contrib.auth.management import create_permissions

    exams_config = apps.get_app_config("exams")
    exams_config.models_module = True
    create_permissions(exams_config, apps=apps, verbosity=0)
    exams_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.set(Permission.objects.filter(content_type__app_label="exams"))


def remove_instructors(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("exams", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(create_instructors, remove_instructors)]
