"""Cohorts: invitation links, joining and leaving, the owner's report, its flags, export and query counts."""
import csv
import html
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from cohorts.models import Cohort, Invitation, Membership
from cohorts.report import MEMBERS_PER_PAGE, Flag, cohort_report, flag_for
from exams.models import Attempt, AttemptMode, AttemptStatus, Question, Response
from exams.roles import instructors_group
from exams.study import ability, progress
from exams.templatetags.exam_extras import percent
from tests.exams.study.test_dashboard import finished_history
from tests.factories import UserFactory, exam_with_bank

pytestmark = pytest.mark.django_db


@pytest.fixture
def exam():
    return exam_with_bank(per_domain=25)


@pytest.fixture
def cohort(instructor, exam):
    cohort = Cohort.objects.create(owner=instructor, exam=exam, name="Spring class")
    Invitation.objects.create(cohort=cohort)
    return cohort


@pytest.fixture
def other_instructor(db):
    user = UserFactory(username="other-teacher", is_staff=True)
    user.groups.add(instructors_group())
    return user


def as_user(client, user):
    client.force_login(user)
    return client


def mock(user, exam, *, score: int, days_ago: int, answers: dict[int, tuple[int, int]] | None = None) -> Attempt:
    """A finished mock with `answers` = {domain_id: (right, answered)} as real response rows."""
    finished = timezone.now() - timedelta(days=days_ago)
    attempt = Attempt.objects.create(
        user=user, exam=exam, mode=AttemptMode.MOCK, status=AttemptStatus.SUBMITTED, started_at=finished - timedelta(hours=1),
        finished_at=finished, score=Decimal(score), published_score=Decimal(score), passed=score >= exam.passing_score,
        right_count=0, total_count=0,
    )
    responses, position = [], 0
    for domain_id, (right, answered) in (answers or {}).items():
        questions = list(exam.questions.filter(domain_id=domain_id)[:answered])
        for index, question in enumerate(questions):
            position += 1
            responses.append(Response(
                attempt=attempt, position=position, question=question, domain_id=domain_id, version=question.current_version(),
                choice_order=[], is_correct=index < right, answered_at=finished - timedelta(minutes=position),
            ))
    Response.objects.bulk_create(responses)
    return attempt


def join(cohort, learner) -> Membership:
    return Membership.objects.create(cohort=cohort, learner=learner)


# The rule -----------------------------------------------------------------------------

def test_many_learners_standings_equal_each_learners_dashboard(exam):
    learners = [UserFactory() for _ in range(3)]
    for seed, learner in enumerate(learners):
        finished_history(learner, exam, attempts=30, seed=seed, per_attempt=8)

    together = progress.standings_of_learners(learners=type(learners[0]).objects.filter(pk__in=[u.pk for u in learners]), exam=exam)

    for learner in learners:
        alone = {s.domain_id: (s.right, s.answered) for s in progress.domain_standings(user=learner, exam=exam)}
        assert {pk: (s.right, s.answered) for pk, s in together[learner.pk].items()} == alone


@pytest.mark.parametrize(
    ("right", "counted", "expected"),
    [(0, 9, (None, Flag.NOT_ENOUGH_DATA)), (9, 9, (None, Flag.NOT_ENOUGH_DATA)), (59, 100, (59.0, Flag.AT_RISK)),
     (6, 10, (60.0, Flag.NEEDS_REVIEW)), (69, 100, (69.0, Flag.NEEDS_REVIEW)), (7, 10, (70.0, "")), (10, 10, (100.0, ""))],
)
def test_flags_follow_the_cohorts_thresholds(cohort, right, counted, expected):
    assert flag_for(cohort=cohort, right=right, counted=counted) == expected


def test_thresholds_are_per_cohort(cohort):
    cohort.at_risk_below, cohort.needs_review_below = 40, 90
    assert flag_for(cohort=cohort, right=50, counted=100) == (50.0, Flag.NEEDS_REVIEW)
    assert flag_for(cohort=cohort, right=39, counted=100) == (39.0, Flag.AT_RISK)


