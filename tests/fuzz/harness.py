"""The fuzzer's parts: a small world of personas and objects, every URL pattern read from the
resolver, the forms found on pages, hostile values and bodies, and the checks on an answer
(no 5xx, no traceback, no database change when the request was refused)."""
import copy
import hashlib
import html.parser
import json
import re
import sys
import traceback
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.contrib.admin import site as admin_site
from django.contrib.auth.models import User
from django.contrib.messages import constants as message_levels
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from exams.bank.errata.disputes import dispute_report
from exams.models import Attempt, AttemptMode, Erratum, Question, ReviewCard
from exams.roles import instructors_group
from exams.room import services
from tests.factories import UserFactory, exam_with_bank

# make test runs a few examples per URL pattern (4) and per form (2), within about a minute
# each on two cores; make fuzz (hypothesis's "fuzz" profile) runs ten times as many.


def fuzz_settings(per_hundred: int) -> hypothesis_settings:
    return hypothesis_settings(
        max_examples=max(1, hypothesis_settings.default.max_examples * per_hundred // 100),
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


def failure_text(what: str, error: BaseException) -> str:
    """One failure of many, with the end of its traceback (where our code is); printed at
    once too, so a long make fuzz run shows what it found as it goes."""
    text = f"{what}:\n" + "".join(traceback.format_exception(error))[-2500:]
    print(text, file=sys.stderr)
    return text

# What a refused request may still write: django-axes' records of failed logins, and sessions.
MAY_CHANGE_WHEN_REFUSED = {"django_session", "axes_accessattempt", "axes_accessfailurelog", "axes_accesslog"}


# The world ------------------------------------------------------------------------------

@dataclass
class World:
    clients: dict[str, Client]
    ids: dict[str, list[str]]  # a URL keyword's known values (own and foreign objects)
    objects: dict[str, list[str]] = field(default_factory=dict)  # admin "app_model" → pks


def build_world() -> World:
    """Personas with real objects: attempts finished and running, an open erratum, reviews."""
    exam = exam_with_bank(weights=(60, 40), per_domain=6, question_count=5)
    learner = UserFactory(username="learner")
    other = UserFactory(username="other")
    instructor = UserFactory(username="teacher", is_staff=True)
    instructor.groups.add(instructors_group())
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    attempts = {}
    for user in (learner, other):
        mock = services.attempt_start(user=user, exam=exam).attempt
        first = mock.responses.select_related("question").first()
        mock.record_answer(response=first, choice_ids=[first.question.choices.first().pk])
        services.attempt_submit(user=user, attempt_id=mock.pk)
        practice = services.attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=4).attempt
        attempts[user.username] = (mock, practice)
    question = Question.objects.filter(exam=exam).first()
    dispute_report(user=learner, response=attempts["learner"][0].responses.first(), choice_ids=(), reason="Unclear")
    ReviewCard.objects.get_or_create(user=learner, question=question, defaults={"due": "2000-01-01T00:00Z"})
    clients = {"anonymous": Client()}
    for name, user in (("learner", learner), ("instructor", instructor), ("admin", admin)):
        clients[name] = Client()
        clients[name].force_login(user)
    attempt_ids = [str(a.pk) for pair in attempts.values() for a in pair]
    ids = {
        "attempt_id": attempt_ids,
        "position": ["1", "2", "4"],
        "question_id": [str(pk) for pk in Question.objects.values_list("pk", flat=True)[:3]],
        "erratum_id": [str(pk) for pk in Erratum.objects.values_list("pk", flat=True)],
        "code": [exam.code],
        "id": [str(learner.pk), str(other.pk)],
        "user_id": [str(learner.pk)],
    }
    objects = {}
    for model in admin_site._registry:
        key = f"{model._meta.app_label}_{model._meta.model_name}"
        objects[key] = [str(pk) for pk in model._default_manager.order_by("pk").values_list("pk", flat=True)[:2]]
    ids["object_id"] = sorted({pk for pks in objects.values() for pk in pks})
    assert Attempt.objects.count() == 4
    return World(clients=clients, ids=ids, objects=objects)


# URL patterns from the resolver -----------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    name: str
    kind: str  # a converter name (int, str, path, slug, uuid) or "regex"
    regex: str = ""


@dataclass(frozen=True)
class Pattern:
    parts: tuple  # literal strings and Slots, in order
    name: str

    @property
    def route(self) -> str:
        return "".join(part if isinstance(part, str) else f"<{part.kind}:{part.name}>" for part in self.parts)


_ROUTE_SLOT = re.compile(r"<(?:(?P<kind>[^>:]+):)?(?P<name>[^>]+)>")
_REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<regex>[^()]*)\)")


