"""Instructors keep the bank in admin: validation of weights and keys, frozen keys, the group."""
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse
from django.utils import timezone

from exams.models import Attempt, AttemptStatus, Erratum, Question, Response
from tests.factories import DomainFactory, ExamFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def form_data(response) -> dict:
    """Everything the admin change page would post back unchanged, inlines included."""
    data = {}

    def add(form):
        for name, field in form.fields.items():
            value = form[name].value()
            key = form.add_prefix(name)
            if value is None or value is False:
                continue
            if value is True:
                data[key] = "on"
            elif isinstance(value, (list, tuple)):
                data[key] = [str(item) for item in value]
            else:
                data[key] = str(value)

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        add(formset.management_form)
        for form in formset.forms:
            add(form)
    return data


def choice_prefix(data: dict, label: str) -> str:
    for key, value in data.items():
        if key.startswith("choices-") and key.endswith("-label") and value == label:
            return key.removesuffix("-label")
    raise KeyError(label)


def test_instructors_group_has_the_exams_permissions_only():
    # Run the data migration's own function (live-server tests elsewhere may have flushed
    # the group it made when the test database was built).
    from importlib import import_module

    from django.apps import apps

    exams_config = apps.get_app_config("exams")
    models_module = exams_config.models_module
    try:
        import_module("exams.migrations.0002_instructors_group").create_instructors(apps, None)
    finally:
        # The migration resets this on the app registry it is given; give it back.
        exams_config.models_module = models_module
    group = Group.objects.get(name="Instructors")
    labels = set(group.permissions.values_list("content_type__app_label", flat=True))
    assert labels == {"exams"}
    assert group.permissions.count() == Permission.objects.filter(content_type__app_label="exams").count()
    assert group.permissions.filter(codename="change_question").exists()


def test_an_instructor_reaches_the_question_list_but_not_users(instructor_client):
    QuestionFactory()
    assert instructor_client.get(reverse("admin:exams_question_changelist")).status_code == 200
    assert instructor_client.get(reverse("admin:auth_user_changelist")).status_code == 403


def test_an_instructor_edits_a_question(instructor_client):
    question = QuestionFactory(stem="Old stem")
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data["stem"] = "New **stem**"
    response = instructor_client.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    question.refresh_from_db()
    assert question.stem == "New **stem**"


def test_two_keys_on_a_single_answer_question_are_refused(instructor_client):
    question = QuestionFactory()
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data[choice_prefix(data, "B") + "-is_correct"] = "on"
    response = instructor_client.post(url, data)
    assert response.status_code == 200
    assert "exactly one correct choice; 2 are marked correct" in response.content.decode()
    assert list(question.choices.filter(is_correct=True).values_list("label", flat=True)) == ["A"]


def test_a_multiple_answer_question_needs_as_many_keys_as_it_chooses(instructor_client):
    question = QuestionFactory(kind="multiple", choose=2, keys=["A", "B"])
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data[choice_prefix(data, "C") + "-is_correct"] = "on"
    response = instructor_client.post(url, data)
    assert "exactly 2 choices must be marked correct; 3 are" in response.content.decode()


def test_a_question_needs_two_choices(instructor_client):
    question = QuestionFactory()
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    for label in "BCD":
        data[choice_prefix(data, label) + "-DELETE"] = "on"
    response = instructor_client.post(url, data)
    assert "at least two choices" in response.content.decode()
    assert question.choices.count() == 4


def test_the_key_of_a_question_in_a_finished_attempt_cannot_change_here(instructor_client, learner):
    question = QuestionFactory()
    attempt = Attempt.objects.create(
        user=learner, exam=question.exam, status=AttemptStatus.SUBMITTED, finished_at=timezone.now()
    )
    Response.objects.create(attempt=attempt, position=1, question=question, domain_id=question.domain_id, version=question.current_version(), choice_order=[])
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data.pop(choice_prefix(data, "A") + "-is_correct")
    data[choice_prefix(data, "B") + "-is_correct"] = "on"
    response = instructor_client.post(url, data)
    page = response.content.decode()
    assert "its key cannot be changed" in page and "erratum" in page
    assert question.choices.get(is_correct=True).label == "A"

    # Text edits are still fine: they make a new version for new attempts.
    data = form_data(instructor_client.get(url))
    data["stem"] = "A clearer stem"
    assert instructor_client.post(url, data).status_code == 302
    assert Question.objects.get(pk=question.pk).current_version().number == 2


