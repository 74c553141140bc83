"""Item and test statistics, refreshed in the background from counted responses."""

from django.db import models

from exams.models.bank import Exam, Question


class MiskeyFlag(models.TextChoices):
    LIKELY = "likely", "likely"
    VERY_LIKELY = "very likely", "very likely"


class ItemStatistic(models.Model):
    """One question's item statistics over finished mocks, as `item_statistics_refresh` last stored them.

    Fractions, not percents (Moodle's quiz statistics, exams.statistics.formulas). One
    row over every finished mock, one over each learner's first finished mock only.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="statistics")
    first_mock_only = models.BooleanField(default=False)
    computed_at = models.DateTimeField()
    n = models.PositiveIntegerField(help_text="Finished mocks holding the question.")
    facility = models.FloatField(null=True)
    sd = models.FloatField(null=True, help_text="Sample standard deviation (n − 1) of the item score.")
    random_guess_score = models.FloatField()
    discrimination_index = models.FloatField(null=True, help_text="Pearson r of the item with the rest-score.")
    discriminative_efficiency = models.FloatField(null=True)
    d_upper_lower = models.FloatField(null=True, help_text="p(upper 27%) − p(lower 27%).")
    group_size = models.PositiveIntegerField()
    miskey = models.CharField(max_length=12, choices=MiskeyFlag.choices, blank=True)
    # Per choice, in the authored order: choice_id, label, is_key, picked, upper, lower,
    # share, option_discrimination, non_functioning (why a distractor does no work, or "").
    choices = models.JSONField(default=list)
    # The Rasch calibration (exams.statistics.calibration), on the all-mocks row only: from every
    # counted first answer in any mode, shrunk towards the domain's mean and the author's level.
    rasch_difficulty = models.FloatField(null=True, help_text="Rasch (1PL) difficulty in logits; 0 is the bank's average.")
    rasch_se = models.FloatField(null=True, help_text="Standard error of the Rasch difficulty.")
    rasch_n = models.PositiveIntegerField(null=True, help_text="Learners' first answers the difficulty is estimated from.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["question", "first_mock_only"], name="item_statistic_once"),
        ]

    def __str__(self) -> str:
        return f"{self.question} ({'first mocks' if self.first_mock_only else 'all mocks'}, n = {self.n})"

    @property
    def miskey_caveat(self) -> bool:
        from exams.statistics.formulas import MIN_N_FOR_CONFIDENT_MISKEY

        return bool(self.miskey) and self.n < MIN_N_FOR_CONFIDENT_MISKEY


class ExamStatistic(models.Model):
    """Test-level statistics of an exam's finished mocks: right counts, KR-20 and SEM."""

    exam = models.ForeignKey(Exam, on_delete=models.CASCADE, related_name="statistics")
    first_mock_only = models.BooleanField(default=False)
    computed_at = models.DateTimeField()
    attempts = models.PositiveIntegerField()
    question_count = models.PositiveSmallIntegerField(help_text="k in KR-20: the exam's question count.")
    mean = models.FloatField(null=True)
    median = models.FloatField(null=True)
    sd = models.FloatField(null=True)
    skewness = models.FloatField(null=True)
    kr20 = models.FloatField(null=True)
    sem = models.FloatField(null=True)
    # The calibration's population of learners (the prior of a new learner's ability), and
    # whether the bank counts as calibrated (exams.statistics.calibration.is_calibrated).
    ability_mean = models.FloatField(null=True)
    ability_sd = models.FloatField(null=True)
    calibrated = models.BooleanField(default=False)
    # The learners' drift: mean and SD across learners of the ability's slope per 10 finished
    # attempts (exams.statistics.rasch.drift_population), the prior of each learner's drift.
    # Null when too few learners had enough attempts to learn it from.
    drift_mean = models.FloatField(null=True, help_text="Logits per 10 finished attempts.")
    drift_sd = models.FloatField(null=True, help_text="Logits per 10 finished attempts.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["exam", "first_mock_only"], name="exam_statistic_once"),
        ]

    def __str__(self) -> str:
        return f"{self.exam} ({'first mocks' if self.first_mock_only else 'all mocks'}, {self.attempts} attempts)"
