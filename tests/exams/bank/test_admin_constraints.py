"""Every "one open" rule is a database constraint and, through the admin, a form error."""
import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from exams.models import Attempt, AttemptMode, Erratum, ErratumStatus
from tests.exams.bank.test_admin import form_data
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db
ONE_OPEN = "already has an open erratum"


def test_a_second_open_erratum_through_the_questions_inline_is_a_form_error(instructor_client):
    question = QuestionFactory()
    Erratum.objects.create(question=question, note="first")
    url = reverse("admin:exams_question_change", args=[question.pk])
    # The page was loaded before another instructor opened the first erratum: its inline
    # does not list it, and the new one would be the second open erratum.
    stale = form_data(instructor_client.get(url))
    data = {key: value for key, value in stale.items() if not key.startswith("errata-0-")}
    data |= {"errata-TOTAL_FORMS": "1", "errata-INITIAL_FORMS": "0", "errata-0-note": "second",
             "errata-0-source": "instructor", "errata-0-reported_at_0": "2026-12-01", "errata-0-reported_at_1": "10:00:00"}
    response = instructor_client.post(url, data)
    assert response.status_code == 200
    assert ONE_OPEN in response.content.decode()
    assert list(Erratum.objects.values_list("note", flat=True)) == ["first"]


def test_two_new_open_errata_in_one_save_are_a_form_error(instructor_client):
    question = QuestionFactory()
    url = reverse("admin:exams_question_change", args=[question.pk])
    data = form_data(instructor_client.get(url))
    data["errata-TOTAL_FORMS"] = "2"
    for n in (0, 1):
        data |= {f"errata-{n}-note": f"note {n}", f"errata-{n}-source": "instructor",
                 f"errata-{n}-reported_at_0": "2026-12-01", f"errata-{n}-reported_at_1": "10:00:00"}
    response = instructor_client.post(url, data)
    assert response.status_code == 200
    assert "one open erratum at a time" in response.content.decode()
    assert not Erratum.objects.exists()

    # Next to a stored open one, too.
    Erratum.objects.create(question=question, note="first")
    data = form_data(instructor_client.get(url))
    data |= {"errata-TOTAL_FORMS": "2", "errata-1-note": "second", "errata-1-source": "instructor",
             "errata-1-reported_at_0": "2026-12-01", "errata-1-reported_at_1": "10:00:00"}
    response = instructor_client.post(url, data)
    assert response.status_code == 200 and "one open erratum at a time" in response.content.decode()
    assert list(Erratum.objects.values_list("note", flat=True)) == ["first"]


def test_a_second_open_erratum_on_the_erratum_add_page_is_a_form_error(instructor_client):
    question = QuestionFactory()
    Erratum.objects.create(question=question, note="first")
    response = instructor_client.post(reverse("admin:exams_erratum_add"), {
        "question": question.pk, "note": "second", "source": "instructor",
        "reported_at_0": "2026-12-01", "reported_at_1": "10:00:00",
    })
    assert response.status_code == 200
    assert ONE_OPEN in response.content.decode()
    assert Erratum.objects.count() == 1


def test_a_decided_erratum_does_not_block_a_new_one(instructor_client):
    question = QuestionFactory()
    Erratum.objects.create(question=question, note="old", status=ErratumStatus.REJECTED)
    response = instructor_client.post(reverse("admin:exams_erratum_add"), {
        "question": question.pk, "note": "new", "source": "instructor",
        "reported_at_0": "2026-12-01", "reported_at_1": "10:00:00",
    })
    assert response.status_code == 302
    assert Erratum.objects.filter(question=question, status=ErratumStatus.REPORTED).count() == 1


def test_moving_an_open_erratum_onto_a_question_with_one_is_a_form_error(instructor_client):
    first, second = QuestionFactory(), QuestionFactory()
    Erratum.objects.create(question=first, note="on first")
    moving = Erratum.objects.create(question=second, note="on second")
    url = reverse("admin:exams_erratum_change", args=[moving.pk])
    data = {"question": first.pk, "note": "moved", "source": "instructor",
            "reported_at_0": "2026-12-01", "reported_at_1": "10:00:00"}
    response = instructor_client.post(url, data)
    assert response.status_code == 200 and ONE_OPEN in response.content.decode()
    moving.refresh_from_db()
    assert moving.question == second and moving.note == "on second"


def test_the_database_holds_one_in_progress_attempt_per_learner_exam_and_mode(learner):
    exam = exam_with_bank()
    Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.PRACTICE)
    with pytest.raises(IntegrityError), transaction.atomic():
        Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.PRACTICE)
    # Another mode is another attempt; attempts change in the admin only by regrading.
    Attempt.objects.create(user=learner, exam=exam, mode=AttemptMode.DRILL)


def test_no_admin_page_adds_or_changes_an_attempt(admin_client, learner):
    attempt = Attempt.objects.create(user=learner, exam=exam_with_bank(), mode=AttemptMode.PRACTICE)
    assert admin_client.get(reverse("admin:exams_attempt_add")).status_code == 403
    response = admin_client.post(reverse("admin:exams_attempt_change", args=[attempt.pk]), {"mode": "practice"})
    assert response.status_code == 403
