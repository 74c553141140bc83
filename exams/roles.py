"""The Instructors role: every permission of the exams and cohorts apps, seeing background jobs, and nothing else."""
from django.contrib.auth.models import Group, Permission
from django.db.models import Q

INSTRUCTORS = "Instructors"

# What the data migrations give the group (exams 0002/0006, jobs 0002, cohorts 0002).
INSTRUCTOR_PERMISSIONS = (
    Q(content_type__app_label="exams")
    | Q(content_type__app_label="jobs", codename="view_job")
    | Q(content_type__app_label="cohorts")
)


def instructors_group() -> Group:
    """The group, made again if it was removed (the data migrations create it first)."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS)
    group.permissions.set(Permission.objects.filter(INSTRUCTOR_PERMISSIONS))
    return group
