from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from floorsite.models import Row


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("hello", content_type="text/plain")


@require_POST
def write(request: HttpRequest) -> HttpResponse:
    """Check the session's user, lock the row they own and update it, in one transaction."""
    if not request.user.is_authenticated:
        return HttpResponse("Not signed in", status=401, content_type="text/plain")
    with transaction.atomic():
        row = Row.objects.select_for_update().get(user_id=request.user.pk)
        row.value += 1
        row.save(update_fields=["value"])
    return HttpResponse("Saved", content_type="text/plain")