def test_the_instructors_group_gets_the_cohort_permissions_by_migration():
    from importlib import import_module

    from django.apps import apps

    config = apps.get_app_config("cohorts")
    models_module = config.models_module
    try:
        import_module("cohorts.migrations.0002_instructors_run_cohorts").grant(apps, None)
    finally:
        config.models_module = models_module
    codenames = set(Group.objects.get(name="Instructors").permissions.filter(content_type__app_label="cohorts").values_list("codename", flat=True))
    assert {"add_cohort", "change_cohort", "view_cohort", "delete_membership"} <= codenames


# Creating and inviting ---------------------------------------------------------------

def test_an_instructor_creates_a_cohort_with_an_invitation_link(client, instructor, exam):
    as_user(client, instructor)
    assert "You run no cohort yet" in client.get(reverse("cohorts:index")).content.decode()

    response = client.post(reverse("cohorts:create"), {"name": "Evening class", "exam": exam.pk,
                                                        "needs_review_below": 70, "at_risk_below": 60}, follow=True)

    cohort = Cohort.objects.get()
    assert (cohort.owner, cohort.exam, cohort.name) == (instructor, exam, "Evening class")
    invitation = cohort.invitations.get()
    assert len(invitation.token) >= 32
    assert timedelta(days=13, hours=23) < invitation.expires_at - timezone.now() <= timedelta(days=14)
    page = response.content.decode()
    assert reverse("cohorts:join", args=[invitation.token]) in page
    assert "No member yet. Share the invitation link above" in page


def test_thresholds_are_edited_and_checked(client, instructor, cohort):
    as_user(client, instructor)
    url = reverse("cohorts:edit", args=[cohort.pk])

    refused = client.post(url, {"name": "Spring class", "needs_review_below": 50, "at_risk_below": 60})
    assert "“At risk” must be at most the “needs review” threshold (50%)." in refused.content.decode()
    assert client.post(url, {"name": "Spring", "needs_review_below": 80, "at_risk_below": 50}).status_code == 302
    cohort.refresh_from_db()
    assert (cohort.name, cohort.needs_review_below, cohort.at_risk_below, cohort.exam_id) == ("Spring", 80, 50, cohort.exam_id)


def test_a_learner_cannot_run_cohorts(client, learner, cohort):
    as_user(client, learner)
    assert client.get(reverse("cohorts:create")).status_code == 403
    assert client.get(reverse("cohorts:detail", args=[cohort.pk])).status_code == 403
    assert "Cohorts you run" not in client.get(reverse("cohorts:index")).content.decode()


def test_renewing_the_link_retires_the_old_one_and_revoking_leaves_none(client, instructor, cohort):
    as_user(client, instructor)
    old = cohort.invitations.get()

    client.post(reverse("cohorts:renew_invitation", args=[cohort.pk]))
    new = Invitation.objects.usable().get(cohort=cohort)
    assert new != old and Invitation.objects.get(pk=old.pk).revoked_at is not None
    client.post(reverse("cohorts:revoke_invitation", args=[cohort.pk]))
    assert not Invitation.objects.usable().filter(cohort=cohort).exists()
    assert "No working invitation link" in client.get(reverse("cohorts:detail", args=[cohort.pk])).content.decode()
    assert client.get(reverse("cohorts:revoke_invitation", args=[cohort.pk])).status_code == 405


# Joining and leaving -----------------------------------------------------------------

def test_joining_shows_what_the_instructor_will_see_and_asks_first(client, learner, cohort):
    as_user(client, learner)
    url = reverse("cohorts:join", args=[cohort.invitations.get().token])

    page = client.get(url).content.decode()
    assert "Join Spring class?" in page and "teacher" in page
    assert "your last mock's score" in page and "your mastery of each domain" in page
    assert "They will not see your answers, your reports on questions" in page
    assert not Membership.objects.exists(), "opening the link joins nobody"

    joined = client.post(url, follow=True)
    assert Membership.objects.filter(cohort=cohort, learner=learner).exists()
    listing = joined.content.decode()
    assert "You joined “Spring class”" in listing and "Cohorts you are in" in listing and "Spring class" in listing
    again = client.get(url, follow=True)
    assert "You are already a member of “Spring class”." in again.content.decode()
    assert Membership.objects.count() == 1


