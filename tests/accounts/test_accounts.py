"""Sign up, log in and out, passwords, the profile."""
import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.models import Profile
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_new_learner_signs_up_and_is_logged_in(client):
    response = client.post(
        reverse("accounts:signup"),
        {"username": "ada", "email": "ada@example.com", "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("exams:catalogue")
    page = response.content.decode()
    assert "Signed in as <strong>ada</strong>" in page
    assert Profile.objects.get(user__username="ada").time_zone == "UTC"


def test_signup_with_bad_input_explains_and_creates_nothing(client):
    response = client.post(
        reverse("accounts:signup"),
        {"username": "ada", "email": "not-an-email", "password1": "short", "password2": "different"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Enter a valid email address." in page
    assert "The two password fields" in page
    assert not User.objects.filter(username="ada").exists()


def test_an_email_can_hold_one_account(client, learner):
    response = client.post(
        reverse("accounts:signup"),
        {"username": "twin", "email": learner.email.upper(), "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9"},
    )
    assert "already exists" in response.content.decode()


def test_log_in_and_out(client, learner):
    response = client.post(reverse("login"), {"username": learner.username, "password": PASSWORD}, follow=True)
    assert f"Signed in as <strong>{learner.username}</strong>" in response.content.decode()
    response = client.post(reverse("logout"), follow=True)
    assert "You are logged out" in response.content.decode()
    assert "Signed in as" not in response.content.decode()


def test_a_wrong_password_is_refused_with_a_message(client, learner):
    response = client.post(reverse("login"), {"username": learner.username, "password": "nope"})
    assert "Please enter a correct username and password" in response.content.decode()


def test_password_reset_mails_a_link_that_sets_a_new_password(client, learner, mailoutbox):
    client.post(reverse("password_reset"), {"email": learner.email})
    assert len(mailoutbox) == 1
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+)", mailoutbox[0].body).group(1)
    form_url = client.get(link, follow=True).redirect_chain[-1][0]
    response = client.post(form_url, {"new_password1": "brand-New-phrase-42", "new_password2": "brand-New-phrase-42"}, follow=True)
    assert "Your new password is set" in response.content.decode()
    client.logout()
    response = client.post(reverse("login"), {"username": learner.username, "password": "brand-New-phrase-42"}, follow=True)
    assert f"Signed in as <strong>{learner.username}</strong>" in response.content.decode()


def test_password_change(client, learner):
    client.force_login(learner)
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": "brand-New-phrase-42", "new_password2": "brand-New-phrase-42"},
        follow=True,
    )
    assert "Your password was changed" in response.content.decode()


def test_the_profile_saves_time_zone_and_shortcuts(learner_client, learner):
    response = learner_client.post(reverse("accounts:profile"), {"time_zone": "Europe/Paris"}, follow=True)
    assert "Profile saved." in response.content.decode()
    profile = Profile.objects.get(user=learner)
    assert profile.time_zone == "Europe/Paris"
    assert profile.shortcuts_enabled is False


def test_an_unknown_time_zone_is_refused_and_changes_nothing(learner_client, learner):
    response = learner_client.post(reverse("accounts:profile"), {"time_zone": "Mars/Olympus", "shortcuts_enabled": "on"})
    assert "is not a time zone we know" in response.content.decode()
    assert Profile.objects.get(user=learner).time_zone == "UTC"


def test_the_profile_sets_desired_retention_and_an_exam_date(learner_client, learner):
    page = learner_client.get(reverse("accounts:profile")).content.decode()
    assert 'name="desired_retention"' in page and 'value="0.90"' in page and 'type="date"' in page
    exam_day = date.today() + timedelta(days=30)
    response = learner_client.post(
        reverse("accounts:profile"),
        {"time_zone": "UTC", "desired_retention": "0.85", "exam_date": exam_day.isoformat()}, follow=True,
    )
    assert "Profile saved." in response.content.decode()
    profile = Profile.objects.get(user=learner)
    assert (profile.desired_retention, profile.exam_date) == (Decimal("0.85"), exam_day)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"desired_retention": "0.79"}, "greater than or equal to 0.80"),
        ({"desired_retention": "0.98"}, "less than or equal to 0.97"),
        ({"desired_retention": "high"}, "Enter a number"),
        ({"exam_date": "2001-01-01"}, "has passed"),
        ({"exam_date": "31/31/2030"}, "Enter a valid date"),
    ],
)
def test_a_retention_out_of_range_or_a_past_exam_date_is_refused_and_changes_nothing(learner_client, learner, data, message):
    response = learner_client.post(reverse("accounts:profile"), {"time_zone": "Europe/Paris", **data})
    assert response.status_code == 200 and message in response.content.decode()
    profile = Profile.objects.get(user=learner)
    assert (profile.time_zone, profile.desired_retention, profile.exam_date) == ("UTC", Decimal("0.90"), None)