def _parts(pattern) -> list:
    if isinstance(pattern, RoutePattern):
        text, kind_of = str(pattern._route), _ROUTE_SLOT
    elif isinstance(pattern, RegexPattern):
        text, kind_of = pattern._regex.removeprefix("^").removesuffix("$"), _REGEX_GROUP
    else:  # a locale prefix or another kind: no slots of its own
        return [str(pattern)]
    parts, at = [], 0
    for match in kind_of.finditer(text):
        parts.append(text[at:match.start()])
        if kind_of is _ROUTE_SLOT:
            parts.append(Slot(match["name"], match["kind"] or "str"))
        else:
            parts.append(Slot(match["name"], "regex", match["regex"]))
        at = match.end()
    parts.append(text[at:])
    return [part for part in parts if part != ""]


def url_patterns() -> list[Pattern]:
    """Every pattern the resolver knows, nested includes and admin included."""
    found = []

    def walk(patterns, prefix: list, namespace: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else (entry.namespace or namespace)
                walk(entry.url_patterns, prefix + _parts(entry.pattern), inner)
            elif isinstance(entry, URLPattern):
                name = f"{namespace}:{entry.name}" if namespace and entry.name else (entry.name or "")
                found.append(Pattern(tuple(prefix + _parts(entry.pattern)), name))

    walk(get_resolver().url_patterns, [], "")
    unique = {}
    for pattern in found:
        unique.setdefault(pattern.route, pattern)
    return list(unique.values())


def build_path(pattern: Pattern, values: dict[str, str]) -> str:
    return "/" + "".join(
        part if isinstance(part, str) else urllib.parse.quote(values[part.name], safe="/" if part.kind == "path" else "")
        for part in pattern.parts
    )


# Hostile values ----------------------------------------------------------------------------

NUMBERS = [
    "0", "-1", "1", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
    "-9223372036854775809", "99999999999999999999999999", "1e309", "-0", "1.5", "NaN", "inf", "0x1F", "١٢",
]
WORDS = [
    "", " ", "\x00", "a\x00b", "\t\n", "ten", "true", "null", "[]", "{}", "on", "off", "yes",
    "<script>alert(1)</script>", "'; DROP TABLE auth_user; --", "../../etc/passwd", "%00", "%ff",
    "\u202eevil", "😀" * 8, "e\u0301", "\ufeff", "2026-02-30", "25:61:00", "9999-12-31 23:59:59",
    "javascript:alert(1)", "admin@example.com", "LEARNER@EXAMPLE.COM",
]


def hostile(known: list[str] = ()) -> st.SearchStrategy[str]:
    """A value a browser would never send: NUL, huge, the wrong type, a foreign id, overflow."""
    strategies = [
        st.sampled_from(NUMBERS + WORDS),
        st.text(max_size=40),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.builds(lambda char, n: char * n, st.sampled_from(["a", "é", "\x00", "<", "9", " "]), st.sampled_from([256, 4097, 70_000])),
    ]
    if known:
        strategies.append(st.sampled_from(list(known)))
    return st.one_of(strategies)


def slot_value(slot: Slot, world: World) -> st.SearchStrategy[str]:
    known = world.ids.get(slot.name, [])
    if slot.kind == "int":
        values = st.one_of(st.sampled_from(NUMBERS[:9]).filter(str.isdigit), st.integers(0, 2**80).map(str))
    elif slot.kind == "regex":
        values = st.from_regex(slot.regex or ".*", fullmatch=True).filter(lambda v: "\n" not in v)
    elif slot.kind == "path":
        values = hostile(known).filter(lambda v: v != "")
    else:
        values = hostile(known).map(lambda v: v.replace("/", "")).filter(lambda v: v != "")
    return st.one_of(st.sampled_from(known), values) if known else values


# Forms found on pages ---------------------------------------------------------------------

@dataclass
class Field:
    name: str
    kind: str  # input type, "select", "textarea", "submit"
    value: str = ""
    options: list = field(default_factory=list)
    checked: bool = False
    multiple: bool = False


@dataclass
class Form:
    action: str
    method: str
    enctype: str
    fields: list = field(default_factory=list)

    def signature(self) -> tuple:
        path = re.sub(r"\d+", "N", urllib.parse.urlsplit(self.action).path)
        return (path, self.method, tuple(sorted({f.name for f in self.fields})))


class FormParser(html.parser.HTMLParser):
    def __init__(self, page_url: str):
        super().__init__(convert_charrefs=True)
        self.page_url, self.forms, self._form, self._select, self._textarea = page_url, [], None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            action = urllib.parse.urljoin(self.page_url, attrs.get("action") or self.page_url)
            self._form = Form(action, (attrs.get("method") or "get").lower(), attrs.get("enctype") or "")
            self.forms.append(self._form)
        elif self._form is None or not attrs.get("name") and tag != "option":
            return
        elif tag == "input":
            kind = (attrs.get("type") or "text").lower()
            self._form.fields.append(Field(attrs["name"], kind, attrs.get("value") or ("on" if kind == "checkbox" else ""),
                                           checked="checked" in attrs))
        elif tag == "button" and (attrs.get("type") or "submit") == "submit":
            self._form.fields.append(Field(attrs["name"], "submit", attrs.get("value") or ""))
        elif tag == "select":
            self._select = Field(attrs["name"], "select", multiple="multiple" in attrs)
            self._form.fields.append(self._select)
        elif tag == "option" and self._select is not None:
            self._select.options.append(attrs.get("value", ""))
            if "selected" in attrs:
                self._select.value = attrs.get("value", "")
        elif tag == "textarea":
            self._textarea = Field(attrs["name"], "textarea")
            self._form.fields.append(self._textarea)

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea.value += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def forms_on(page_url: str, html_text: str) -> list[Form]:
    parser = FormParser(page_url)
    parser.feed(html_text)
    return parser.forms


def default_data(form: Form, submit: Field | None) -> dict[str, list[str]]:
    """What the browser would send for the form as it stands, pressing `submit`."""
    data: dict[str, list[str]] = {}
    for item in form.fields:
        if item.kind in ("checkbox", "radio") and not item.checked:
            continue
        if item.kind in ("submit", "file", "image", "reset", "button"):
            continue
        value = item.value if item.kind != "select" else (item.value or (item.options[0] if item.options else ""))
        data.setdefault(item.name, []).append(value)
    if submit is not None:
        data.setdefault(submit.name, []).append(submit.value)
    return data


# Bodies -----------------------------------------------------------------------------------

BODY_KINDS = ["multipart", "urlencoded", "latin-1", "utf-16", "json", "text", "broken-multipart", "no-boundary", "bad-bytes"]


def send(client: Client, method: str, url: str, data: dict[str, list[str]], *, body: str, files: dict | None = None):
    """One request, its body built the way `body` names (most of them not what a form sends)."""
    if method == "get":
        query = urllib.parse.urlencode(data, doseq=True)
        return client.get(f"{url}{'&' if '?' in url else '?'}{query}" if query else url)
    if body == "multipart":
        payload = {key: values if len(values) != 1 else values[0] for key, values in data.items()}
        payload |= files or {}
        return client.post(url, payload)
    encoded = urllib.parse.urlencode(data, doseq=True)
    if body == "urlencoded":
        return client.post(url, encoded, content_type="application/x-www-form-urlencoded")
    if body in ("latin-1", "utf-16"):
        raw = urllib.parse.urlencode(data, doseq=True, encoding=body, errors="replace")
        return client.post(url, raw.encode("ascii"), content_type=f"application/x-www-form-urlencoded; charset={body}")
    if body == "json":
        return client.post(url, json.dumps(data), content_type="application/json")
    if body == "text":
        return client.post(url, encoded, content_type="text/plain")
    if body == "broken-multipart":
        return client.post(url, b"--xx\r\nContent-Disposition: form-data; name=\"a\r\n\r\n" + encoded.encode() + b"\r\n--x",
                           content_type="multipart/form-data; boundary=xx")
    if body == "no-boundary":
        return client.post(url, encoded, content_type="multipart/form-data")
    return client.post(url, b"%ff%fe=%c3%28&" + encoded.encode(), content_type="application/x-www-form-urlencoded")


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


# Checks -----------------------------------------------------------------------------------

def snapshot() -> dict[str, str]:
    """Row count and content digest of every table a refused request must leave alone."""
    tables = sorted(set(connection.introspection.table_names()) - MAY_CHANGE_WHEN_REFUSED)
    quote = connection.ops.quote_name
    if connection.vendor == "postgresql":
        sql = " UNION ALL ".join(
            f"SELECT '{name}', count(*)::text || ':' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {quote(name)} t"
            for name in tables
        )
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return dict(cursor.fetchall())
    digests = {}
    with connection.cursor() as cursor:
        for name in tables:
            cursor.execute(f"SELECT * FROM {quote(name)}")
            rows = sorted(repr(row) for row in cursor.fetchall())
            digests[name] = f"{len(rows)}:" + hashlib.md5("\n".join(rows).encode()).hexdigest()
    return digests


def content_of(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def is_refused(response, body: bytes, method: str) -> bool:
    """A 4xx, or a form shown again with its errors, or a redirect carrying an error message."""
    if 400 <= response.status_code < 500:
        return True
    if method == "get":
        return False
    if response.status_code == 200 and re.search(rb'class="(errorlist|errornote)', body):
        return True
    stored = getattr(response.wsgi_request, "_messages", None)
    return any(message.level >= message_levels.ERROR for message in getattr(stored, "_queued_messages", []))


def check(response, method: str, before: dict[str, str], what: str) -> None:
    body = content_of(response)
    assert response.status_code < 500, f"{what}: {response.status_code}"
    assert b"Traceback (most recent call last)" not in body, what
    if is_refused(response, body, method):
        after = snapshot()
        changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
        assert not changed, f"{what}: refused with {response.status_code} but changed {changed}"


@contextmanager
def rolled_back(client: Client):
    """Each example starts from the same world: its writes and its cookies are undone."""
    cookies = copy.deepcopy(client.cookies)
    try:
        with transaction.atomic():
            yield
            transaction.set_rollback(True)
    finally:
        client.cookies = cookies


def users() -> list[User]:
    return list(User.objects.order_by("pk"))
