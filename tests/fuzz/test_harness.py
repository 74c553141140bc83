"""The fuzzer's own checks can fail: a refused request that writes is caught, axes' records
and sessions are allowed, and the forms of a page are read as a browser would send them."""
import pytest
from django.http import HttpResponse, HttpResponseBadRequest
from django.test import RequestFactory

from exams.models import Exam
from tests.factories import ExamFactory
from tests.fuzz.harness import check, default_data, forms_on, snapshot

pytestmark = pytest.mark.django_db


def answered(response: HttpResponse) -> HttpResponse:
    response.wsgi_request = RequestFactory().post("/")
    return response


def test_a_refused_request_that_changed_a_table_fails_the_check():
    before = snapshot()
    ExamFactory()
    with pytest.raises(AssertionError, match="exams_exam"):
        check(answered(HttpResponseBadRequest()), "post", before, "a write behind a 400")
    with pytest.raises(AssertionError, match="exams_exam"):
        check(answered(HttpResponse('<ul class="errorlist"><li>No</li></ul>')), "post", before, "a write behind form errors")
    # Accepted requests may write; axes' failure records and sessions may change on a refusal.
    check(answered(HttpResponse("Saved")), "post", before, "an accepted write")
    after_exam = snapshot()
    from axes.models import AccessFailureLog

    AccessFailureLog.objects.create(username="x", ip_address="127.0.0.1", user_agent="", path_info="/", locked_out=False)
    check(answered(HttpResponseBadRequest()), "post", after_exam, "a failed login")
    assert Exam.objects.count() == 1


def test_a_server_error_fails_the_check():
    with pytest.raises(AssertionError, match="500"):
        check(answered(HttpResponse(status=500)), "get", snapshot(), "a crash")


def test_forms_are_read_as_a_browser_sends_them():
    page = """<form method="post" action="/save/"><input type="hidden" name="csrfmiddlewaretoken" value="t">
      <input name="title" value="A &amp; B"><input type="checkbox" name="on" checked><input type="checkbox" name="off">
      <select name="pick"><option value="1">One</option><option value="2" selected>Two</option></select>
      <textarea name="note">hello</textarea><button type="submit" name="go" value="next">Next</button></form>
      <form><input name="q"></form>"""
    save, search = forms_on("http://testserver/page/", page)
    assert (save.action, save.method, search.action, search.method) == ("http://testserver/save/", "post", "http://testserver/page/", "get")
    submit = next(item for item in save.fields if item.kind == "submit")
    assert default_data(save, submit) == {
        "csrfmiddlewaretoken": ["t"], "title": ["A & B"], "on": ["on"], "pick": ["2"], "note": ["hello"], "go": ["next"],
    }