def test_domain_weights_must_add_up_to_100(instructor_client):
    exam = ExamFactory()
    DomainFactory(exam=exam, weight=60, name="One")
    DomainFactory(exam=exam, weight=40, name="Two")
    url = reverse("admin:exams_exam_change", args=[exam.pk])
    data = form_data(instructor_client.get(url))
    weight_key = next(key for key, value in data.items() if key.endswith("-weight") and value == "40")
    data[weight_key] = "30"
    response = instructor_client.post(url, data)
    assert "must add up to 100%; these add up to 90%" in response.content.decode()
    assert sorted(exam.domains.values_list("weight", flat=True)) == [40, 60]


def test_question_list_filters_and_search(instructor_client):
    question = QuestionFactory(title="Quantization trade-offs")
    QuestionFactory(title="Something else")
    url = reverse("admin:exams_question_changelist")
    page = instructor_client.get(url, {"q": "Quantization"}).content.decode()
    assert "Quantization trade-offs" in page and "Something else" not in page
    from exams.models import Erratum

    Erratum.objects.create(question=question)
    page = instructor_client.get(url, {"open_erratum": "yes"}).content.decode()
    assert "Quantization trade-offs" in page and "Something else" not in page


def test_accommodation_factor_is_set_per_learner(admin_client, learner):
    url = reverse("admin:accounts_profile_changelist")
    assert admin_client.get(url).status_code == 200


def test_an_instructor_sets_a_learners_extra_time(instructor_client, learner):
    from accounts.models import Profile

    url = reverse("admin:exams_learneraccommodation_change", args=[learner.profile.pk])
    page = instructor_client.get(url)
    assert page.status_code == 200
    data = form_data(page)
    data["accommodation_factor"] = "1.50"
    assert instructor_client.post(url, data).status_code == 302
    assert Profile.objects.get(user=learner).accommodation_factor == Decimal("1.50")
    data["accommodation_factor"] = "5"
    assert "less than or equal to 3" in instructor_client.post(url, data).content.decode()


def test_a_voided_question_cannot_be_switched_back_on(instructor_client):
    from exams.models import ErratumPolicy, ErratumStatus

    question = QuestionFactory(is_active=False)
    Erratum.objects.create(question=question, status=ErratumStatus.CONFIRMED, policy=ErratumPolicy.VOID, decided_at=timezone.now())
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data["is_active"] = "on"
    assert "voided by a confirmed erratum" in instructor_client.post(url, data).content.decode()
    question.refresh_from_db()
    assert not question.is_active


def test_the_question_list_shows_and_filters_by_topic(instructor_client, nca_genm):
    from exams.models import Question

    topic = Question.objects.filter(exam=nca_genm, is_active=True).values_list("topic", flat=True).first()
    page = instructor_client.get(reverse("admin:exams_question_changelist"), {"topic": topic}).content.decode()
    assert topic in page
    shown = Question.objects.filter(exam=nca_genm, topic=topic).count()
    assert f"{shown} question" in page


def test_an_exhibit_naming_an_image_the_bank_lacks_is_a_form_error(instructor_client, nca_genm):
    from exams.models import Question

    question = Question.objects.filter(exam=nca_genm, is_active=True).first()
    url = reverse("admin:exams_question_change", args=[question.pk])
    page = instructor_client.get(url)
    assert page.status_code == 200 and "Exhibit" in page.content.decode() and "Sources" in page.content.decode()
    from exams.bank.admin import QuestionAdminForm

    form = QuestionAdminForm(instance=question)
    data = {name: form.initial.get(name) for name in ("exam", "domain", "title", "stem", "kind", "choose", "topic", "sources")}
    data.update(exhibit="![A curve](exhibit:missing.png)", explanation=question.explanation, exclusion_group="")
    bound = QuestionAdminForm(data=data, instance=question)
    assert not bound.is_valid() and "No exhibit image named missing.png" in str(bound.errors["exhibit"])


def test_the_question_search_uses_ten_words_in_the_same_number_of_queries(instructor_client, nca_genm):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = reverse("admin:exams_question_changelist")
    instructor_client.get(url, {"q": "warm up"})  # the session's first request does one-time work
    counts = {}
    for words in (10, 1_500):
        with CaptureQueriesContext(connection) as queries:
            response = instructor_client.get(url, {"q": " ".join(["diffusion"] * words)})
        assert response.status_code == 200
        counts[words] = len(queries.captured_queries)
    assert counts[10] == counts[1_500], counts
    assert "Only the first 10 of the 1500 words were searched." in response.content.decode()
    assert "the first 10 words are used" in response.content.decode()


