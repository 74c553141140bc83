"""Errata triage in admin, and item statistics shown to instructors."""
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from exams.models import Attempt, AttemptStatus, Erratum, ErratumStatus, RegradeEvent
from exams.psychometrics.refresh import item_statistics_refresh
from exams.services import attempt_start, attempt_submit, dispute_report
from tests.factories import QuestionFactory, UserFactory, exam_with_bank

pytestmark = pytest.mark.django_db


def answered_and_finished(user, exam, *, pick_label: str) -> Attempt:
    attempt = attempt_start(user=user, exam=exam).attempt
    for slot in attempt.responses.select_related("question"):
        attempt.record_answer(response=slot, choice_ids=[slot.question.choices.get(label=pick_label).pk])
    attempt_submit(user=user, attempt_id=attempt.pk)
    attempt.refresh_from_db()
    return attempt


@pytest.fixture
def disputed(learner, other_learner):
    """A 10-question exam: both learners answered B everywhere; A is the published key."""
    exam = exam_with_bank(weights=(100,), per_domain=10)
    attempts = [answered_and_finished(user, exam, pick_label="B") for user in (learner, other_learner)]
    question = exam.questions.first()
    for user, attempt in zip((learner, other_learner), attempts, strict=True):
        slot = attempt.responses.get(question=question)
        dispute_report(user=user, response=slot, choice_id=question.choices.get(label="B").pk, reason="B is right")
    return question, attempts


def test_the_queue_lists_open_errata_first_with_their_report_counts(instructor_client, disputed):
    question, _ = disputed
    quiet = QuestionFactory()
    Erratum.objects.create(question=quiet, status=ErratumStatus.REJECTED, decided_at=timezone.now())
    page = instructor_client.get(reverse("admin:exams_erratum_changelist")).content.decode()
    assert page.index(question.title) < page.index(quiet.title)
    assert re.search(r'field-dispute_count">2<', page)


def test_triage_shows_tallies_and_reasons(instructor_client, disputed):
    question, _ = disputed
    erratum = Erratum.objects.get(question=question)
    page = instructor_client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk])).content.decode()
    assert "B is right" in page
    row_b = re.search(r"<th scope=\"row\">B\..*?</tr>", page, re.S).group(0)
    assert "<td>2</td>" in row_b
    assert "published" in re.search(r"<th scope=\"row\">A\..*?</tr>", page, re.S).group(0)


def test_confirming_sets_the_key_and_regrades_every_attempt(instructor_client, disputed):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    response = instructor_client.post(
        reverse("admin:exams_erratum_decide", args=[erratum.pk]),
        {"decision": "confirm", "policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk], "note": "B was right."},
        follow=True,
    )
    assert "regraded 2 finished attempt(s); 2 score(s) changed" in response.content.decode()
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.CONFIRMED and erratum.note == "B was right."
    assert list(question.choices.filter(is_correct=True).values_list("label", flat=True)) == ["B"]
    for attempt in attempts:
        before = attempt.score
        attempt.refresh_from_db()
        assert attempt.score == before + 10 and attempt.published_score == before
    assert RegradeEvent.objects.get().scores_changed == 2


def test_an_impossible_key_is_refused_with_the_reason(instructor_client, disputed):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    response = instructor_client.post(
        reverse("admin:exams_erratum_decide", args=[erratum.pk]),
        {"decision": "confirm", "policy": "credit_corrected", "corrected_key": [c.pk for c in question.choices.all()[:2]]},
    )
    assert response.status_code == 200 and "errornote" in response.content.decode()
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.REPORTED
    assert not RegradeEvent.objects.exists()


def test_rejecting_needs_a_reason_and_regrades_nothing(instructor_client, disputed):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    url = reverse("admin:exams_erratum_decide", args=[erratum.pk])
    assert "Say why" in instructor_client.post(url, {"decision": "reject", "note": ""}).content.decode()
    instructor_client.post(url, {"decision": "reject", "note": "The key is right: see the explanation."})
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.REJECTED and erratum.decision_note.startswith("The key is right")
    assert not RegradeEvent.objects.exists()


def test_learners_see_the_change_on_the_dashboard_and_the_results(client, learner, disputed, instructor_client):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    instructor_client.post(
        reverse("admin:exams_erratum_decide", args=[erratum.pk]),
        {"decision": "confirm", "policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk]},
    )
    client.force_login(learner)
    mine = attempts[0]
    notice = f"changed from 0.0% to 10.0% after a correction to “{question.title}”"
    assert notice in client.get(reverse("exams:dashboard")).content.decode()
    results = client.get(reverse("exams:results", args=[mine.pk])).content.decode()
    assert "changed from 0.0% to 10.0% after a correction" in results and "Corrected key" in results
    # They picked what is now the key: the correction does not send it back to review early
    # (its card stays where the review at submit put it).
    assert learner.review_cards.get(question=question).due > timezone.now()


def test_the_inline_cannot_confirm_without_the_triage_page(instructor_client, disputed):
    question, _ = disputed
    page = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
    assert "Confirm or reject…" in page
    assert 'name="errata-0-status"' not in page and 'name="errata-0-policy"' not in page


def test_statistics_columns_filter_and_panel(instructor_client):
    exam = exam_with_bank(weights=(100,), per_domain=10)
    for index in range(30):
        answered_and_finished(UserFactory(username=f"taker{index}"), exam, pick_label="A" if index % 3 else "B")
    question = exam.questions.first()
    item_statistics_refresh(exam=exam)  # the admin reads the stored statistics
    page = instructor_client.get(reverse("admin:exams_question_changelist"), {"exam__id__exact": exam.pk}).content.decode()
    assert 'class="field-facility">0.67<' in page
    panel = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
    assert "n = 30 finished mocks" in panel and "Choice distribution" in panel
    flagged = instructor_client.get(reverse("admin:exams_question_changelist"), {"miskeyed": "yes"}).content.decode()
    assert "0 questions" in flagged or "0 results" in flagged or question.title not in flagged
    assert Attempt.objects.filter(status=AttemptStatus.SUBMITTED).count() == 30


def test_the_dispute_pages_open_with_errata_ordered_as_the_queue(admin_client, disputed):
    """The Dispute pages order their erratum choices by the queue's ordering (open first,
    most reported first), which once named annotations only the queue's own list had."""
    question, _ = disputed
    quiet = QuestionFactory()
    Erratum.objects.create(question=quiet, status=ErratumStatus.REJECTED, decided_at=timezone.now())
    page = admin_client.get(reverse("admin:exams_dispute_add"))
    assert page.status_code == 200
    choices = [str(erratum) for erratum in page.context["adminform"].form.fields["erratum"].queryset]
    assert choices[0].startswith(f"Erratum on {question}") and choices[-1].startswith(f"Erratum on {quiet}")
    dispute = Erratum.objects.get(question=question).disputes.first()
    assert admin_client.get(reverse("admin:exams_dispute_change", args=[dispute.pk])).status_code == 200
