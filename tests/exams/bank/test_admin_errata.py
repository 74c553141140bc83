"""Errata triage in admin, and item statistics shown to instructors."""
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from exams.bank.errata.disputes import dispute_report
from exams.models import Attempt, AttemptStatus, Dispute, Erratum, ErratumStatus, RegradeEvent
from exams.room.services import attempt_start, attempt_submit
from exams.statistics.refresh import item_statistics_refresh
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
        dispute_report(user=user, response=slot, choice_ids=[question.choices.get(label="B").pk], reason="B is right")
    return question, attempts


def test_the_queue_lists_open_errata_first_with_their_report_counts(instructor_client, disputed):
    question, _ = disputed
    quiet = QuestionFactory()
    Erratum.objects.create(question=quiet, status=ErratumStatus.REJECTED, decided_at=timezone.now())
    url = reverse("admin:exams_erratum_changelist")
    page = instructor_client.get(url, {"status": "all"}).content.decode()
    assert page.index(question.title) < page.index(quiet.title)
    assert re.search(r'field-dispute_count">2<', page)
    # By default only the open ones, each row starting with its Triage link.
    default = instructor_client.get(url).content.decode()
    assert question.title in default and quiet.title not in default
    erratum = Erratum.objects.get(question=question)
    triage = reverse("admin:exams_erratum_decide", args=[erratum.pk])
    assert re.search(rf'<td class="field-decide_link"><a href="{triage}">Triage</a></td>', default)
    assert quiet.title in instructor_client.get(url, {"status": "rejected"}).content.decode()
    assert "0 errata" in instructor_client.get(url, {"status": "bogus"}).content.decode()


def test_no_add_or_delete_where_the_model_forbids_it(instructor_client, disputed):
    question, _ = disputed
    dispute = Dispute.objects.first()
    assert instructor_client.get(reverse("admin:exams_dispute_add")).status_code == 403
    assert instructor_client.get(reverse("admin:exams_dispute_delete", args=[dispute.pk])).status_code == 403
    disputes = instructor_client.get(reverse("admin:exams_dispute_changelist")).content.decode()
    assert "Add dispute" not in disputes and "delete_selected" not in disputes
    erratum = Erratum.objects.get(question=question)
    assert instructor_client.get(reverse("admin:exams_erratum_delete", args=[erratum.pk])).status_code == 403
    change = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
    assert 'class="deletelink"' not in change and 'name="errata-0-DELETE"' not in change
    assert 'id="delete_id_exam"' not in change and 'id="delete_id_domain"' not in change
    assert instructor_client.get(reverse("admin:exams_question_delete", args=[question.pk])).status_code == 403
    exam_page = instructor_client.get(reverse("admin:exams_exam_change", args=[question.exam_id])).content.decode()
    assert 'class="deletelink"' not in exam_page


def test_triage_shows_tallies_and_reasons(instructor_client, disputed):
    question, _ = disputed
    erratum = Erratum.objects.get(question=question)
    page = instructor_client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk])).content.decode()
    assert "B is right" in page
    row_b = re.search(r"<th scope=\"row\">B\..*?</tr>", page, re.S).group(0)
    assert "<td>2</td>" in row_b
    assert "published" in re.search(r"<th scope=\"row\">A\..*?</tr>", page, re.S).group(0)


def confirm_via_preview(client, erratum, data: dict):
    """Post the decision (a dry run), then confirm what the preview showed."""
    url = reverse("admin:exams_erratum_decide", args=[erratum.pk])
    preview = client.post(url, {**data, "decision": "confirm", "action": "preview"})
    digest = re.search(r'name="preview" value="([0-9a-f]+)"', preview.content.decode()).group(1)
    return preview, client.post(url, {**data, "decision": "confirm", "action": "confirm", "preview": digest}, follow=True)


