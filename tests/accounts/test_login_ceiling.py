"""The rest of the login throttling (issue 28): one username guessed from many addresses is
slowed, never locked for its owner; the locked-out page says how long is left."""
import time
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "a-Long-passphrase-9"


@pytest.fixture
def victim(db):
    user = UserFactory(username="victim")
    user.set_password(PASSWORD)
    user.save()
    return user


def try_login(client, password: str, address: str):
    return client.post(reverse("login"), {"username": "victim", "password": password}, REMOTE_ADDR=address)


def test_a_username_guessed_from_many_addresses_is_slowed_but_its_owner_gets_in(client, victim, settings):
    settings.LOGIN_USERNAME_CEILING, settings.LOGIN_USERNAME_DELAY_SECONDS = 8, 2
    for address in ("10.0.0.1", "10.0.0.2"):
        for _ in range(4):  # one fewer than the per-address lock, from each
            assert try_login(client, "wrong", address).status_code == 200
    # Past the ceiling: the next try, from anywhere, waits, and is not even checked.
    slowed = try_login(client, PASSWORD, "10.0.0.3")
    assert slowed.status_code == 429 and "try again in 2 seconds" in slowed.content.decode()
    assert "_auth_user_id" not in client.session
    assert sum(AccessAttempt.objects.filter(username="victim").values_list("failures_since_start", flat=True)) == 8
    time.sleep(2.1)
    # After the delay the owner's right password works: slowed, never locked out.
    assert try_login(client, PASSWORD, "10.0.0.3").status_code == 302
    assert client.session["_auth_user_id"] == str(victim.pk)


def test_below_the_ceiling_nothing_waits(client, victim, settings):
    settings.LOGIN_USERNAME_CEILING = 8
    for _ in range(4):
        try_login(client, "wrong", "10.0.0.1")
    assert try_login(client, PASSWORD, "10.0.0.2").status_code == 302


def test_the_locked_out_page_says_how_long_is_left(client, victim):
    for _ in range(5):
        try_login(client, "wrong", "10.0.0.9")
    page = try_login(client, PASSWORD, "10.0.0.9")
    assert page.status_code == 429 and "15 minutes left" in page.content.decode()
    # Ten minutes later (the latest failure moved back), five are left.
    attempt = AccessAttempt.objects.get(username="victim", ip_address="10.0.0.9")
    AccessAttempt.objects.filter(pk=attempt.pk).update(attempt_time=attempt.attempt_time - timedelta(minutes=10))
    page = try_login(client, PASSWORD, "10.0.0.9")
    assert page.status_code == 429 and "5 minutes left" in page.content.decode()
