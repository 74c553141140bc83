"""Cohort workflows: create, invite, join, share results or stop, leave, remove."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from cohorts.models import Cohort, Invitation, Membership


class JoinRefused(Exception):
    """The invitation cannot be used; the message says why and what to do."""


@transaction.atomic
def cohort_create(*, owner, form, shares_results: bool = False) -> Cohort:
    cohort = form.save(commit=False)
    cohort.owner = owner
    cohort.save()
    Invitation.objects.create(cohort=cohort, shares_results=shares_results)
    return cohort


@transaction.atomic
def invitation_renew(*, cohort: Cohort, shares_results: bool = False) -> Invitation:
    """A fresh 14-day link; the old one stops working."""
    invitation_revoke(cohort=cohort)
    return Invitation.objects.create(cohort=cohort, shares_results=shares_results)


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


def cohort_join(*, invitation: Invitation, learner, share_results: bool = False) -> Membership:
    """Join by this invitation. Results are shared only if the invitation asked and the
    learner agreed; either way they were asked, so My cohorts does not ask again."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().select_related("cohort").get(pk=invitation.pk)
        refusal = join_refusal(invitation=invitation, learner=learner)
        if refusal:
            raise JoinRefused(refusal)
        now = timezone.now()
        try:
            with transaction.atomic():
                return Membership.objects.create(
                    cohort=invitation.cohort, learner=learner, results_asked_at=now,
                    results_shared_at=now if share_results and invitation.shares_results else None,
                )
        except IntegrityError:
            return Membership.objects.get(cohort=invitation.cohort, learner=learner)


def membership_end(*, membership: Membership) -> None:
    """A member leaves, or the owner removes them: their own history is untouched."""
    membership.delete()


def results_sharing_set(*, membership: Membership, share: bool) -> None:
    """The member's answer on My cohorts: share their mock results with the owner, or stop."""
    now = timezone.now()
    membership.results_asked_at = membership.results_asked_at or now
    membership.results_shared_at = (membership.results_shared_at or now) if share else None
    membership.save(update_fields=["results_asked_at", "results_shared_at"])