def test_confirming_previews_the_regrade_then_sets_the_key_and_regrades_every_attempt(instructor_client, disputed):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    preview, response = confirm_via_preview(
        instructor_client, erratum,
        {"policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk], "note": "B was right."},
    )
    page = preview.content.decode()
    assert "Dry run: what confirming will do" in page
    assert re.search(r"Scores changed: <strong>2</strong> \(2 up, 0 down\)", page)
    assert re.search(r"Learners affected: <strong>2</strong>", page)
    assert "<td>+10.00</td><td>2</td>" in page
    assert "regraded 2 finished attempt(s); 2 score(s) changed, 0 pass/fail flip(s), 2 learner(s) affected" in response.content.decode()
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.CONFIRMED and erratum.note == "B was right."
    assert list(question.choices.filter(is_correct=True).values_list("label", flat=True)) == ["B"]
    for attempt in attempts:
        before = attempt.score
        attempt.refresh_from_db()
        assert attempt.score == before + 10 and attempt.published_score == before
    assert RegradeEvent.objects.get().scores_changed == 2


def test_after_a_confirmation_the_errata_list_shows_and_counts_the_decided_one(instructor_client, disputed):
    question, _ = disputed
    erratum = Erratum.objects.get(question=question)
    _, response = confirm_via_preview(
        instructor_client, erratum,
        {"policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk], "note": "B was right."},
    )
    page = response.content.decode()
    assert response.redirect_chain[-1][0] == f"{reverse('admin:exams_erratum_changelist')}?status=all"
    assert "0 errata" not in page and re.search(r"1 erratum\s*</nav>", page)
    assert question.title in page


def test_the_preview_changes_nothing(instructor_client, disputed):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    url = reverse("admin:exams_erratum_decide", args=[erratum.pk])
    page = instructor_client.post(url, {
        "decision": "confirm", "policy": "void", "corrected_key": [], "action": "preview",
        "explanation": "Rewritten.",
    }).content.decode()
    assert "Attempts regraded: <strong>2</strong>" in page and "Confirm and regrade" in page
    erratum.refresh_from_db()
    question.refresh_from_db()
    assert erratum.status == ErratumStatus.REPORTED and question.is_active and question.explanation != "Rewritten."
    assert [a.score for a in Attempt.objects.order_by("pk")] == [a.score for a in attempts]
    assert not RegradeEvent.objects.exists()


def test_a_confirm_after_another_attempt_finished_shows_the_new_numbers_first(instructor_client, disputed, instructor):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    url = reverse("admin:exams_erratum_decide", args=[erratum.pk])
    data = {"decision": "confirm", "policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk]}
    preview = instructor_client.post(url, {**data, "action": "preview"}).content.decode()
    digest = re.search(r'name="preview" value="([0-9a-f]+)"', preview).group(1)
    # Meanwhile a third learner finishes an attempt holding the question.
    latecomer = UserFactory(username="latecomer")
    answered_and_finished(latecomer, question.exam, pick_label="B")
    page = instructor_client.post(url, {**data, "action": "confirm", "preview": digest}).content.decode()
    assert "The numbers changed since your preview" in page
    assert "Attempts regraded: <strong>3</strong>" in page
    erratum.refresh_from_db()
    assert erratum.status == ErratumStatus.REPORTED and not RegradeEvent.objects.exists()


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
    confirm_via_preview(
        instructor_client, erratum, {"policy": "credit_corrected", "corrected_key": [question.choices.get(label="B").pk]},
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
    # Facility, then the Rasch difficulty ± its SE (30 learners' first answers: enough to show).
    assert re.search(r'class="field-facility">0\.67 · [+-]\d+\.\d±\d+\.\d<', page), "facility and difficulty"
    assert 'class="field-statistics_n">30<' in page
    assert f'class="field-exam_code">{exam.code}<' in page
    # Only flagged rows are marked: none here.
    assert 'class="miskeyed"' not in page and "icon-no" not in page
    panel = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
    assert "n = 30 finished mocks" in panel and "Choice distribution" in panel
    flagged = instructor_client.get(reverse("admin:exams_question_changelist"), {"miskeyed": "yes"}).content.decode()
    assert "0 questions" in flagged or "0 results" in flagged or question.title not in flagged
    assert Attempt.objects.filter(status=AttemptStatus.SUBMITTED).count() == 30


def test_the_dispute_pages_open_with_errata_ordered_as_the_queue(admin_client, disputed):
    """The Dispute pages, whose erratum field once took the queue's ordering by annotations
    only the queue's own list had, open; reports come from learners, so there is no add page."""
    question, _ = disputed
    quiet = QuestionFactory()
    Erratum.objects.create(question=quiet, status=ErratumStatus.REJECTED, decided_at=timezone.now())
    assert admin_client.get(reverse("admin:exams_dispute_add")).status_code == 403
    assert admin_client.get(reverse("admin:exams_dispute_changelist")).status_code == 200
    queue = admin_client.get(reverse("admin:exams_erratum_changelist"), {"status": "all"})
    assert queue.status_code == 200
    listed = [str(erratum) for erratum in queue.context["cl"].result_list]
    assert listed[0].startswith(f"Erratum on {question}") and listed[-1].startswith(f"Erratum on {quiet}")
    dispute = Erratum.objects.get(question=question).disputes.first()
    assert admin_client.get(reverse("admin:exams_dispute_change", args=[dispute.pk])).status_code == 200


def test_past_results_show_the_corrected_explanation_and_feedback_with_the_original_one_click_away(
    client, learner, disputed, instructor_client
):
    question, attempts = disputed
    erratum = Erratum.objects.get(question=question)
    a, b = (question.choices.get(label=label) for label in "AB")
    data = {
        "policy": "credit_corrected", "corrected_key": [b.pk], "note": "B was right.",
        "explanation": "B is right: **the docs say so**.",
        **{f"feedback_{choice.pk}": choice.feedback for choice in question.choices.all()},
        f"feedback_{a.pk}": "Wrong: the published key named it by mistake.",
        f"feedback_{b.pk}": "Correct.",
    }
    page = instructor_client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk])).content.decode()
    assert "Because the key is right." in page and "Feedback on A." in page  # the current text, to edit
    confirm_via_preview(instructor_client, erratum, data)

    client.force_login(learner)
    results = client.get(reverse("exams:results", args=[attempts[0].pk])).content.decode()
    slot = attempts[0].responses.get(question=question)
    item = re.search(rf'id="item-{slot.position}".*?</article>', results, re.S).group(0)
    notice = re.search(r'<aside class="erratum-notice".*?</aside>', item, re.S).group(0)
    assert "Corrected explanation" in notice and "<strong>the docs say so</strong>" in notice
    as_shown = re.search(r'<details class="as-shown">.*?</details>', notice, re.S).group(0)
    assert "As shown in your attempt" in as_shown and "Because the key is right." in as_shown
    assert "Feedback on A." in as_shown and "Feedback on B." in as_shown
    choices_list = re.search(r'<ul class="result-choices">.*?</ul>', item, re.S).group(0)
    assert "Wrong: the published key named it by mistake." in choices_list
    assert "Feedback on A." not in choices_list and "corrected</span>" in choices_list
    # Another question of the same attempt keeps its own text, with no notice.
    other = attempts[0].responses.exclude(question=question).first()
    other_item = re.search(rf'id="item-{other.position}".*?</article>', results, re.S).group(0)
    assert "erratum-notice" not in other_item and "Because the key is right." in other_item


def test_triage_shows_each_report_in_the_learners_own_letters(learner, other_learner, instructor_client):
    """Two learners saw the choices in different orders and both believe authored D is right."""
    exam = exam_with_bank(weights=(100,), per_domain=10)
    attempts = [answered_and_finished(user, exam, pick_label="A") for user in (learner, other_learner)]
    question = exam.questions.order_by("pk").first()
    a, b, c, d = (question.choices.get(label=label).pk for label in "ABCD")
    shuffles = {learner: [d, a, b, c], other_learner: [b, c, d, a]}  # D is their A, and their C
    for user, attempt in zip((learner, other_learner), attempts, strict=True):
        slot = attempt.responses.get(question=question)
        slot.choice_order = shuffles[user]
        slot.save(update_fields=["choice_order"])
        client = Client()
        client.force_login(user)
        position = shuffles[user].index(d) + 1
        client.post(reverse("exams:report", args=[attempt.pk, slot.position]), {"choice": str(position), "reason": f"{user} says D"})
    assert Dispute.objects.filter(response__isnull=False).count() == 2

    erratum = Erratum.objects.get(question=question)
    page = instructor_client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk])).content.decode()
    rows = {
        name: re.search(rf"<td>{name}</td>.*?</tr>", page, re.S).group(0) for name in (learner.username, other_learner.username)
    }
    assert "<td>their A = D</td>" in rows[learner.username]
    assert "<td>A = D, B = A, C = B, D = C</td>" in rows[learner.username]
    assert "<td>their C = D</td>" in rows[other_learner.username]
    assert "<td>A = B, B = C, C = D, D = A</td>" in rows[other_learner.username]
    # The tally is by authored choice: both reports count for D.
    row_d = re.search(r'<th scope="row">D\..*?</tr>', page, re.S).group(0)
    assert "<td>2</td>" in row_d


