"""Equated mock scores: frozen at grading once the bank is calibrated, emptied by a regrade, refilled by the refresh."""
from decimal import Decimal

import numpy as np
import pytest
from scipy.special import expit

from exams.bank.errata.regrade import erratum_confirm
from django.utils import timezone

from exams.models import Attempt, ExamStatistic, ItemStatistic, Response
from exams.statistics import calibration, equating, rasch
from exams.statistics.refresh import item_statistics_refresh
from tests.exams.bank.errata.test_regrade import backdate, choice_ids, finished_attempt, make_bank, report
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def calibrated_bank(questions: int = 6, learners: int = 60):
    """A bank whose questions 70 learners' mocks calibrate (difficulties spread from easy to hard)."""
    exam, bank = make_bank(questions=questions)
    rng = np.random.default_rng(2)
    truth = np.linspace(-1.5, 1.5, questions)
    for number in range(learners):
        theta = rng.normal(0.0, 1.0)
        answers = {q: "A" if rng.random() < expit(theta - b) else "B" for q, b in zip(bank, truth, strict=True)}
        finished_attempt(user=UserFactory(username=f"calibrating-{number}"), exam=exam, answers=answers)
    # The helper writes picks straight to the rows; calibration counts answered slots.
    Response.objects.filter(attempt__exam=exam).update(answered_at=timezone.now())
    item_statistics_refresh(exam=exam)
    assert ExamStatistic.objects.get(exam=exam, first_mock_only=False).calibrated
    return exam, bank


def by_hand(attempt: Attempt, exam) -> Decimal:
    stored = calibration.stored(exam)
    form = [stored.difficulty[r.question_id] for r in attempt.responses.filter(is_correct__isnull=False)]
    reference = equating.reference_form(exam=exam, bank=stored)
    return Decimal(f"{rasch.equate(right=attempt.right_count, form=np.array(form), reference=reference):.2f}")


def test_before_the_bank_is_calibrated_a_mock_has_no_equated_score(learner):
    exam, bank = make_bank(questions=4)
    attempt = finished_attempt(user=learner, exam=exam, answers={q: "A" for q in bank})
    assert attempt.equated_score is None and attempt.equated_note == ""


def test_the_first_calibration_backfills_past_mocks_and_grading_freezes_new_ones(learner):
    exam, bank = calibrated_bank()
    past = Attempt.objects.filter(exam=exam)
    assert past.count() == 60 and not past.filter(equated_score__isnull=True).exists()
    sample = past.order_by("pk").first()
    assert sample.equated_score == by_hand(sample, exam)
    # A new mock is equated at grading from the difficulties stored then.
    mine = finished_attempt(user=learner, exam=exam, answers={q: ("A" if i % 2 else "B") for i, q in enumerate(bank)})
    assert mine.equated_score == by_hand(mine, exam)
    frozen = mine.equated_score
    ItemStatistic.objects.filter(question__exam=exam).update(rasch_difficulty=2.0)  # a later calibration
    item_statistics_refresh(exam=exam)
    assert Attempt.objects.get(pk=mine.pk).equated_score == frozen  # never recomputed once set
    # All right and none right stay 100 and 0; score and passed never change.
    perfect = finished_attempt(user=learner, exam=exam, answers={q: "A" for q in bank})
    assert perfect.equated_score == Decimal("100.00") and perfect.score == Decimal("100.00")
    none = finished_attempt(user=learner, exam=exam, answers={q: "B" for q in bank})
    assert none.equated_score == Decimal("0.00")


def test_a_regrade_empties_the_equated_score_and_the_refresh_refills_it(learner):
    exam, bank = calibrated_bank()
    mine = finished_attempt(user=learner, exam=exam, answers={q: "B" for q in bank[:1]} | {q: "A" for q in bank[1:]})
    backdate(*Attempt.objects.filter(exam=exam))
    erratum_confirm(erratum=report(bank[0]), policy="credit_corrected", corrected_choice_ids=choice_ids(bank[0], "B"))
    mine.refresh_from_db()
    assert mine.right_count == len(bank) and mine.equated_score is None
    item_statistics_refresh(exam=exam)  # what the regrade queued
    mine.refresh_from_db()
    assert mine.equated_score == Decimal("100.00")


def test_the_note_says_how_the_form_compared():
    attempt = Attempt(score=Decimal("70.00"), equated_score=Decimal("73.20"))
    assert attempt.equated_note == "this form was 3 points harder than average"
    attempt.equated_score = Decimal("68.90")
    assert attempt.equated_note == "this form was 1 point easier than average"
    attempt.equated_score = Decimal("70.30")
    assert attempt.equated_note == "this form was of average difficulty"


def test_results_say_equated_or_why_not(learner_client, learner):
    exam, bank = make_bank(questions=4)
    attempt = finished_attempt(user=learner, exam=exam, answers={q: "A" for q in bank})
    page = learner_client.get(f"/attempts/{attempt.pk}/results/").content.decode()
    assert "Equated: — (shown once the bank is calibrated" in page
    Attempt.objects.filter(pk=attempt.pk).update(equated_score=Decimal("97.00"))
    page = learner_client.get(f"/attempts/{attempt.pk}/results/").content.decode()
    assert "Equated: <strong>97.0%</strong> — this form was 3 points easier than average" in page