def test_a_new_question_starts_on_the_only_exam(instructor_client):
    only = ExamFactory()
    page = instructor_client.get(reverse("admin:exams_question_add")).content.decode()
    assert f'<option value="{only.pk}" selected>' in page
    ExamFactory()
    page = instructor_client.get(reverse("admin:exams_question_add")).content.decode()
    assert f'<option value="{only.pk}" selected>' not in page and '<option value="" selected>' in page


def test_mark_reviewed_today_sets_the_date_on_the_chosen_questions_only(instructor_client):
    from datetime import date

    chosen = QuestionFactory(title="Checked again", reviewed_on=date(2025, 1, 2))
    never = QuestionFactory(title="Not chosen")
    updated_at = Question.objects.get(pk=chosen.pk).updated_at
    url = reverse("admin:exams_question_changelist")
    page = instructor_client.get(url).content.decode()
    assert 'value="mark_reviewed_today"' in page and "Mark reviewed today" in page
    response = instructor_client.post(url, {"action": "mark_reviewed_today", "_selected_action": [chosen.pk]}, follow=True)
    today = timezone.localdate()
    assert f"Marked 1 question reviewed on {today:%Y-%m-%d}." in [str(m) for m in response.context["messages"]]
    chosen.refresh_from_db()
    never.refresh_from_db()
    assert (chosen.reviewed_on, never.reviewed_on) == (today, None)
    assert chosen.updated_at == updated_at, "a review date is not an edit of the question"


def test_an_edit_does_not_reset_or_set_the_review_date(instructor_client):
    from datetime import date

    question = QuestionFactory(stem="Old stem", reviewed_on=date(2025, 6, 30), difficulty="hard")
    url = reverse("admin:exams_question_change", args=[question.pk])
    page = instructor_client.get(url)
    assert "reviewed_on" not in page.context["adminform"].form.fields, "shown, not posted back"
    assert "2025" in page.content.decode() and 'name="difficulty"' in page.content.decode()
    data = form_data(page)
    data["stem"] = "New stem"
    data["reviewed_on"] = "2026-12-01"  # a hand-made post cannot set it either
    response = instructor_client.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    question.refresh_from_db()
    assert (question.stem, question.reviewed_on, question.difficulty) == ("New stem", date(2025, 6, 30), "hard")
    data["difficulty"] = "easy"
    assert instructor_client.post(url, data).status_code == 302
    question.refresh_from_db()
    assert (question.difficulty, question.reviewed_on) == ("easy", date(2025, 6, 30))


def test_the_question_list_filters_questions_not_reviewed_in_12_months(instructor_client):
    from datetime import timedelta

    today = timezone.localdate()
    QuestionFactory(title="Never reviewed")
    QuestionFactory(title="Reviewed long ago", reviewed_on=today - timedelta(days=366))
    QuestionFactory(title="Reviewed a year ago today", reviewed_on=today - timedelta(days=365))
    QuestionFactory(title="Reviewed last week", reviewed_on=today - timedelta(days=7))
    url = reverse("admin:exams_question_changelist")
    page = instructor_client.get(url).content.decode()
    assert "Not reviewed in 12 months" in page
    due = instructor_client.get(url, {"review": "due"}).content.decode()
    assert "Never reviewed" in due and "Reviewed long ago" in due
    assert "Reviewed a year ago today" not in due and "Reviewed last week" not in due
    recent = instructor_client.get(url, {"review": "recent"}).content.decode()
    assert "Reviewed last week" in recent and "Reviewed a year ago today" in recent and "Never reviewed" not in recent


def test_the_question_list_filters_by_difficulty(instructor_client):
    """A filter, not a column: with the statistics' small-sample captions the list has no
    room for another column at 1,280 px (tests/browser/test_admin_fit.py)."""
    QuestionFactory(title="A hard one", difficulty="hard")
    QuestionFactory(title="An easy one", difficulty="easy")
    url = reverse("admin:exams_question_changelist")
    response = instructor_client.get(url)
    page = response.content.decode()
    assert "A hard one" in page and "An easy one" in page and "By difficulty" in page
    hard = instructor_client.get(url, {"difficulty__exact": "hard"}).content.decode()
    assert "A hard one" in hard and "An easy one" not in hard
