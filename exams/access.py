"""The one ownership check for learner objects: anyone but the owner gets a 404."""
from django.shortcuts import get_object_or_404

from exams.models import Attempt


def owned_attempt(user, attempt_id: int, *, for_update: bool = False, with_clock: bool = False) -> Attempt:
    """The attempt if this user owns it; 404 otherwise (never 403: ids are not confirmed)."""
    attempts = Attempt.objects.select_related("exam")
    if with_clock:
        attempts = attempts.with_clock()
    if for_update:
        attempts = attempts.select_for_update(of=("self",))
    return get_object_or_404(attempts, pk=attempt_id, user_id=user.pk)
