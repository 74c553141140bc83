"""One account per email address (case-insensitive, blank excepted): the constraint, the
migration that makes room for it, and the same form error wherever an address is set."""
import re
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from accounts.emails import EMAIL_TAKEN
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
TAKEN = "An account with this email address already exists"


def test_the_database_refuses_a_second_account_on_one_address_whatever_its_case(learner):
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="twin", email=learner.email.upper())
    # Blank is not an address: any number of accounts may have none.
    User.objects.create(username="blank1", email="")
    User.objects.create(username="blank2", email="")


@pytest.mark.django_db(transaction=True)
def test_the_migration_lists_duplicates_keeps_the_oldest_and_blanks_the_rest(capsys):
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts", "0002_i15a_review_settings")])
    oldest = User.objects.create(username="first", email="Shared@example.com")
    User.objects.create(username="second", email="shared@EXAMPLE.com")
    User.objects.create(username="third", email="shared@example.com")
    User.objects.create(username="alone", email="alone@example.com")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("accounts", "0003_i16_user_email_unique")])
    out = capsys.readouterr().out
    assert "shared@example.com: kept on first" in out and "blanked on second, third" in out
    assert "alone" not in out
    emails = dict(User.objects.values_list("username", "email"))
    assert emails == {"first": oldest.email, "second": "", "third": "", "alone": "alone@example.com"}
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="fourth", email="SHARED@example.com")
    # Back to the latest schema (later migrations of accounts exist) for the tests after this one.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_profile_sets_the_address_and_refuses_one_in_use(learner_client, learner, other_learner):
    url = reverse("accounts:profile")
    assert f'value="{learner.email}"' in learner_client.get(url).content.decode()
    response = learner_client.post(url, {"email": other_learner.email.upper(), "time_zone": "Europe/Paris"})
    assert response.status_code == 200 and TAKEN in response.content.decode()
    learner.refresh_from_db()
    assert learner.email == "learner@example.com" and learner.profile.time_zone == "UTC"
    # Keeping one's own address (in another case) is not a clash.
    response = learner_client.post(url, {"email": "LEARNER@example.com", "time_zone": "Europe/Paris"})
    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.email == "LEARNER@example.com" and learner.profile.time_zone == "Europe/Paris"


def test_a_profile_post_without_the_address_keeps_it(learner_client, learner):
    learner_client.post(reverse("accounts:profile"), {"time_zone": "Europe/Paris"})
    learner.refresh_from_db()
    assert learner.email == "learner@example.com" and learner.profile.time_zone == "Europe/Paris"


def test_the_admin_user_pages_refuse_an_address_in_use(admin_client, learner, other_learner):
    add = admin_client.post(reverse("admin:auth_user_add"), {
        "username": "newcomer", "email": learner.email.title(), "usable_password": "true",
        "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9",
    })
    assert add.status_code == 200 and TAKEN in add.content.decode()
    assert not User.objects.filter(username="newcomer").exists()

    change_url = reverse("admin:auth_user_change", args=[other_learner.pk])
    data = _change_form(admin_client, change_url)
    data["email"] = learner.email.upper()
    change = admin_client.post(change_url, data)
    assert change.status_code == 200 and TAKEN in change.content.decode()
    other_learner.refresh_from_db()
    assert other_learner.email == "other@example.com"


def _change_form(client, url: str) -> dict:
    """What the admin's user change page posts back unchanged."""
    page = client.get(url)
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() not in (None, False)}
    data = {k: ("on" if v is True else v) for k, v in data.items()}
    data.pop("password", None)
    data["date_joined_0"], data["date_joined_1"] = str(form["date_joined"].value()).split(" ")[0], "00:00:00"
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        for part in [formset.management_form, *formset.forms]:
            for name in part.fields:
                value = part[name].value()
                if value not in (None, False):
                    data[part.add_prefix(name)] = "on" if value is True else str(value)
    return data


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_admin_change_racing_another_account_on_the_address_gets_the_form_error(admin_user, client):
    """Another transaction holds the address, uncommitted, when the admin's check runs; the
    admin's write waits on the index, the other commits, and the admin sees the form error."""
    client.force_login(admin_user)
    target = UserFactory(username="target")
    url = reverse("admin:auth_user_change", args=[target.pk])
    data = _change_form(client, url)
    data["email"] = "race@example.com"
    holding, failures = threading.Event(), []

    def hold_then_commit():
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute(
                    "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
                    " is_staff, is_active, date_joined) VALUES ('', false, 'winner', '', '', 'RACE@example.com',"
                    " false, true, now())"
                )
                holding.set()
                # Commit once the admin's write is waiting on our row's index entry.
                for _ in range(2000):
                    cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
                    if cursor.fetchone()[0]:
                        break
                    time.sleep(0.005)
                else:
                    failures.append("the admin's write never waited on the index")
                cursor.execute("COMMIT")
        finally:
            other.close()

    thread = threading.Thread(target=hold_then_commit)
    thread.start()
    holding.wait(10)
    response = client.post(url, data)
    thread.join()
    assert not failures, failures
    assert response.status_code == 200
    assert TAKEN in response.content.decode()
    target.refresh_from_db()
    assert target.email == "target@example.com"


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_parallel_sign_ups_with_one_address_make_one_account_and_form_errors(live_server):
    import urllib.parse
    import urllib.request
    from http.cookiejar import CookieJar

    def sign_up(results: list, index: int) -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        page = opener.open(f"{live_server.url}/accounts/signup/").read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        email = "Twin@Example.com" if index % 2 else "twin@example.com"
        body = urllib.parse.urlencode({
            "csrfmiddlewaretoken": token, "username": f"twin{index}", "email": email,
            "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9",
        }).encode()
        request = urllib.request.Request(f"{live_server.url}/accounts/signup/", body, headers={"Referer": live_server.url})
        try:
            response = opener.open(request)
            results.append((response.status, response.read().decode()))
        except urllib.error.HTTPError as error:
            results.append((error.code, ""))

    results: list = []
    threads = [threading.Thread(target=sign_up, args=(results, n)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(status == 200 for status, _ in results), [status for status, _ in results]
    assert User.objects.filter(email__iexact="twin@example.com").count() == 1
    assert sum(EMAIL_TAKEN.split(".")[0] in page for _, page in results) == 4
