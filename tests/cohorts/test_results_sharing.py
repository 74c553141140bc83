"""Scores only where a cohort allows (issue 27, items 4 and 5): consent at joining and on My
cohorts, the member results page, and the admin's attempts for owner, other instructor,
former member, member without consent and Support."""
import pytest
from django.urls import reverse
from django.utils import timezone

from cohorts import services
from cohorts.access import attempts_visible_to
from cohorts.models import Cohort, Invitation, Membership
from exams.models import Attempt, Dispute, Erratum
from exams.roles import instructors_group, support_group
from exams.room import services as room
from tests.factories import UserFactory, exam_with_bank

pytestmark = pytest.mark.django_db


@pytest.fixture
def exam():
    return exam_with_bank(is_published=True)


@pytest.fixture
def cohort(instructor, exam):
    cohort = Cohort.objects.create(owner=instructor, exam=exam, name="Spring class")
    Invitation.objects.create(cohort=cohort, shares_results=True)
    return cohort


@pytest.fixture
def other_instructor(db):
    user = UserFactory(username="other-teacher", is_staff=True)
    user.groups.add(instructors_group())
    return user


@pytest.fixture
def supporter(db):
    user = UserFactory(username="helpdesk", is_staff=True)
    user.groups.add(support_group())
    return user


def finished_mock(user, exam) -> Attempt:
    attempt = room.attempt_start(user=user, exam=exam, seed=7).attempt
    first = attempt.responses.order_by("position").first()
    key = first.question.choices.get(is_correct=True)
    first.selected.add(key)
    attempt.responses.filter(pk=first.pk).update(answered_at=timezone.now())
    return room.attempt_submit(user=user, attempt_id=attempt.pk)


def join(learner, cohort, *, share: bool) -> Membership:
    return services.cohort_join(invitation=cohort.invitations.get(), learner=learner, share_results=share)


@pytest.fixture
def matrix(cohort, exam, learner, other_learner):
    """learner shares with the cohort's owner; other_learner is a member who does not."""
    sharing = join(learner, cohort, share=True)
    silent = join(other_learner, cohort, share=False)
    return {
        "sharing": sharing, "silent": silent,
        "shared_mock": finished_mock(learner, exam), "silent_mock": finished_mock(other_learner, exam),
    }


def admin_list(client, user) -> set[int]:
    client.force_login(user)
    page = client.get(reverse("admin:exams_attempt_changelist"))
    assert page.status_code == 200
    return {attempt.pk for attempt in page.context["cl"].result_list}


def admin_page(client, user, attempt) -> int:
    client.force_login(user)
    return client.get(reverse("admin:exams_attempt_change", args=[attempt.pk])).status_code


def test_the_owner_sees_only_members_who_share(client, instructor, matrix):
    assert admin_list(client, instructor) == {matrix["shared_mock"].pk}
    assert admin_page(client, instructor, matrix["shared_mock"]) == 200
    # Without consent: not listed, and the page is not there (the admin redirects with "does not exist").
    assert admin_page(client, instructor, matrix["silent_mock"]) == 302


def test_another_instructor_sees_no_learner(client, other_instructor, matrix):
    assert admin_list(client, other_instructor) == set()
    assert admin_page(client, other_instructor, matrix["shared_mock"]) == 302
    page = client.get(reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk]))
    assert page.status_code == 404


def test_a_former_member_is_no_longer_seen(client, instructor, matrix):
    url = reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk])
    services.membership_end(membership=matrix["sharing"])
    assert admin_list(client, instructor) == set()
    assert admin_page(client, instructor, matrix["shared_mock"]) == 302
    page = client.get(url)
    assert page.status_code == 404


def test_withdrawing_consent_hides_the_results_at_once(client, instructor, learner, matrix):
    client.force_login(learner)
    response = client.post(reverse("cohorts:results_sharing", args=[matrix["sharing"].cohort_id]), {"share": "no"})
    assert response.status_code == 302
    assert Membership.objects.get(pk=matrix["sharing"].pk).results_shared_at is None
    assert admin_list(client, instructor) == set()
    page = client.get(reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk]))
    assert page.status_code == 404


def test_support_sees_every_learner_and_changes_nothing(client, supporter, matrix):
    assert admin_list(client, supporter) == {matrix["shared_mock"].pk, matrix["silent_mock"].pk}
    assert admin_page(client, supporter, matrix["silent_mock"]) == 200
    assert not supporter.has_perm("exams.change_question") and supporter.has_perm("exams.view_attempt")
    assert attempts_visible_to(supporter).count() == 2


def test_a_superuser_sees_every_learner(client, matrix):
    boss = UserFactory(username="boss", is_staff=True, is_superuser=True)
    assert admin_list(client, boss) == {matrix["shared_mock"].pk, matrix["silent_mock"].pk}


def test_sharing_covers_the_cohorts_exam_only(client, instructor, learner, matrix):
    elsewhere = exam_with_bank(is_published=True)
    other = finished_mock(learner, elsewhere)
    assert other.pk not in admin_list(client, instructor)


