"""accounts.sessions and accounts.backends: Django's database sessions and ModelBackend with
the two reads of every signed-in request in plain SQL. What a signed-in request may see must
not change: each case below is one Django's own engine and backend decide the same way."""
from datetime import timedelta

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db
DASHBOARD = "/dashboard/"


def signed_in(client, response) -> bool:
    return response.status_code == 200 and b"Signed in as" in response.content


def session_for(user, *, backend="accounts.backends.ModelBackend", expires_in=timedelta(days=1)) -> str:
    store = SessionStore()
    store[SESSION_KEY], store[BACKEND_SESSION_KEY] = str(user.pk), backend
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.set_expiry(int(expires_in.total_seconds()) if expires_in.total_seconds() > 0 else 1)
    store.save()
    if expires_in.total_seconds() <= 0:
        Session.objects.filter(session_key=store.session_key).update(expire_date=timezone.now() + expires_in)
    return store.session_key


def visit(client, key: str):
    client.cookies["sessionid"] = key
    return client.get(reverse("exams:catalogue"))


def test_a_session_signs_in_and_the_user_is_the_right_one(client, learner, other_learner):
    page = visit(client, session_for(other_learner))
    assert signed_in(client, page) and b"<strong>other</strong>" in page.content


def test_a_session_signed_in_through_djangos_backend_stays_signed_in(client, learner):
    assert signed_in(client, visit(client, session_for(learner, backend="django.contrib.auth.backends.ModelBackend")))


# A session as the engine and backend before psycopg's preparation (accounts.sessions at
# 191f030) stored it for user 4242, whose password hash is BEFORE_PASSWORD, under BEFORE_KEY.
BEFORE_KEY = "certprep-session-made-before-issue-23-0123456789abcdef"
BEFORE_PASSWORD = "md5$before23$0b6f2c4c1a3f6e8f0b7f1f3b1b3c2d11"
BEFORE_ROW = (
    "q3hbjso11ljjc5m1d7isgj21mz5evb2s",
    ".eJxVjMsOgjAQRf-la0OmDzotS_d-QzMdpoFowFBINMZ_VxIWuj3nnvtSibZ1SFuVJY296pQzzqjTL87EV5l2R8zzNq21OVBtLnMvt_Mx-KsGqsM3KeIxo4DJFHPoc4kYrW85W3Jec3GIgdFGAtMWEgi2aOaSA2g07PV-WqXWcZ6SPO7j8lSdNhA9wPsDoIU9Mw"
    ":1xZ3VR:lZNDLShYqpFdUIbqhkDmF-gXXm11GtDU0pr_P20WRAc",
)


@override_settings(SECRET_KEY=BEFORE_KEY)
def test_a_session_made_before_psycopgs_preparation_stays_signed_in(client):
    User.objects.create(pk=4242, username="before", password=BEFORE_PASSWORD)
    key, data = BEFORE_ROW
    Session.objects.create(session_key=key, session_data=data, expire_date=timezone.now() + timedelta(days=1))
    page = visit(client, key)
    assert signed_in(client, page) and b"<strong>before</strong>" in page.content


def test_an_expired_or_unknown_session_is_no_one(client, learner):
    assert not signed_in(client, visit(client, session_for(learner, expires_in=timedelta(seconds=-5))))
    assert not signed_in(client, visit(client, "x" * 32))


def test_an_inactive_user_is_signed_out(client, learner):
    key = session_for(learner)
    learner.is_active = False
    learner.save()
    assert not signed_in(client, visit(client, key))


def test_a_password_changed_elsewhere_signs_the_session_out(client, learner):
    key = session_for(learner)
    learner.set_password("another long passphrase 123")
    learner.save()
    assert not signed_in(client, visit(client, key))
    assert not Session.objects.filter(session_key=key).exists()  # flushed, as Django does


def test_a_deleted_user_is_no_one(client, learner):
    key = session_for(learner)
    learner.delete()
    assert not signed_in(client, visit(client, key))


def test_logout_deletes_the_session_so_a_copied_cookie_is_no_one(client, learner):
    key = session_for(learner)
    assert signed_in(client, visit(client, key))
    client.post(reverse("logout"))
    assert not Session.objects.filter(session_key=key).exists()
    assert not signed_in(client, visit(client, key))


def test_each_is_one_statement(client, learner):
    key = session_for(learner)
    visit(client, key)
    with CaptureQueriesContext(connection) as queries:
        assert signed_in(client, visit(client, key))
    reads = [q["sql"] for q in queries]
    assert "django_session" in reads[0] and "auth_user" in reads[1], reads  # prepared: tests/test_prepared.py
