"""One gate for text PostgreSQL cannot store: a NUL in the path, the query string or a form
field is refused with 400 before any view (and so any query) runs; the error pages never
re-read the request body (Django's default 400 page does, and fails on a foreign charset)."""
from django.http import HttpResponseBadRequest
from django.shortcuts import render

REFUSED = "This request holds a character that cannot be stored (a NUL byte). Nothing was changed."
ADMIN_TO_FIELD = "_to_field"  # django.contrib.admin.options.TO_FIELD_VAR
EMPTY_TO_FIELD = "An empty _to_field names no field. Nothing was changed."


def _has_nul(values) -> bool:
    return any("\x00" in value for value in values)


class HostileTextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or _has_nul(v for values in request.GET.lists() for v in [values[0], *values[1]]):
            return HttpResponseBadRequest(REFUSED, content_type="text/plain; charset=utf-8")
        if request.GET.get(ADMIN_TO_FIELD, None) == "":
            # The admin refuses a _to_field it does not allow (400) but looks an empty one up
            # as a field and fails (found by the fuzzer): refused here the same way.
            return HttpResponseBadRequest(EMPTY_TO_FIELD, content_type="text/plain; charset=utf-8")
        if request.method == "POST" and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            charset = (request.content_params or {}).get("charset", "utf-8").strip().lower()
            if charset not in ("utf-8", "utf8"):
                # Browsers send UTF-8; another charset would be decoded again by every layer
                # that reads the body (django-axes, the error pages), each in its own way.
                return HttpResponseBadRequest(
                    "Forms are accepted in UTF-8 only. Nothing was changed.", content_type="text/plain; charset=utf-8"
                )
            try:
                fields = [v for key, values in request.POST.lists() for v in [key, *values]]
            except Exception:  # a malformed or undecodable body: the view's own parsing says so
                fields = []
            if _has_nul(fields):
                return HttpResponseBadRequest(REFUSED, content_type="text/plain; charset=utf-8")
            if fields and request.POST.get(ADMIN_TO_FIELD, None) == "":
                return HttpResponseBadRequest(EMPTY_TO_FIELD, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def bad_request(request, exception=None):
    return render(request, "errors/400.html", status=400)


def permission_denied(request, exception=None):
    return render(request, "errors/403.html", status=403)


def page_not_found(request, exception=None):
    return render(request, "errors/404.html", status=404)


def server_error(request):
    from django.http import HttpResponseServerError
    from django.template import loader

    return HttpResponseServerError(loader.get_template("errors/500.html").render({}))
