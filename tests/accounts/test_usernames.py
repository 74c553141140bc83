"""Usernames that cannot impersonate (issue 28): `кіm` (Cyrillic) beside `kim` is refused at
sign-up, in the admin and in a race, through the UTS #39 skeletons stored beside each
username (accounts.lookalikes); a migration reports look-alikes already there and blocks no
one's sign-in."""
import re
import threading

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from accounts.models import UsernameSkeleton
from accounts.lookalikes import LOOK_ALIKE, confusables_version, username_claim, username_skeletons
from tests.accounts.test_emails import _change_form

pytestmark = pytest.mark.django_db
PASSWORD = "a-Long-passphrase-9"
# kim in Latin, then with Cyrillic к and/or і, and upper-cased: one look to a reader.
LOOK_ALIKES = ["kim", "кіm", "kіm", "кim", "KІM"]


def sign_up(client, username: str, email: str):
    return client.post(reverse("accounts:signup"), {
        "username": username, "email": email, "password1": PASSWORD, "password2": PASSWORD,
    })


def test_the_skeletons_make_look_alikes_one_and_keep_others_apart():
    assert confusables_version() == "13.0.0"
    keys = {username_skeletons(name)[1] for name in LOOK_ALIKES}
    assert keys == {"KlM"}
    assert username_skeletons("pаypal") == username_skeletons("paypal")  # Cyrillic а
    assert username_skeletons("rnary")[0] == username_skeletons("mary")[0]  # rn reads as m
    assert username_skeletons("kim")[0] != username_skeletons("tim")[0]
    assert username_skeletons("kim")[1] != username_skeletons("kip")[1]


def test_sign_up_refuses_a_look_alike_of_a_taken_name(client):
    assert sign_up(client, "kim", "kim@example.com").status_code == 302
    assert UsernameSkeleton.objects.filter(user__username="kim").exists()
    client.logout()
    for name in LOOK_ALIKES[1:]:
        page = sign_up(client, name, f"{len(name)}{ord(name[0])}@example.com")
        assert page.status_code == 200 and LOOK_ALIKE in page.content.decode(), name
    assert list(User.objects.values_list("username", flat=True)) == ["kim"]
    assert sign_up(client, "kip", "kip@example.com").status_code == 302


def test_the_database_refuses_a_second_skeleton(learner):
    username_claim(learner)
    twin = User.objects.create(username="lеarner")  # Cyrillic е
    with pytest.raises(IntegrityError), transaction.atomic():
        username_claim(twin)


def test_the_admin_refuses_a_look_alike_on_add_and_on_rename(admin_client, learner, other_learner):
    kim = User.objects.create(username="kim")
    username_claim(kim)
    add = admin_client.post(reverse("admin:auth_user_add"), {
        "username": "кіm", "usable_password": "true", "password1": PASSWORD, "password2": PASSWORD,
    })
    assert add.status_code == 200 and LOOK_ALIKE in add.content.decode()
    assert not User.objects.filter(username="кіm").exists()

    change_url = reverse("admin:auth_user_change", args=[other_learner.pk])
    data = _change_form(admin_client, change_url)
    data["username"] = "кіm"
    change = admin_client.post(change_url, data)
    assert change.status_code == 200 and LOOK_ALIKE in change.content.decode()
    other_learner.refresh_from_db()
    assert other_learner.username == "other"
    # Saving a user under its own name stores its skeletons.
    data["username"] = "other"
    assert admin_client.post(change_url, data).status_code == 302
    assert UsernameSkeleton.objects.get(user=other_learner).upper_skeleton == "OTHER"


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_parallel_sign_ups_of_look_alikes_make_one_account_and_form_errors(live_server):
    import urllib.parse
    import urllib.request
    from http.cookiejar import CookieJar

    def attempt(results: list, name: str, index: int) -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        page = opener.open(f"{live_server.url}/accounts/signup/").read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        body = urllib.parse.urlencode({
            "csrfmiddlewaretoken": token, "username": name, "email": f"twin{index}@example.com",
            "password1": PASSWORD, "password2": PASSWORD,
        }).encode()
        request = urllib.request.Request(f"{live_server.url}/accounts/signup/", body, headers={"Referer": live_server.url})
        try:
            response = opener.open(request)
            results.append((response.status, response.read().decode()))
        except urllib.error.HTTPError as error:
            results.append((error.code, ""))

    results: list = []
    threads = [threading.Thread(target=attempt, args=(results, name, n)) for n, name in enumerate(LOOK_ALIKES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(status == 200 for status, _ in results), [status for status, _ in results]
    assert User.objects.filter(username__in=LOOK_ALIKES).count() == 1
    refused = [body for _, body in results if "Create your account" in body]
    assert len(refused) == len(LOOK_ALIKES) - 1
    assert all(LOOK_ALIKE in body or "could not be created just now" in body or "already exists" in body for body in refused)


@pytest.mark.django_db(transaction=True)
def test_the_migration_reports_look_alikes_and_blocks_no_sign_in(client, capsys):
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts", "0003_i16_user_email_unique")])
    kim = User.objects.create_user("kim", password=PASSWORD)
    twin = User.objects.create_user("кіm", password=PASSWORD)
    User.objects.create_user("alone", password=PASSWORD)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("accounts", "0005_i28_username_skeletons")])
    out = capsys.readouterr().out
    assert f"'кіm' (user #{twin.pk}) looks like 'kim'" in out and "confusables 13.0.0" in out
    assert "alone" not in out
    assert set(UsernameSkeleton.objects.values_list("user__username", flat=True)) == {"kim", "alone"}
    for user in (twin, kim):
        signed_in = client.post(reverse("login"), {"username": user.username, "password": PASSWORD})
        assert signed_in.status_code == 302 and client.session["_auth_user_id"] == str(user.pk), user.username
        client.logout()
    # Back to the latest migrations, for the tests after this one.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
