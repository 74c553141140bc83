"""Whose results an instructor may read: members of cohorts they own who share results with them.

The cohort's promise ("its instructor will no longer see your mock scores") rests here: the
admin's attempt list and pages, and the member results page, all ask this module. Support and
superusers see every learner (exams.roles.sees_every_learner).
"""
from django.db.models import Exists, OuterRef, QuerySet

from cohorts.models import Membership
from exams.models import Attempt
from exams.roles import sees_every_learner


def sharing_memberships(*, viewer) -> QuerySet:
    """The current memberships, in cohorts this viewer owns, whose member shares results."""
    return Membership.objects.filter(cohort__owner_id=viewer.pk, results_shared_at__isnull=False)


def attempts_visible_to(viewer, attempts: QuerySet | None = None) -> QuerySet:
    """These attempts (all by default) narrowed to those the viewer may read: for an
    instructor, a sharing member's attempts of their cohort's exam, and only while a member."""
    attempts = Attempt.objects.all() if attempts is None else attempts
    if sees_every_learner(viewer):
        return attempts
    shared = sharing_memberships(viewer=viewer).filter(learner_id=OuterRef("user_id"), cohort__exam_id=OuterRef("exam_id"))
    return attempts.filter(Exists(shared))


def may_read_attempt(viewer, attempt: Attempt) -> bool:
    return attempts_visible_to(viewer, Attempt.objects.filter(pk=attempt.pk)).exists()
