"""Question status (issue 27, item 2): imports land as drafts, drafts never reach a learner,
"Mark ready" checks a draft and says what it lacks."""
import json

import pytest
from django.urls import reverse

from exams.bank.formats import ready_problems
from exams.bank.imports import import_bank, parse_upload
from exams.bank.status import question_as_parsed, questions_mark_ready, with_choices
from exams.models import Attempt, AttemptMode, Bookmark, Choice, Question, QuestionStatus, ReviewCard
from exams.room import services
from exams.study.practice import NothingLikeIt, PracticePlan, attempt_add_like, practice_count
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db

COMPLETE = """\
$CATEGORY: $course$/top/Core ML/Denoising

::Denoising::What does a denoising step remove?{
  =Predicted noise#Yes: the model predicts it.
  ~Signal#No: the signal is what remains.
  ####The model predicts the noise and removes it.
}
"""
# The second question lacks a topic (its category names only the domain), an explanation and
# feedback on its second choice.
INCOMPLETE = COMPLETE + """
$CATEGORY: $course$/top/Data

::Charts::Which chart profiles an image dataset?{
  =Class histogram#Right.
  ~Pie of file names
}
"""


def gift(text: str):
    return parse_upload(data=text.encode(), fmt="gift", skip_unsupported=False)


def test_an_import_lands_as_drafts_and_says_so(exam):
    summary = import_bank(exam=exam, result=gift(INCOMPLETE))

    assert summary.written
    assert set(Question.objects.values_list("status", flat=True)) == {QuestionStatus.DRAFT}
    assert "2 questions land as drafts: no learner sees them until marked ready (Questions › Drafts to review)." in summary.notes
    assert not Question.objects.active().exists()


def test_publishing_at_once_is_all_or_nothing_and_lists_each_failure_by_line(exam):
    summary = import_bank(exam=exam, result=gift(INCOMPLETE), publish=True)

    assert not summary.ok and not Question.objects.exists()
    messages = [str(error) for error in summary.errors]
    assert messages == [
        "line 11: not ready to publish: it has no topic",
        "line 11: not ready to publish: it has no explanation",
        "line 11: not ready to publish: choice B has no feedback",
    ]


def test_publishing_a_complete_file_makes_it_ready(exam):
    summary = import_bank(exam=exam, result=gift(COMPLETE), publish=True)

    assert summary.written and "1 question is published at once (ready)." in summary.notes
    assert Question.objects.get().status == QuestionStatus.READY
    assert Question.objects.active().count() == 1


def _json_bank(**fields) -> bytes:
    question = {
        "title": "Denoising", "stem": "What does a denoising step remove?", "kind": "single", "domain": "Core ML",
        "choices": [
            {"label": "A", "text": "Predicted noise", "is_correct": True, "feedback": "Yes."},
            {"label": "B", "text": "Signal", "is_correct": False, "feedback": "No."},
        ],
        **fields,
    }
    return json.dumps({"format": "certprep-bank", "version": 1, "exam": "GENM", "questions": [question]}).encode()


def test_json_carries_status_and_a_ready_question_must_pass_the_checks(exam):
    lacking = parse_upload(data=_json_bank(status="ready"), fmt="json", skip_unsupported=False)
    summary = import_bank(exam=exam, result=lacking)
    assert [str(error) for error in summary.errors] == [
        "line 1: not ready to publish: it has no topic", "line 1: not ready to publish: it has no explanation",
    ]
    assert not Question.objects.exists()

    complete = _json_bank(status="ready", topic="Diffusion", explanation="The model predicts the noise.")
    assert import_bank(exam=exam, result=parse_upload(data=complete, fmt="json", skip_unsupported=False)).written
    assert Question.objects.get().status == QuestionStatus.READY
    # A file from before status lands as a draft; an unknown status is an error naming where.
    assert parse_upload(data=_json_bank(), fmt="json", skip_unsupported=False).questions[0].status == "draft"
    wrong = parse_upload(data=_json_bank(status="live"), fmt="json", skip_unsupported=False)
    assert "/questions/0/status" in str(wrong.errors[0]) and "'draft', 'ready'" in str(wrong.errors[0])


def test_the_ready_checks_name_what_is_missing():
    question = QuestionFactory(topic="", explanation=" ")
    Choice.objects.filter(question=question, label__in=["B", "D"]).update(feedback="")
    row = with_choices(Question.objects.filter(pk=question.pk)).get()
    assert ready_problems(question_as_parsed(row)) == [
        "it has no topic", "it has no explanation", "choices B, D have no feedback",
    ]
    Question.objects.filter(pk=question.pk).update(topic="Diffusion", explanation="Because.")
    Choice.objects.filter(question=question).update(feedback="Why.")
    assert ready_problems(question_as_parsed(with_choices(Question.objects.filter(pk=question.pk)).get())) == []


# Drafts never reach a learner ---------------------------------------------------------


