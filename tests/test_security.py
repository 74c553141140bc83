"""Every learner-owned URL is 404 to other learners; every POST needs its CSRF token.

The URL patterns are read from the resolver, so a page added later is covered without
anyone remembering to add it here.
"""
import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from exams.models import Attempt, AttemptStatus, Bookmark, Dispute, Response
from exams.room.services import attempt_start, attempt_submit
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db


def named_patterns(resolver=None, namespace=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            if entry.app_name == "admin":
                continue  # Django's own admin has its own tests; ours are in tests/exams/bank/test_admin.py
            yield from named_patterns(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield f"{namespace}{entry.name}", entry


OWNED = sorted({name for name, pattern in named_patterns() if "attempt_id" in pattern.pattern.regex.groupindex})


def url_for(name: str, pattern: URLPattern, *, attempt: Attempt) -> str:
    kwargs = {}
    for arg in pattern.pattern.regex.groupindex:
        kwargs[arg] = {"attempt_id": attempt.pk, "position": 1, "code": attempt.exam.code}.get(arg)
        if kwargs[arg] is None:
            raise AssertionError(f"{name}: no test value for URL argument {arg!r}; add one here")
    return reverse(name, kwargs=kwargs)


def test_the_list_of_owned_urls_is_not_empty():
    assert {"exams:question", "exams:results", "exams:report", "exams:submit", "exams:review", "exams:attempt"} <= set(OWNED)


@pytest.mark.parametrize("name", OWNED)
@pytest.mark.parametrize("finished", [False, True], ids=["in progress", "finished"])
@pytest.mark.parametrize("method", ["get", "post"])
def test_another_learner_gets_404(client, learner, other_learner, name, finished, method):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    if finished:
        attempt_submit(user=learner, attempt_id=attempt.pk)
    patterns = dict(named_patterns())
    url = url_for(name, patterns[name], attempt=attempt)
    client.force_login(other_learner)
    before = (Attempt.objects.get(pk=attempt.pk).status, list(Response.objects.filter(attempt=attempt).values("flagged", "answered_at")))
    response = getattr(client, method)(url, {"choice": "1", "flag": "on", "confirmed": "1", "reason": "x"})
    # 405 answers a method the page never takes, before any lookup: it reveals nothing either.
    assert response.status_code in (404, 405), f"{method.upper()} {url} gave {response.status_code}"
    after = (Attempt.objects.get(pk=attempt.pk).status, list(Response.objects.filter(attempt=attempt).values("flagged", "answered_at")))
    assert before == after
    assert not Dispute.objects.exists()


def post_targets(attempt, bookmark=None) -> list[tuple[str, str]]:
    patterns = dict(named_patterns())
    targets = []
    values = {"attempt_id": attempt.pk, "position": 1, "code": attempt.exam.code, "bookmark_id": bookmark and bookmark.pk}
    for name, pattern in patterns.items():
        args = pattern.pattern.regex.groupindex
        kwargs = {arg: values.get(arg) for arg in args}
        if any(value is None for value in kwargs.values()):
            continue  # password-reset confirmation links carry tokens; covered by Django
        targets.append((name, reverse(name, kwargs=kwargs)))
    return targets


def test_every_post_without_a_csrf_token_is_refused_and_changes_nothing(learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    bookmark = Bookmark.objects.create(user=learner, question=attempt.exam.questions.first(), note="kept")
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    targets = post_targets(attempt, bookmark)
    assert len(targets) >= 15
    assert {"exams:bookmark_edit", "exams:bookmark_delete", "exams:practice_builder"} <= {name for name, _ in targets}
    for name, url in targets:
        response = client.post(url, {"choice": "1", "flag": "on", "confirmed": "1", "reason": "x", "mode": "practice"})
        assert response.status_code == 403, f"POST {url} ({name}) without a CSRF token gave {response.status_code}"
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.IN_PROGRESS
    assert not attempt.responses.filter(answered_at__isnull=False).exists()
    assert not attempt.responses.filter(flagged=True).exists()
    assert Attempt.objects.count() == 1
    assert list(Bookmark.objects.values_list("note", flat=True)) == ["kept"]


def test_htmx_posts_carry_the_token_in_a_header(learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    page = client.get(reverse("exams:question", args=[attempt.pk, 1])).content.decode()
    assert 'hx-headers=\'{"x-csrftoken": "' in page
    token = client.cookies["csrftoken"].value
    response = client.post(
        reverse("exams:question", args=[attempt.pk, 1]), {"choice": "1"},
        headers={"HX-Request": "true", "X-CSRFToken": token},
    )
    assert response.status_code == 200


def test_pages_send_a_strict_content_security_policy(client, learner):
    client.force_login(learner)
    exam_with_bank()
    policy = client.get(reverse("exams:dashboard"))["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