@pytest.mark.parametrize("state", ["revoked", "expired"])
def test_a_dead_link_says_why_and_joins_nobody(client, learner, cohort, state):
    invitation = cohort.invitations.get()
    if state == "revoked":
        invitation.revoked_at = timezone.now()
        expected = "This invitation link was withdrawn by the cohort's instructor. Ask them for a new link."
    else:
        invitation.expires_at = timezone.now() - timedelta(minutes=1)
        expected = "Invitation links last 14 days: ask the cohort's instructor for a new one."
    invitation.save()
    as_user(client, learner)
    url = reverse("cohorts:join", args=[invitation.token])

    for response in (client.get(url), client.post(url)):
        assert response.status_code == 410
        assert expected in html.unescape(response.content.decode())
    assert not Membership.objects.exists()


def test_an_unknown_link_and_the_owners_own_link(client, instructor, learner, cohort):
    as_user(client, learner)
    unknown = client.get(reverse("cohorts:join", args=["no-such-token"]))
    assert unknown.status_code == 404 and "This invitation link is not valid." in unknown.content.decode()
    as_user(client, instructor)
    own = client.post(reverse("cohorts:join", args=[cohort.invitations.get().token]))
    assert "You run this cohort, so you cannot join it as a learner." in own.content.decode()
    assert not Membership.objects.exists()


def test_joining_needs_a_login(client, cohort):
    url = reverse("cohorts:join", args=[cohort.invitations.get().token])
    assert client.get(url).url.startswith(reverse("login"))


def test_a_member_leaves_after_confirming(client, learner, cohort):
    join(cohort, learner)
    as_user(client, learner)
    url = reverse("cohorts:leave", args=[cohort.pk])

    confirm = client.get(url).content.decode()
    assert "Leave Spring class?" in confirm and Membership.objects.exists()
    page = client.post(url, follow=True).content.decode()
    assert "You left “Spring class”." in page and "You are in no cohort." in page
    assert not Membership.objects.exists()
    assert client.post(url).status_code == 404


def test_the_owner_removes_a_member_after_confirming(client, instructor, learner, cohort):
    membership = join(cohort, learner)
    as_user(client, instructor)
    url = reverse("cohorts:remove_member", args=[cohort.pk, membership.pk])

    assert "Remove learner from Spring class?" in client.get(url).content.decode()
    assert Membership.objects.exists()
    page = client.post(url, follow=True).content.decode()
    assert "learner is no longer in “Spring class”." in page
    assert not Membership.objects.exists()


# Who sees what -------------------------------------------------------------------------

def test_only_the_owner_sees_the_cohort(client, instructor, other_instructor, learner, other_learner, cohort):
    membership = join(cohort, learner)
    owner_urls = [
        reverse("cohorts:detail", args=[cohort.pk]), reverse("cohorts:edit", args=[cohort.pk]),
        reverse("cohorts:export_csv", args=[cohort.pk]), reverse("cohorts:remove_member", args=[cohort.pk, membership.pk]),
    ]
    as_user(client, instructor)
    assert [client.get(url).status_code for url in owner_urls] == [200, 200, 200, 200]
    as_user(client, other_instructor)
    assert [client.get(url).status_code for url in owner_urls] == [404, 404, 404, 404]
    assert client.post(reverse("cohorts:renew_invitation", args=[cohort.pk])).status_code == 404
    assert "Spring class" not in client.get(reverse("cohorts:index")).content.decode()
    for user in (learner, other_learner):  # the member and a stranger
        as_user(client, user)
        assert [client.get(url).status_code for url in owner_urls] == [403, 403, 403, 403]
    as_user(client, other_learner)
    assert client.get(reverse("cohorts:leave", args=[cohort.pk])).status_code == 404
    client.logout()
    assert all(client.get(url).url.startswith(reverse("login")) for url in owner_urls)


def test_every_post_needs_the_csrf_token(instructor, cohort):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(instructor)
    assert client.post(reverse("cohorts:revoke_invitation", args=[cohort.pk])).status_code == 403
    assert Invitation.objects.usable().filter(cohort=cohort).exists()


# The report ----------------------------------------------------------------------------

