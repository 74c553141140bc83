"""The bank's calibration through the statistics refresh: which answers count, and what is stored."""
import numpy as np
import pytest
from django.utils import timezone
from scipy.special import expit
from scipy.stats import spearmanr

from exams.models import AttemptMode, AttemptStatus, Choice, ExamStatistic, ItemStatistic, QuestionVersion, Response
from exams.statistics import calibration, rasch
from exams.statistics.refresh import item_statistics_refresh
from tests.exams.statistics.test_totals import make_bank, record
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TRUE_B = np.linspace(-1.5, 1.5, 8)


def answered(attempts) -> None:
    Response.objects.filter(attempt__in=attempts).update(answered_at=timezone.now())


def simulate(exam, bank, *, learners=70, seed=1):
    rng = np.random.default_rng(seed)
    users = []
    for number in range(learners):
        user = UserFactory(username=f"calibration-{number}")
        theta = rng.normal(0.0, 1.0)
        sheet = {q: "A" if rng.random() < expit(theta - b) else "B" for q, b in zip(bank, TRUE_B, strict=True)}
        answered(record(user=user, exam=exam, sheets=[sheet]))
        users.append(user)
    return users


def test_the_refresh_stores_difficulties_in_the_true_order_and_calls_the_bank_calibrated():
    exam, bank = make_bank(questions=8)
    users = simulate(exam, bank)
    # A re-answer after the feedback: all right, in practice. Only first answers count.
    for user in users[:40]:
        answered(record(user=user, exam=exam, sheets=[{q: "A" for q in bank}], mode=AttemptMode.PRACTICE))
    item_statistics_refresh(exam=exam)
    rows = {row.question_id: row for row in ItemStatistic.objects.filter(question__exam=exam, first_mock_only=False)}
    got = [rows[q.pk].rasch_difficulty for q in bank]
    assert spearmanr(got, TRUE_B).statistic > 0.85
    assert all(rows[q.pk].rasch_n == 70 for q in bank)
    assert all(0 < rows[q.pk].rasch_se <= calibration.CALIBRATED_SE for q in bank)
    assert sum(got) == pytest.approx(0.0, abs=1e-6)
    test = ExamStatistic.objects.get(exam=exam, first_mock_only=False)
    assert test.calibrated and test.ability_sd >= rasch.PERSON_PRIOR_SD_FLOOR
    # The first-mock-only rows carry no calibration.
    assert not ItemStatistic.objects.filter(question__exam=exam, first_mock_only=True, rasch_difficulty__isnull=False).exists()


def test_unanswered_abandoned_and_unfinished_answers_do_not_count():
    exam, bank = make_bank(questions=8)
    user = UserFactory()
    record(user=user, exam=exam, sheets=[{q: "A" for q in bank}])  # a mock left unanswered: answered_at empty
    answered(record(user=UserFactory(), exam=exam, sheets=[{q: "A" for q in bank}], mode=AttemptMode.PRACTICE,
                    status=AttemptStatus.ABANDONED))
    answered(record(user=UserFactory(), exam=exam, sheets=[{q: "A" for q in bank}], status=AttemptStatus.IN_PROGRESS))
    result = calibration.calibrate_exam(exam)
    assert result.responses == 0 and not result.calibrated
    # Nobody answered: every question sits at its prior (medium: the domain's mean, 0) with the prior's SE.
    assert all(b == pytest.approx(0.0) and se == pytest.approx(rasch.ITEM_PRIOR_SD) and n == 0
               for b, se, n in result.items.values())


def test_answers_to_a_version_whose_choices_changed_are_dropped():
    exam, bank = make_bank(questions=8)
    simulate(exam, bank, learners=35)
    assert calibration.calibrate_exam(exam).items[bank[0].pk][2] == 35
    choice = Choice.objects.filter(question=bank[0]).order_by("order").last()
    choice.text = "A different distractor"
    choice.save()
    QuestionVersion.objects.current_for([bank[0]])  # the next draw's version: a new one
    result = calibration.calibrate_exam(exam)
    assert result.items[bank[0].pk][2] == 0 and result.items[bank[1].pk][2] == 35


def test_the_calibrated_rule():
    items = {1: (0.0, 0.3, 30), 2: (0.0, 0.3, 30), 3: (0.0, 0.3, 30), 4: (0.0, 0.36, 30), 5: (0.0, 0.3, 29)}
    assert not calibration.is_calibrated(ready=[1, 2, 3, 4, 5], items=items)  # 3 of 5 < 80%
    items[4] = (0.0, 0.35, 30)
    assert calibration.is_calibrated(ready=[1, 2, 3, 4, 5], items=items)  # 4 of 5
    assert not calibration.is_calibrated(ready=[], items=items)


def test_the_refresh_learns_the_learners_drift_and_the_pages_read_it_as_the_prior():
    """Learners who improve 3 logits per 10 attempts, each meeting new questions at every attempt:
    the refresh stores the population's drift beside the ability population, and the pages'
    stored() hands it on as the drift prior (the fixed one until then)."""
    exam, bank = make_bank(questions=40)
    assert (calibration.stored(exam).slope_mean, calibration.stored(exam).slope_sd) == (rasch.SLOPE_MEAN, rasch.SLOPE_SD)
    rng = np.random.default_rng(6)
    true_b = rng.normal(0.0, 1.0, len(bank))
    for number in range(rasch.MIN_DRIFT_LEARNERS + 10):
        user = UserFactory(username=f"drift-{number}")
        theta = rng.normal(0.0, 0.5)
        order = rng.permutation(len(bank))
        for attempt in range(5):
            ability = theta + 3.0 * attempt / rasch.SLOPE_UNIT
            sheet = {bank[i]: "A" if rng.random() < expit(ability - true_b[i]) else "B" for i in order[attempt * 8:(attempt + 1) * 8]}
            answered(record(user=user, exam=exam, sheets=[sheet]))
    item_statistics_refresh(exam=exam)
    test = ExamStatistic.objects.get(exam=exam, first_mock_only=False)
    assert test.calibrated and test.drift_mean is not None and test.drift_sd is not None
    assert test.drift_mean == pytest.approx(3.0, abs=1.5)  # 60 learners of 40 answers: a rough recovery
    stored = calibration.stored(exam)
    assert stored.slope_mean == test.drift_mean and stored.slope_sd == max(test.drift_sd, rasch.SLOPE_SD_FLOOR)
    # Not calibrated (say, new questions added since): the fixed prior again.
    ExamStatistic.objects.filter(pk=test.pk).update(calibrated=False)
    assert (calibration.stored(exam).slope_mean, calibration.stored(exam).slope_sd) == (rasch.SLOPE_MEAN, rasch.SLOPE_SD)


def test_the_drift_prior_falls_back_until_it_is_learned():
    assert calibration.drift_prior(calibrated=True, drift_mean=None, drift_sd=None) == (rasch.SLOPE_MEAN, rasch.SLOPE_SD)
    assert calibration.drift_prior(calibrated=False, drift_mean=1.0, drift_sd=0.3) == (rasch.SLOPE_MEAN, rasch.SLOPE_SD)
    assert calibration.drift_prior(calibrated=True, drift_mean=1.0, drift_sd=0.3) == (1.0, 0.3)
    assert calibration.drift_prior(calibrated=True, drift_mean=1.0, drift_sd=0.0) == (1.0, rasch.SLOPE_SD_FLOOR)
