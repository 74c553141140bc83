"""Cohort workflows: create, invite, join, leave, remove."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from cohorts.models import Cohort, Invitation, Membership


class JoinRefused(Exception):
    """The invitation cannot be used; the message says why and what to do."""


@transaction.atomic
def cohort_create(*, owner, form) -> Cohort:
    cohort = form.save(commit=False)
    cohort.owner = owner
    cohort.save()
    Invitation.objects.create(cohort=cohort)
    return cohort


@transaction.atomic
def invitation_renew(*, cohort: Cohort) -> Invitation:
    """A fresh 14-day link; the old one stops working."""
    invitation_revoke(cohort=cohort)
    return Invitation.objects.create(cohort=cohort)


def invitation_revoke(*, cohort: Cohort) -> int:
    return Invitation.objects.filter(cohort=cohort, revoked_at__isnull=True).update(revoked_at=timezone.now())


def join_refusal(*, invitation: Invitation, learner) -> str | None:
    """Why this learner cannot join by this invitation, or None."""
    if invitation.revoked_at is not None:
        return "This invitation link was withdrawn by the cohort's instructor. Ask them for a new link."
    if invitation.is_expired:
        return (
            f"This invitation link expired on {timezone.localtime(invitation.expires_at):%-d %B %Y}. "
            "Invitation links last 14 days: ask the cohort's instructor for a new one."
        )
    if invitation.cohort.owner_id == learner.pk:
        return "You run this cohort, so you cannot join it as a learner."
    return None


def cohort_join(*, invitation: Invitation, learner) -> Membership:
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().select_related("cohort").get(pk=invitation.pk)
        refusal = join_refusal(invitation=invitation, learner=learner)
        if refusal:
            raise JoinRefused(refusal)
        try:
            with transaction.atomic():
                return Membership.objects.create(cohort=invitation.cohort, learner=learner)
        except IntegrityError:
            return Membership.objects.get(cohort=invitation.cohort, learner=learner)


def membership_end(*, membership: Membership) -> None:
    """A member leaves, or the owner removes them: their own history is untouched."""
    membership.delete()