def test_the_cohort_page_shows_mocks_mastery_flags_and_averages(client, instructor, learner, other_learner, cohort, exam):
    first, second = list(exam.domains.order_by("order"))
    join(cohort, learner)
    join(cohort, other_learner)
    mock(learner, exam, score=55, days_ago=3, answers={first.pk: (3, 5)})
    mock(learner, exam, score=80, days_ago=2, answers={first.pk: (2, 5), second.pk: (13, 20)})
    mock(learner, exam, score=62, days_ago=1)
    mock(other_learner, exam, score=90, days_ago=1, answers={first.pk: (8, 10), second.pk: (3, 3)})
    as_user(client, instructor)

    page = client.get(reverse("cohorts:detail", args=[cohort.pk])).content.decode()

    assert "Members (2)" in page
    # learner: last 62 (not passed), best 80; first domain 5/10 = 50%, second 13/20 = 65% mastery.
    assert "62.0% not passed" in page and "80.0%" in page
    # Each heat cell: mastery and a short flag in sight; the counts, the level and the flag in its
    # text. The flag reads the member's level in the domain (exams.study.ability).
    levels = ability.domain_levels_of_learners(
        learners=type(learner).objects.filter(pk__in=[learner.pk, other_learner.pk]), exam=exam,
        domains=list(exam.domains.order_by("order")),
    )
    for who, domain, (right, counted) in ((learner, first, (5, 10)), (learner, second, (13, 20)), (other_learner, first, (8, 10))):
        level = levels[who.pk][domain.pk]
        _, flag = flag_for(cohort=cohort, right=right, counted=counted, level=level)
        assert flag == (Flag.AT_RISK if level < 60 else Flag.NEEDS_REVIEW if level < 70 else "")
        detail = f"{right} of {counted} right; level {percent(level)}" + (f", {flag}" if flag else "")
        assert detail + "</span>" in page, detail
    # 3 answers is not enough data.
    assert "Not enough data (3)" in page
    # Averages of mastery over members with enough data: (50 + 80) / 2 = 65; 65 over one member.
    assert page.count("65.0%<span class=\"heat-mark\">of 2</span>") == 1
    assert "65.0%<span class=\"heat-mark\">of 1</span>" in page
    assert "/attempts/" not in page, "nothing of a learner beyond the report"

    exported = client.get(reverse("cohorts:export_csv", args=[cohort.pk]))
    assert exported["Content-Disposition"] == f'attachment; filename="cohort-{cohort.pk}.csv"'
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    by_learner = {row["learner"]: row for row in rows}
    assert by_learner["learner"]["last_mock_score"] == "62.00" and by_learner["learner"]["best_mock_score"] == "80.00"
    assert by_learner["learner"]["mocks"] == "3" and by_learner["learner"]["last_mock_passed"] == "no"
    assert by_learner["learner"][f"{first.name} mastery"] == "50"
    assert by_learner["learner"][f"{first.name} flag"] == flag_for(
        cohort=cohort, right=5, counted=10, level=levels[learner.pk][first.pk])[1]
    assert (by_learner["other"][f"{second.name} counted"], by_learner["other"][f"{second.name} flag"]) == ("3", "Not enough data")


def test_a_member_without_mocks_shows_dashes(client, instructor, learner, cohort):
    join(cohort, learner)
    as_user(client, instructor)
    page = client.get(reverse("cohorts:detail", args=[cohort.pk])).content.decode()
    assert "Not enough data (0)" in page and "—" in page


def test_the_export_neutralises_formula_usernames(client, instructor, cohort):
    join(cohort, UserFactory(username="=cmd"))
    as_user(client, instructor)
    rows = list(csv.reader(io.StringIO(client.get(reverse("cohorts:export_csv", args=[cohort.pk])).content.decode())))
    assert rows[1][0] == "'=cmd"


@pytest.mark.parametrize("username", ["+1", "-x", "@me", "=cmd"])
def test_the_export_neutralises_every_text_cell_and_keeps_numbers(client, instructor, cohort, exam, username):
    """The same writer as the history CSV (exams.csvcells): usernames and domain names in the header."""
    first = exam.domains.order_by("order").first()
    first.name = '=HYPERLINK("https://evil.example","Click")'
    first.save(update_fields=["name"])
    learner = UserFactory(username=username)
    join(cohort, learner)
    mock(learner, exam, score=62, days_ago=1, answers={first.pk: (5, 10)})
    as_user(client, instructor)
    rows = list(csv.reader(io.StringIO(client.get(reverse("cohorts:export_csv", args=[cohort.pk])).content.decode(), newline="")))
    header, line = rows
    assert header[7:10] == [f"'{first.name} mastery", f"'{first.name} counted", f"'{first.name} flag"]
    assert line[:4] == ["'" + username, line[1], "1", "62.00"] and line[7:9] == ["50", "10"]