@pytest.fixture
def bank_with_drafts():
    """An exam of 10 ready questions and 10 drafts, every one with the same topic."""
    exam = exam_with_bank(weights=(100,), per_domain=20, question_count=10, is_published=True)
    Question.objects.filter(exam=exam).update(topic="Diffusion")
    drafts = list(Question.objects.filter(exam=exam).order_by("pk").values_list("pk", flat=True)[10:])
    Question.objects.filter(pk__in=drafts).update(status=QuestionStatus.DRAFT)
    return exam, set(drafts)


def test_a_mock_and_a_session_never_draw_a_draft(learner, bank_with_drafts):
    exam, drafts = bank_with_drafts
    mock = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK, seed=1).attempt
    drawn = set(mock.responses.values_list("question_id", flat=True))
    assert drawn == set(Question.objects.active().values_list("pk", flat=True))  # the 10 ready ones, no draft
    services.attempt_submit(user=learner, attempt_id=mock.pk)
    practice = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=20, seed=2).attempt
    assert practice.responses.count() == 10 and not set(practice.responses.values_list("question_id", flat=True)) & drafts
    # One draft more would be one question too few for the mock.
    Question.objects.filter(pk=min(drawn)).update(status=QuestionStatus.DRAFT)
    with pytest.raises(services.StartRefused, match="too small"):
        services.attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK, seed=3)


def test_chosen_drafts_are_not_practised(learner, bank_with_drafts):
    exam, drafts = bank_with_drafts
    with pytest.raises(services.StartRefused, match="nothing to practise"):
        services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, question_ids=sorted(drafts))


def test_the_builder_counts_review_and_bookmarks_leave_drafts_out(learner, bank_with_drafts):
    exam, drafts = bank_with_drafts
    domain = exam.domains.get()
    plan = PracticePlan(domains=[domain], topics={}, count=50)
    assert practice_count(user=learner, exam=exam, plan=plan) == 10
    draft = Question.objects.get(pk=min(drafts))
    # A card and a bookmark on a question that went back to draft (as an edit by SQL might).
    ReviewCard.objects.create(user=learner, question=draft, due="2000-01-01T00:00Z")
    Bookmark.objects.create(user=learner, question=draft)
    assert not ReviewCard.objects.due(user=learner, exam=exam).exists()
    assert not Bookmark.objects.for_user(learner).exists()
    with pytest.raises(services.StartRefused, match="Nothing is due"):
        services.attempt_start(user=learner, exam=exam, mode=AttemptMode.REVIEW)


def test_try_another_never_adds_a_draft(learner, bank_with_drafts):
    exam, drafts = bank_with_drafts
    started = services.attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=9, seed=4).attempt
    first = started.responses.order_by("position").first()
    added = attempt_add_like(attempt=started, response=first, seed=5)
    assert added.question_id not in drafts
    # The tenth ready question was the last one like it: the drafts stay out.
    with pytest.raises(NothingLikeIt):
        attempt_add_like(attempt=started, response=first, seed=6)


def test_the_catalogue_counts_only_ready_questions(client, bank_with_drafts):
    exam, _ = bank_with_drafts
    page = client.get(reverse("exams:exam", args=[exam.code]))
    assert page.status_code == 200
    assert page.context["exam"].active_questions == 10


# The admin ------------------------------------------------------------------------------


def _question_post(question: Question, **changes) -> dict:
    choices = list(question.choices.order_by("order"))
    data = {
        "exam": question.exam_id, "domain": question.domain_id, "topic": question.topic, "title": question.title,
        "exhibit": "", "stem": question.stem, "explanation": question.explanation, "sources": "",
        "kind": question.kind, "choose": question.choose, "exclusion_group": "", "idnumber": "",
        "is_active": "on", "difficulty": question.difficulty,
        "choices-TOTAL_FORMS": str(len(choices)), "choices-INITIAL_FORMS": str(len(choices)),
        "choices-MIN_NUM_FORMS": "0", "choices-MAX_NUM_FORMS": "10",
        "errata-TOTAL_FORMS": "0", "errata-INITIAL_FORMS": "0", "errata-MIN_NUM_FORMS": "0", "errata-MAX_NUM_FORMS": "1000",
    }
    for index, choice in enumerate(choices):
        data |= {
            f"choices-{index}-id": choice.pk, f"choices-{index}-question": question.pk, f"choices-{index}-label": choice.label,
            f"choices-{index}-text": choice.text, f"choices-{index}-feedback": choice.feedback,
            f"choices-{index}-order": choice.order, **({f"choices-{index}-is_correct": "on"} if choice.is_correct else {}),
        }
    return data | changes


def test_the_add_form_makes_a_draft(instructor_client):
    template = QuestionFactory(topic="Diffusion")
    data = _question_post(template, title="Brand new", **{"_save": "Save"})
    for index in range(4):
        data.pop(f"choices-{index}-id"), data.pop(f"choices-{index}-question")
    data["choices-INITIAL_FORMS"] = "0"
    response = instructor_client.post(reverse("admin:exams_question_add"), data)
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert Question.objects.get(title="Brand new").status == QuestionStatus.DRAFT