def test_item_statistics_below_30_mocks_say_too_few_attempts(instructor_client):
    exam = exam_with_bank(weights=(100,), per_domain=10)
    for index in range(29):
        answered_and_finished(UserFactory(username=f"few{index}"), exam, pick_label="A")
    item_statistics_refresh(exam=exam)
    page = instructor_client.get(reverse("admin:exams_question_changelist"), {"exam__id__exact": exam.pk}).content.decode()
    assert 'class="field-statistics_n">too few attempts (n = 29)<' in page
    assert 'class="field-facility">—<' in page and 'class="field-facility">1.00<' not in page


def test_triage_takes_the_same_queries_for_2_and_8_reports(instructor_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for reporters in (2, 8):
        exam = exam_with_bank(weights=(100,), per_domain=10)
        question = exam.questions.order_by("pk").first()
        for index in range(reporters):
            user = UserFactory(username=f"r{reporters}-{index}")
            attempt = answered_and_finished(user, exam, pick_label="A")
            dispute_report(user=user, response=attempt.responses.get(question=question),
                           choice_ids=[question.choices.get(label="B").pk], reason="B")
        url = reverse("admin:exams_erratum_decide", args=[Erratum.objects.get(question=question).pk])
        instructor_client.get(url)  # caches (content types, permissions) warm
        with CaptureQueriesContext(connection) as queries:
            assert instructor_client.get(url).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_the_erratum_queue_searches_reports_without_a_500(admin_client, learner):
    """Found by the fuzzer while checking this issue: ?q= on the erratum queue joined the many
    reports, which made the admin add DISTINCT beside the queue's expression ordering (500)."""
    disputed = Erratum.objects.create(question=QuestionFactory(title="Alpha question"), note="first")
    Dispute.objects.create(erratum=disputed, learner=learner, reason="the key is B, see the docs")
    Dispute.objects.create(erratum=disputed, learner=UserFactory(), reason="key B again")
    Erratum.objects.create(question=QuestionFactory(title="Beta question"), note="second")
    url = reverse("admin:exams_erratum_changelist")
    for term, titles in (("0", []), ("key", ["Alpha question"]), ("second", ["Beta question"]), ("question", ["Alpha question", "Beta question"])):
        page = admin_client.get(url, {"q": term})
        assert page.status_code == 200, term
        shown = sorted(erratum.question.title for erratum in page.context["cl"].result_list)
        assert shown == titles, term
