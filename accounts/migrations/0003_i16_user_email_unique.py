"""One account per email address, case-insensitively, blank excepted: a unique index on
auth_user(LOWER(email)) WHERE email <> ''. Duplicates are listed first; the oldest account
keeps the address and the others are blanked (their owners can set a new one)."""
from django.db import migrations
from django.db.models import Count, Q, UniqueConstraint
from django.db.models.functions import Lower

CONSTRAINT = UniqueConstraint(Lower("email"), condition=~Q(email=""), name="user_email_ci_unique")


def blank_duplicates(apps, schema_editor):
    User = apps.get_model("auth", "User")
    users = User.objects.using(schema_editor.connection.alias).exclude(email="")
    shared = (
        users.annotate(lowered=Lower("email")).values("lowered").annotate(n=Count("pk")).filter(n__gt=1).values_list("lowered", flat=True)
    )
    for address in list(shared):
        holders = list(users.annotate(lowered=Lower("email")).filter(lowered=address).order_by("date_joined", "pk"))
        kept, blanked = holders[0], holders[1:]
        print(
            f"\n  {address}: kept on {kept.username} (joined {kept.date_joined:%Y-%m-%d}); "
            f"blanked on {', '.join(user.username for user in blanked)}"
        )
        User.objects.using(schema_editor.connection.alias).filter(pk__in=[user.pk for user in blanked]).update(email="")


def add_constraint(apps, schema_editor):
    schema_editor.add_constraint(apps.get_model("auth", "User"), CONSTRAINT)


def remove_constraint(apps, schema_editor):
    schema_editor.remove_constraint(apps.get_model("auth", "User"), CONSTRAINT)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_i15a_review_settings"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(blank_duplicates, migrations.RunPython.noop),
        migrations.RunPython(add_constraint, remove_constraint),
    ]