def test_errata_triage_stays_visible_to_every_instructor(client, other_instructor, matrix, learner):
    response = matrix["shared_mock"].responses.order_by("position").first()
    erratum = Erratum.objects.create(question=response.question, note="Key looks wrong", source="learners")
    Dispute.objects.create(erratum=erratum, learner=learner, response=response, reason="B is right")
    client.force_login(other_instructor)
    assert client.get(reverse("admin:exams_dispute_changelist")).context["cl"].result_count == 1
    decide = client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk]))
    assert decide.status_code == 200 and "B is right" in decide.text


# Consent --------------------------------------------------------------------------------


def test_joining_records_consent_only_when_asked_and_given(client, cohort, learner, other_learner):
    client.force_login(learner)
    page = client.get(reverse("cohorts:join", args=[cohort.invitations.get().token]))
    assert 'name="share_results"' in page.text
    client.post(reverse("cohorts:join", args=[cohort.invitations.get().token]), {"share_results": "on"})
    joined = Membership.objects.get(learner=learner)
    assert joined.results_shared_at is not None and joined.results_asked_at is not None

    quiet = services.invitation_renew(cohort=cohort, shares_results=False)
    client.force_login(other_learner)
    assert 'name="share_results"' not in client.get(reverse("cohorts:join", args=[quiet.token])).text
    client.post(reverse("cohorts:join", args=[quiet.token]), {"share_results": "on"})  # not asked: ignored
    assert Membership.objects.get(learner=other_learner).results_shared_at is None


def test_an_existing_member_is_asked_once_on_my_cohorts(client, cohort, learner):
    old = Membership.objects.create(cohort=cohort, learner=learner)  # joined before the question existed
    client.force_login(learner)
    url = reverse("cohorts:index")
    assert "Share your mock results with teacher?" in client.get(url).text
    client.post(reverse("cohorts:results_sharing", args=[cohort.pk]), {"share": "no"})
    old.refresh_from_db()
    assert old.results_asked_at is not None and old.results_shared_at is None
    page = client.get(url).text
    assert "Share your mock results with teacher?" not in page and "Not shared" in page
    client.post(reverse("cohorts:results_sharing", args=[cohort.pk]), {"share": "yes"})
    assert "Shared since" in client.get(url).text


def test_sharing_is_only_for_ones_own_membership(client, cohort, learner, other_learner):
    join(learner, cohort, share=False)
    client.force_login(other_learner)
    assert client.post(reverse("cohorts:results_sharing", args=[cohort.pk]), {"share": "yes"}).status_code == 404
    assert Membership.objects.get(learner=learner).results_shared_at is None


# The member results page ------------------------------------------------------------------


def test_the_report_links_to_a_sharing_members_results_only(client, instructor, matrix):
    client.force_login(instructor)
    page = client.get(reverse("cohorts:detail", args=[matrix["sharing"].cohort_id])).text
    assert reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk]) in page
    assert reverse("cohorts:member_results", args=[matrix["silent"].cohort_id, matrix["silent"].pk]) not in page
    silent = client.get(reverse("cohorts:member_results", args=[matrix["silent"].cohort_id, matrix["silent"].pk]))
    assert silent.status_code == 404


def test_member_results_show_score_domains_and_right_wrong_unanswered(client, instructor, matrix, django_assert_max_num_queries):
    client.force_login(instructor)
    url = reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk])
    client.get(url)
    with django_assert_max_num_queries(14):
        page = client.get(url)
    assert page.status_code == 200
    assert [slot["outcome"] for slot in page.context["slots"]].count("Right") == 1
    assert [slot["outcome"] for slot in page.context["slots"]].count("Unanswered") == 9
    assert "1 right, 0 wrong, 9 unanswered." in page.text
    assert len(page.context["domains"]) == 2
    # Never the letters picked, nor the key.
    key = matrix["shared_mock"].responses.order_by("position").first().question.choices.get(is_correct=True)
    assert key.text not in page.text


def test_an_unknown_attempt_choice_falls_back_to_the_latest(client, instructor, matrix):
    client.force_login(instructor)
    url = reverse("cohorts:member_results", args=[matrix["sharing"].cohort_id, matrix["sharing"].pk])
    assert client.get(url, {"attempt": matrix["silent_mock"].pk}).context["attempt"] == matrix["shared_mock"]
    assert client.get(url, {"attempt": "x" * 40}).status_code == 200


def test_the_support_group_is_made_by_its_migration():
    from importlib import import_module

    from django.apps import apps
    from django.contrib.auth.models import Group

    # Run the migration's own function: a transactional test elsewhere in the run may have
    # flushed the rows the migration made (as the Instructors group's test does).
    migration = import_module("cohorts.migrations.0004_support_group")
    saved = {label: apps.get_app_config(label).models_module for label in (*migration.APPS, "auth")}
    try:
        migration.create_support(apps, None)
    finally:
        for label, models_module in saved.items():
            apps.get_app_config(label).models_module = models_module
    group = Group.objects.get(name="Support")
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"view_attempt", "view_cohort", "view_membership", "view_user"} <= codenames
    assert not {codename for codename in codenames if not codename.startswith("view_")}
