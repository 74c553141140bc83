"""The roles: Instructors (every permission of the exams and cohorts apps, seeing background jobs, and
learners' results only through their cohorts) and Support (sees everything, changes nothing)."""
from django.contrib.auth.models import Group, Permission
from django.db.models import Q

INSTRUCTORS = "Instructors"
SUPPORT = "Support"

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


# What the data migration gives Support (cohorts 0004): every view permission, nothing else.
SUPPORT_PERMISSIONS = Q(content_type__app_label__in=("exams", "cohorts", "jobs", "accounts"), codename__startswith="view_") | Q(
    content_type__app_label="auth", codename="view_user"
)


def support_group() -> Group:
    """The Support group, made again if it was removed (the data migration creates it first)."""
    group, _ = Group.objects.get_or_create(name=SUPPORT)
    group.permissions.set(Permission.objects.filter(SUPPORT_PERMISSIONS))
    return group


def sees_every_learner(user) -> bool:
    """Superusers and the Support group see every learner's attempts; an instructor only
    those of cohort members who share results with them (cohorts.access)."""
    if not user.is_active or not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=SUPPORT).exists()
