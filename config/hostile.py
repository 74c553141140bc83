"""One gate for input no view should see: a NUL in the path, the query string or a form field
(text PostgreSQL cannot store), and a multipart body that is not well formed, are refused with
400 before any view (and so any query) runs; the error pages never re-read the request body
(Django's default 400 page does, and fails on a foreign charset)."""
import re

from django.conf import settings
from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.http import parse_header_parameters

REFUSED = "This request holds a character that cannot be stored (a NUL byte). Nothing was changed."
ADMIN_TO_FIELD = "_to_field"  # django.contrib.admin.options.TO_FIELD_VAR
EMPTY_TO_FIELD = "An empty _to_field names no field. Nothing was changed."
OUT_OF_RANGE = "This request holds a number too large for any id (64 bits). Nothing was changed."
# On the embedded SQLite, a whole query or form value of digits past a 64-bit integer
# names no row, yet SQLite fails on it with OverflowError before any view could say so (found by the
# fuzzer: the admin's permissions picker). Ids in paths are each view's to bound.
_HUGE_NUMBER = re.compile(r"^-?\d{19,}$")


def _has_huge_number(values) -> bool:
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return False  # PostgreSQL answers such an id as no row (views and forms say so)
    for value in values:
        if _HUGE_NUMBER.match(value):
            digits = value.lstrip("-").lstrip("0")
            # Counted before converted: int() refuses strings of over 4,300 digits.
            if len(digits) > 19 or not -(2**63) <= int(("-" if value.startswith("-") else "") + (digits or "0")) < 2**63:
                return True
    return False


def _has_nul(values) -> bool:
    return any("\x00" in value for value in values)


class HostileTextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or _has_nul(v for values in request.GET.lists() for v in [values[0], *values[1]]):
            return HttpResponseBadRequest(REFUSED, content_type="text/plain; charset=utf-8")
        if _has_huge_number(v for values in request.GET.lists() for v in values[1]):
            return HttpResponseBadRequest(OUT_OF_RANGE, content_type="text/plain; charset=utf-8")
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
            if request.content_type == "multipart/form-data":
                flaw = _multipart_flaw(request)
                if flaw:
                    return HttpResponseBadRequest(
                        f"Not saved: the form's body is malformed ({flaw}). Nothing was changed.",
                        content_type="text/plain; charset=utf-8",
                    )
            try:
                fields = [v for key, values in request.POST.lists() for v in [key, *values]]
            except Exception:  # a malformed or undecodable body: the view's own parsing says so
                fields = []
            if _has_nul(fields):
                return HttpResponseBadRequest(REFUSED, content_type="text/plain; charset=utf-8")
            if _has_huge_number(fields):
                return HttpResponseBadRequest(OUT_OF_RANGE, content_type="text/plain; charset=utf-8")
            if fields and request.POST.get(ADMIN_TO_FIELD, None) == "":
                return HttpResponseBadRequest(EMPTY_TO_FIELD, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _multipart_flaw(request) -> str | None:
    """What is wrong with a multipart body, read whole before Django's lenient parser sees it.

    A body larger than Django's in-memory cap for form fields is left to the parser (it is a
    file upload; an answer is a few bytes): the request is marked unchecked, and the views
    that store what is posted (the exam room's save) refuse an unchecked multipart body.
    """
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return "its length is not a number"
    if limit is not None and length > limit:
        return None
    flaw = multipart_flaw(request.body, (request.content_params or {}).get("boundary"))
    request.multipart_checked = flaw is None
    return flaw


# Whether a multipart/form-data body is well formed (RFC 7578 over RFC 2046), checked before
# Django parses it: Django's parser is lenient by design and reads a truncated body, a body
# without the declared boundary or a part without a name as a form with fewer fields (often
# none), which a save would then store as "no answer" and confirm (issue 28).

# Django's own rule for a boundary (django.http.multipartparser), and RFC 2046's length bound.
BOUNDARY = re.compile(rb"[ -~]{0,69}[!-~]")
HEADER_LINE = re.compile(rb"[!-9;-~]+:[^\r\n]*")
PADDING = b" \t"


def multipart_flaw(body: bytes, boundary: str | None) -> str | None:
    """What makes `body` not a well-formed multipart form with this boundary, or None when it is one."""
    if not boundary:
        return "no boundary is declared"
    try:
        boundary_bytes = boundary.encode("ascii")
    except UnicodeEncodeError:
        return "the boundary is not ASCII"
    if not BOUNDARY.fullmatch(boundary_bytes):
        return "the boundary is not a valid one"
    delimiter = b"--" + boundary_bytes
    if body.startswith(delimiter):
        rest = body[len(delimiter):]
    else:
        # A preamble may come first, ending with the line break before the first delimiter.
        found = body.find(b"\r\n" + delimiter)
        if found < 0:
            return "the body holds no part with the declared boundary"
        rest = body[found + 2 + len(delimiter):]
    segments = rest.split(b"\r\n" + delimiter)
    for index, segment in enumerate(segments, start=1):
        if segment.startswith(b"--"):
            return None  # the close delimiter: what follows it is the epilogue, which is ignored
        if index == len(segments):
            return "the body ends before its closing boundary"
        flaw = _part_flaw(segment.lstrip(PADDING))
        if flaw:
            return f"part {index}: {flaw}"
    return None


def _part_flaw(segment: bytes) -> str | None:
    """What is wrong with one part (from the line break after its delimiter to the next delimiter)."""
    if not segment.startswith(b"\r\n"):
        return "its delimiter line does not end where it should"
    part = segment[2:]
    if part.startswith(b"\r\n"):
        return "it has no headers"
    head, separator, _content = part.partition(b"\r\n\r\n")
    if not separator:
        return "its headers never end"
    names = []
    for line in head.split(b"\r\n"):
        if not HEADER_LINE.fullmatch(line):
            return "a header line is malformed"
        name, _, value = line.partition(b":")
        names.append(name.lower())
        if name.lower() == b"content-disposition":
            disposition, parameters = parse_header_parameters(value.decode("latin-1"))
            if disposition.lower() != "form-data" or not parameters.get("name"):
                return "its Content-Disposition is not form-data with a name"
    if names.count(b"content-disposition") != 1:
        return "it needs exactly one Content-Disposition header"
    return None


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
