"""A report names as many choices as the question's Choose N (issue 27, item 6): the form,
the tallies per choice, and the instructor's pages showing both sets of letters, uncut."""
import re

import pytest
from django.urls import reverse

from exams.bank.errata.disputes import dispute_report
from exams.models import AttemptMode, Choice, Dispute, Erratum, QuestionKind
from exams.room import services
from exams.room.services import attempt_start
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db

LONG = "A choice whose text runs well past sixty characters, so a cut would drop its ending word"


@pytest.fixture
def choose_two():
    exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
    question = QuestionFactory(
        domain=exam.domains.get(), exam=exam, kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "B"], topic="Diffusion",
    )
    Choice.objects.filter(question=question, label="D").update(text=LONG)
    return exam, question


def checked_slot(user, exam, question):
    attempt = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=1, seed=3).attempt
    slot = attempt.responses.get(question=question)
    attempt.record_answer(response=slot, choice_ids=list(question.choices.filter(label__in=["A", "B"]).values_list("pk", flat=True)))
    services.attempt_check(attempt=attempt, response=slot)
    return attempt, slot


def test_a_choose_two_report_takes_two_choices_and_refuses_three(learner_client, learner, choose_two):
    exam, question = choose_two
    attempt, slot = checked_slot(learner, exam, question)
    url = reverse("exams:report", args=[attempt.pk, slot.position])
    page = learner_client.get(url).text
    assert page.count('type="checkbox" name="choice"') == 4 and "tick up to 2" in page

    refused = learner_client.post(url, {"choice": ["1", "2", "3"], "reason": "Three?"})
    assert "tick at most 2 (you ticked 3)" in refused.text and not Dispute.objects.exists()

    learner_client.post(url, {"choice": ["3", "4"], "reason": "C and D are right."})
    dispute = Dispute.objects.get()
    assert set(dispute.choices.values_list("pk", flat=True)) == {slot.choice_order[2], slot.choice_order[3]}
    # Editing shows the two ticked again, and a report of none is "no opinion".
    assert len(re.findall(r'name="choice" value="\d" [^>]*checked', learner_client.get(url).text)) == 2
    learner_client.post(url, {"reason": "Unsure now."})
    assert not Dispute.objects.get().choices.exists()


def test_triage_tallies_each_choice_and_shows_both_letters(instructor_client, learner, other_learner, choose_two):
    exam, question = choose_two
    by_label = {choice.label: choice for choice in question.choices.all()}
    for user, labels in ((learner, ["C", "D"]), (other_learner, ["D"])):
        _, slot = checked_slot(user, exam, question)
        dispute_report(user=user, response=slot, choice_ids=[by_label[label].pk for label in labels], reason="x")
    erratum = Erratum.objects.get(question=question)
    page = instructor_client.get(reverse("admin:exams_erratum_decide", args=[erratum.pk])).text
    tally = {label: re.search(rf'<th scope="row">{label}\..*?</tr>', page, re.S).group(0) for label in "ABCD"}
    assert "<td>2</td>" in tally["D"] and "<td>1</td>" in tally["C"] and "<td>0</td>" in tally["A"]

    slot = Dispute.objects.get(learner=learner).response
    theirs = {choice_id: "ABCD"[index] for index, choice_id in enumerate(slot.choice_order)}
    expected = ", ".join(
        f"their {theirs[by_label[label].pk]} = {label}"
        for label in sorted(["C", "D"], key=lambda label: slot.choice_order.index(by_label[label].pk))
    )
    assert f"<td>{expected}</td>" in page

    # The dispute list: both letters and each choice's whole text, never cut mid-word.
    listing = instructor_client.get(reverse("admin:exams_dispute_changelist")).text
    assert LONG in listing and f"authored D: {LONG}" in listing
    assert f"their {theirs[by_label['D'].pk]} = authored D" in listing


def test_a_report_names_only_the_slots_own_choices(learner, choose_two):
    exam, question = choose_two
    _, slot = checked_slot(learner, exam, question)
    stranger = QuestionFactory(exam=exam, domain=question.domain).choices.first()
    dispute = dispute_report(user=learner, response=slot, choice_ids=[stranger.pk, slot.choice_order[0]], reason="x")
    assert list(dispute.choices.values_list("pk", flat=True)) == [slot.choice_order[0]]