def members(cohort, exam, count: int) -> None:
    learners = UserFactory.create_batch(count)
    Membership.objects.bulk_create(Membership(cohort=cohort, learner=learner) for learner in learners)
    first = exam.domains.order_by("order").first()
    for learner in learners[:3]:
        mock(learner, exam, score=70, days_ago=1, answers={first.pk: (6, 10)})


def test_the_cohort_page_takes_the_same_queries_at_3_and_300_members(client, instructor, cohort, exam):
    as_user(client, instructor)
    url = reverse("cohorts:detail", args=[cohort.pk])
    members(cohort, exam, 3)
    client.get(url)  # the session and user are cached the same way for both counts
    with CaptureQueriesContext(connection) as small:
        assert client.get(url).status_code == 200
    members(cohort, exam, 297)
    with CaptureQueriesContext(connection) as large:
        page = client.get(url)

    assert "Members (300)" in page.content.decode()
    assert len(large) == len(small) <= 13  # + the members' windows and the bank's calibration for the levels
    export = reverse("cohorts:export_csv", args=[cohort.pk])
    with CaptureQueriesContext(connection) as exported:
        assert len(client.get(export).content.decode().splitlines()) == 301
    assert len(exported) <= len(small)


def test_a_large_cohort_is_paginated(client, instructor, cohort, exam):
    members(cohort, exam, MEMBERS_PER_PAGE * 2 + 5)
    as_user(client, instructor)
    url = reverse("cohorts:detail", args=[cohort.pk])

    first = client.get(url)
    last = client.get(url, {"page": 3})

    assert len(first.context["rows"]) == MEMBERS_PER_PAGE and "Page 1 of 3" in first.content.decode()
    assert len(last.context["rows"]) == 5 and "Previous" in last.content.decode()
    assert client.get(url, {"page": "nonsense"}).status_code == 200


def test_the_demo_cohort_is_made_once(nca_genm):
    from django.core.management import call_command

    call_command("create_demo_accounts", stdout=io.StringIO())
    call_command("create_demo_cohort", stdout=io.StringIO())
    call_command("create_demo_cohort", stdout=io.StringIO())

    cohort = Cohort.objects.get(name="Demo cohort")
    assert (cohort.owner.username, cohort.exam, [m.learner.username for m in cohort.memberships.all()]) == (
        "instructor", nca_genm, ["learner"])
    assert Invitation.objects.usable().filter(cohort=cohort).count() == 1


def test_practising_ones_mistakes_raises_no_flag(client, instructor, learner, cohort, exam):
    """The issue's case: a member who answers only the domain's hard questions has a low share
    right, but their level on the domain's questions as a whole is what the flag reads."""
    first = exam.domains.order_by("order").first()
    questions = list(exam.questions.filter(domain=first).order_by("pk"))
    Question.objects.filter(pk__in=[q.pk for q in questions[:10]]).update(difficulty="hard")
    Question.objects.filter(pk__in=[q.pk for q in questions[10:]]).update(difficulty="easy")
    join(cohort, learner)
    finished = timezone.now() - timedelta(days=1)
    for round_ in range(3):
        attempt = Attempt.objects.create(
            user=learner, exam=exam, mode=AttemptMode.PRACTICE, status=AttemptStatus.SUBMITTED,
            started_at=finished - timedelta(hours=1 + round_), finished_at=finished - timedelta(minutes=30 * round_),
            score=Decimal(60), published_score=Decimal(60), passed=False, right_count=0, total_count=0,
        )
        Response.objects.bulk_create(
            Response(attempt=attempt, position=i + 1, question=q, domain_id=first.pk, version=q.current_version(),
                     choice_order=[], is_correct=(i + 3 * round_) % 10 < 6, answered_at=attempt.started_at + timedelta(minutes=i))
            for i, q in enumerate(questions[:10])
        )
    (row,) = cohort_report(cohort=cohort)["rows"]
    cell = next(cell for cell in row.cells if cell.domain == first)
    assert cell.percent == pytest.approx(60.0)  # mastery alone would say "needs review"
    assert flag_for(cohort=cohort, right=18, counted=30) == (60.0, Flag.NEEDS_REVIEW)
    assert cell.level > cohort.needs_review_below and cell.flag == ""
