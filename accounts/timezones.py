"""Each learner's pages in their own time zone: activated per request from the session,
which keeps the profile's zone so most requests cost no query for it."""
import zoneinfo

from django.utils import timezone

from accounts.models import Profile

SESSION_KEY = "time_zone"


def remember_time_zone(request, name: str) -> None:
    request.session[SESSION_KEY] = name
    timezone.activate(zoneinfo.ZoneInfo(name))


class LearnerTimeZoneMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        name = None
        if request.user.is_authenticated:
            name = request.session.get(SESSION_KEY)
            if name is None:
                name = Profile.objects.for_user(request.user).time_zone
                request.session[SESSION_KEY] = name
        try:
            timezone.activate(zoneinfo.ZoneInfo(name)) if name else timezone.deactivate()
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            timezone.deactivate()
        return self.get_response(request)
