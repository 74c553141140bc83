"""Uniqueness rules are checked by forms and enforced by database constraints. When two
requests race past the same check, the loser's insert raises IntegrityError; handling the
request again then sees the winner's committed row, so the loser gets the form's own error
instead of a 500."""
from django.contrib import messages
from django.db import IntegrityError
from django.http import HttpResponseRedirect

CLASHED = "This could not be saved: it clashes with a change saved at the same moment. Nothing was changed; please try again."


class RaceSafeAdminMixin:
    """For a ModelAdmin whose form or inlines check a rule a constraint also enforces."""

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except IntegrityError:
            pass  # rolled back by the admin's own atomic block; validate again below
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except IntegrityError:
            # The check still passes, so the clash is with a row that vanished again: say so.
            self.message_user(request, CLASHED, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