def test_editing_a_ready_question_keeps_it_ready(instructor_client):
    question = QuestionFactory(topic="Diffusion")
    response = instructor_client.post(
        reverse("admin:exams_question_change", args=[question.pk]), _question_post(question, stem="Edited stem?")
    )
    assert response.status_code == 302
    question.refresh_from_db()
    assert (question.stem, question.status) == ("Edited stem?", QuestionStatus.READY)


def test_save_and_mark_ready_refuses_an_incomplete_draft_with_its_reasons(instructor_client):
    question = QuestionFactory(topic="", status=QuestionStatus.DRAFT)
    url = reverse("admin:exams_question_change", args=[question.pk])
    page = instructor_client.get(url)
    assert 'name="_mark_ready"' in page.text

    response = instructor_client.post(url, _question_post(question, _mark_ready="Save and mark ready"), follow=True)
    question.refresh_from_db()
    assert question.status == QuestionStatus.DRAFT
    shown = [str(message) for message in response.context["messages"]]
    assert f"“{question.title}” (#{question.pk}): it has no topic." in shown

    response = instructor_client.post(url, _question_post(question, topic="Diffusion", _mark_ready="Save and mark ready"))
    question.refresh_from_db()
    assert (question.topic, question.status) == ("Diffusion", QuestionStatus.READY)
    assert 'name="_mark_ready"' not in instructor_client.get(url).text


def test_the_bulk_action_marks_the_complete_and_refuses_the_rest(instructor_client):
    complete = QuestionFactory(topic="Diffusion", status=QuestionStatus.DRAFT)
    lacking = QuestionFactory(topic="Diffusion", explanation="", status=QuestionStatus.DRAFT)
    response = instructor_client.post(
        reverse("admin:exams_question_changelist"),
        {"action": "mark_selected_ready", "_selected_action": [complete.pk, lacking.pk]},
        follow=True,
    )
    shown = [str(message) for message in response.context["messages"]]
    assert "Marked 1 question ready. 1 question stays draft:" in shown
    assert f"“{lacking.title}” (#{lacking.pk}): it has no explanation." in shown
    assert dict(Question.objects.values_list("pk", "status")) == {complete.pk: "ready", lacking.pk: "draft"}


def test_drafts_to_review_lists_what_each_lacks_in_fixed_queries(instructor_client, django_assert_max_num_queries):
    QuestionFactory(topic="Diffusion")  # ready: not listed
    lacking = QuestionFactory(topic="", status=QuestionStatus.DRAFT, title="Needs a topic")
    complete = QuestionFactory(topic="Diffusion", status=QuestionStatus.DRAFT, title="All there")
    url = reverse("admin:exams_question_drafts")
    assert reverse("admin:exams_question_drafts") in instructor_client.get(reverse("admin:exams_question_changelist")).text
    instructor_client.get(url)
    with django_assert_max_num_queries(12) as few:
        page = instructor_client.get(url)
    QuestionFactory.create_batch(5, topic="", status=QuestionStatus.DRAFT)
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert instructor_client.get(url).status_code == 200
    assert page.status_code == 200
    text = page.text
    assert "Needs a topic" in text and "It has no topic" in text and "Nothing: ready to mark" in text
    assert text.count('name="question"') == 2

    response = instructor_client.post(url, {"question": [lacking.pk, complete.pk]}, follow=True)
    assert dict(Question.objects.filter(pk__in=[lacking.pk, complete.pk]).values_list("pk", "status")) == {
        lacking.pk: "draft", complete.pk: "ready",
    }
    assert f"“Needs a topic” (#{lacking.pk}): it has no topic." in [str(m) for m in response.context["messages"]]


def test_marking_ready_is_refused_without_change_permission(client, learner):
    draft = QuestionFactory(topic="Diffusion", status=QuestionStatus.DRAFT)
    client.force_login(learner)
    assert client.post(reverse("admin:exams_question_drafts"), {"question": [draft.pk]}).status_code == 302  # to login
    assert Question.objects.get(pk=draft.pk).status == QuestionStatus.DRAFT


def test_mark_ready_skips_questions_already_ready():
    ready = QuestionFactory(topic="Diffusion")
    outcome = questions_mark_ready(question_ids=[ready.pk])
    assert outcome.already == [ready] and not outcome.marked
    assert outcome.messages() == ("1 was ready already.", [])


def test_the_shipped_bank_loads_as_ready(nca_genm):
    assert set(nca_genm.questions.values_list("status", flat=True)) == {QuestionStatus.READY}
    Question.objects.filter(exam=nca_genm).update(status=QuestionStatus.DRAFT)
    from django.core.management import call_command

    call_command("load_bank", verbosity=0)
    assert set(nca_genm.questions.values_list("status", flat=True)) == {QuestionStatus.READY}
    assert not Attempt.objects.exists()