def test_a_saved_exam_date_that_has_passed_does_not_block_the_profile(learner_client, learner):
    Profile.objects.filter(user=learner).update(exam_date=date(2001, 1, 1))
    learner_client.post(reverse("accounts:profile"), {"time_zone": "Europe/Paris", "exam_date": "2001-01-01"})
    assert Profile.objects.get(user=learner).time_zone == "Europe/Paris"


def test_the_database_refuses_a_retention_out_of_range(learner):
    from django.db import IntegrityError, transaction

    Profile.objects.for_user(learner)
    with pytest.raises(IntegrityError), transaction.atomic():
        Profile.objects.filter(user=learner).update(desired_retention=Decimal("0.99"))


def test_the_profile_needs_a_login(client):
    response = client.get(reverse("accounts:profile"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_repeated_failed_logins_lock_the_account_for_that_address_with_a_clear_message(client, learner):
    for attempt in range(1, 5):
        response = client.post(reverse("login"), {"username": learner.username, "password": "wrong"})
        assert "Please enter a correct username and password" in response.content.decode()
        # The fourth failure of five warns that the next one locks the account.
        assert ("One more failed try locks this account for 15 minutes" in response.content.decode()) == (attempt == 4)
    assert client.post(reverse("login"), {"username": learner.username, "password": "wrong"}).status_code == 429
    # Locked: even the right password is refused until the cool-off ends.
    response = client.post(reverse("login"), {"username": learner.username, "password": PASSWORD})
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed logins" in page and "15 min" in page
    # The same learner from another address is not locked out.
    other = client.post(reverse("login"), {"username": learner.username, "password": PASSWORD}, REMOTE_ADDR="10.9.8.7")
    assert other.status_code == 302


def test_signup_takes_the_time_zone_the_page_read_from_the_browser(client):
    page = client.get(reverse("accounts:signup")).content.decode()
    assert 'data-browser-time-zone="1"' in page and 'type="hidden" name="time_zone"' in page
    client.post(
        reverse("accounts:signup"),
        {"username": "kenji", "email": "k@example.com", "password1": "a-Long-passphrase-9",
         "password2": "a-Long-passphrase-9", "time_zone": "Asia/Tokyo"},
    )
    assert Profile.objects.get(user__username="kenji").time_zone == "Asia/Tokyo"


def test_the_profile_zone_is_a_searchable_field_that_forgives_case_and_spaces(learner_client, learner):
    page = learner_client.get(reverse("accounts:profile")).content.decode()
    assert 'list="time-zones"' in page and '<option value="America/New_York"></option>' in page
    learner_client.post(reverse("accounts:profile"), {"time_zone": "america/new york", "shortcuts_enabled": "on"})
    assert Profile.objects.get(user=learner).time_zone == "America/New_York"


def test_times_show_in_the_learners_zone_with_its_name(learner_client, learner):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from exams.models import Attempt, AttemptStatus
    from tests.factories import exam_with_bank

    exam = exam_with_bank()
    finished = datetime(2026, 7, 1, 12, 0, tzinfo=ZoneInfo("UTC"))
    attempt = Attempt.objects.create(
        user=learner, exam=exam, status=AttemptStatus.SUBMITTED, finished_at=finished, score="50.00",
        published_score="50.00", right_count=5, total_count=10, passed=False,
    )
    learner_client.post(reverse("accounts:profile"), {"time_zone": "Europe/Paris", "shortcuts_enabled": "on"})
    page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
    assert "1 Jul 2026, 14:00 CEST" in page
    dashboard = learner_client.get(reverse("exams:dashboard")).content.decode()
    assert "1 Jul 2026, 14:00 CEST" in dashboard


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_parallel_sign_ups_with_one_username_make_one_account_and_form_errors(live_server):
    """Five sign-ups at once: one account, and the others see a form error, never a 500."""
    import threading
    import urllib.parse
    import urllib.request
    from http.cookiejar import CookieJar

    def sign_up(results: list, index: int) -> None:
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(f"{live_server.url}/accounts/signup/").read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        body = urllib.parse.urlencode({
            "csrfmiddlewaretoken": token, "username": "twin", "email": f"twin{index}@example.com",
            "password1": "a-Long-passphrase-9", "password2": "a-Long-passphrase-9",
        }).encode()
        request = urllib.request.Request(f"{live_server.url}/accounts/signup/", body, headers={"Referer": live_server.url})
        try:
            results.append(opener.open(request).status)
        except urllib.error.HTTPError as error:
            results.append(error.code)

    results: list[int] = []
    threads = [threading.Thread(target=sign_up, args=(results, n)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(status == 200 for status in results), results
    assert User.objects.filter(username="twin").count() == 1
