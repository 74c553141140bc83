"""The Instructors role: every permission of the exams app, and nothing else."""
from django.contrib.auth.models import Group, Permission

INSTRUCTORS = "Instructors"


def instructors_group() -> Group:
    """The group, made again if it was removed (migration 0002 creates it first)."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS)
    group.permissions.set(Permission.objects.filter(content_type__app_label="exams"))
    return group
