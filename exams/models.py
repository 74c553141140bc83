"""The exam model: exams, domains, versioned questions, errata, attempts and responses."""
import hashlib
import json
from collections import defaultdict
from datetime import UTC, timedelta
from typing import NamedTuple

import fsrs
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator
from django.db import connection, models, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.formats import TEXT_LIMITS
from exams.markdown import render_markdown


class Exam(models.Model):
    code = models.CharField(max_length=32, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    question_count = models.PositiveSmallIntegerField(default=60, validators=[MinValueValidator(1)])
    time_limit_minutes = models.PositiveSmallIntegerField(default=60, validators=[MinValueValidator(1)])
    passing_score = models.PositiveSmallIntegerField(
        default=70, validators=[MinValueValidator(0), MaxValueValidator(100)], help_text="Percent."
    )
    is_published = models.BooleanField(default=False)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(condition=Q(passing_score__lte=100), name="exam_passing_score_percent"),
            models.CheckConstraint(condition=Q(question_count__gte=1), name="exam_question_count_positive"),
            models.CheckConstraint(condition=Q(time_limit_minutes__gte=1), name="exam_time_limit_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.code}: {self.title}"


class Domain(models.Model):
    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="domains")
    name = models.CharField(max_length=120)
    weight = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(0), MaxValueValidator(100)], help_text="Percent of the exam."
    )
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["exam", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["exam", "name"], name="domain_unique_name_per_exam"),
            models.CheckConstraint(condition=Q(weight__gte=0, weight__lte=100), name="domain_weight_percent"),
        ]

    def __str__(self) -> str:
        return self.name


class QuestionKind(models.TextChoices):
    SINGLE = "single", "Single answer"
    MULTIPLE = "multiple", "Multiple answers"


class QuestionQuerySet(models.QuerySet):
    def active(self):
        return self.filter(is_active=True)

    def in_finished_attempts(self):
        return self.filter(
            responses__attempt__status__in=Attempt.FINISHED_STATUSES
        ).distinct()


class Question(models.Model):
    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="questions")
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="questions")
    title = models.CharField(max_length=200)
    topic = models.CharField(
        max_length=80, blank=True, help_text='A short name within the domain, e.g. "Diffusion sampling and guidance".'
    )
    exhibit = models.TextField(
        blank=True,
        validators=[MaxLengthValidator(TEXT_LIMITS["exhibit"])],
        help_text="Markdown shown above the stem: one fenced block, one table, or one image "
        "![alt](exhibit:file.png) from fixtures/bank/exhibits/.",
    )
    stem = models.TextField(help_text="Markdown.", validators=[MaxLengthValidator(TEXT_LIMITS["stem"])])
    explanation = models.TextField(
        blank=True, help_text="Markdown. Shown only after an attempt ends.", validators=[MaxLengthValidator(TEXT_LIMITS["explanation"])]
    )
    sources = models.TextField(
        blank=True, validators=[MaxLengthValidator(TEXT_LIMITS["sources"])], help_text="Markdown: public sources for the key, shown with the explanation as “Learn more”."
    )
    exclusion_group = models.CharField(
        max_length=80, blank=True, db_index=True,
        help_text="Questions sharing a group test the same point: an attempt draws at most one of them.",
    )
    idnumber = models.CharField(
        "ID number", max_length=100, blank=True,
        help_text="Moodle's ID number of the question: kept from a Moodle XML import and written on export.",
    )
    kind = models.CharField(max_length=8, choices=QuestionKind.choices, default=QuestionKind.SINGLE)
    choose = models.PositiveSmallIntegerField(default=1, help_text="How many choices to pick.")
    keep_order = models.BooleanField(default=False, help_text='Do not shuffle choices (e.g. "all of the above").')
    is_active = models.BooleanField(default=True)
    # Plain defaults rather than auto_now so fixtures may omit them.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ["exam", "domain__order", "id"]
        indexes = [models.Index(fields=["exam", "domain", "is_active"], name="question_draw_pool")]
        constraints = [
            models.CheckConstraint(condition=Q(choose__gte=1), name="question_choose_positive"),
            models.CheckConstraint(
                condition=Q(kind="multiple") | Q(choose=1), name="question_single_chooses_one"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        self.updated_at = timezone.now()
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("admin:exams_question_change", args=[self.pk])

    @property
    def stem_html(self) -> str:
        return render_markdown(self.stem)

    @property
    def explanation_html(self) -> str:
        return render_markdown(self.explanation)

    def is_in_finished_attempt(self) -> bool:
        return Response.objects.filter(
            question=self, attempt__status__in=Attempt.FINISHED_STATUSES
        ).exists()

    def content(self, choices=None) -> dict:
        """What a learner sees of this question: the part a version freezes.

        `choices`, when given, are its choices already read: anything with their `pk`,
        `label`, `text`, `feedback` and `order` (a draw reads them as tuples, `ChoiceText`).
        """
        choices = self.choices.all() if choices is None else choices
        return {
            "title": self.title,
            "topic": self.topic,
            "exhibit": self.exhibit,
            "stem": self.stem,
            "explanation": self.explanation,
            "sources": self.sources,
            "choices": {
                str(choice.pk): {"label": choice.label, "text": choice.text, "feedback": choice.feedback}
                for choice in sorted(choices, key=lambda c: (c.order, c.pk))
            },
        }

    def current_version(self) -> "QuestionVersion":
        """The version new attempts get (see QuestionVersion.objects.current_for)."""
        return QuestionVersion.objects.current_for([self])[self.pk]


class ChoiceText(NamedTuple):
    """What a version freezes of a choice, read without a model instance (`Question.content`)."""

    pk: int
    question_id: int
    label: str
    text: str
    feedback: str
    order: int


def choice_texts(question_ids) -> dict[int, list[ChoiceText]]:
    """Each question's choices, in their order, as `ChoiceText` (one query)."""
    texts: dict[int, list[ChoiceText]] = defaultdict(list)
    for row in Choice.objects.filter(question_id__in=question_ids).order_by("question_id", "order", "pk").values_list(
        "pk", "question_id", "label", "text", "feedback", "order"
    ):
        texts[row[1]].append(ChoiceText(*row))
    return texts


def content_digest(content: dict) -> str:
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


class QuestionVersionManager(models.Manager):
    @transaction.atomic
    def current_for(self, questions, *, choices: dict[int, list] | None = None) -> dict[int, "QuestionVersion"]:
        """The version new attempts get of each question, made when the text changed.

        A version already shown in an attempt is frozen: a text edit after that makes a
        new version, so old attempts keep what they showed. An unused version is updated
        in place, so drafts do not pile up versions. A fixed number of queries however
        many questions; prefetch `choices` on the questions to save one per question.

        The common case, a question drawn before and unchanged since, takes no lock: its
        version is shown in some attempt, so nothing will ever rewrite it. Only questions
        whose version must be made or rewritten are locked, so concurrent draws of an
        unchanged bank do not queue behind each other.
        """
        questions = list(questions)
        texts = (lambda question: choices.get(question.pk, [])) if choices is not None else (lambda question: None)
        digests = {question.pk: content_digest(question.content(texts(question))) for question in questions}
        current = {
            question_id: version
            for question_id, version in self._latest(questions).items()
            if version.in_use and version.digest == digests[question_id]
        }
        stale = [question for question in questions if question.pk not in current]
        if stale:
            current |= self._make_current(stale, texts)
        return current

    def _latest(self, questions) -> dict[int, "QuestionVersion"]:
        latest: dict[int, QuestionVersion] = {}
        versions = (
            # Not the frozen texts: a draw compares digests (a caller reading `content`
            # of a version it gets back pays one query for it).
            self.filter(question__in=questions).defer("content")
            # Whether any attempt showed it: the first response's id, one index probe per
            # version. (As EXISTS, PostgreSQL hashed every response of every attempt to
            # answer it: a draw's cost grew with the whole history.) A version an erratum's
            # correction recorded is frozen too: results show it.
            .annotate(
                shown_in=models.Subquery(Response.objects.filter(version=models.OuterRef("pk")).order_by().values("pk")[:1]),
                corrects=models.Subquery(
                    Erratum.objects.filter(corrected_version=models.OuterRef("pk")).order_by().values("pk")[:1]
                ),
            )
            .order_by("question_id", "number")
        )
        for version in versions:
            version.in_use = version.shown_in is not None or version.corrects is not None
            latest[version.question_id] = version
        return latest

    def _make_current(self, questions, texts=lambda question: None) -> dict[int, "QuestionVersion"]:
        # Two first draws of a fresh bank would both create version 1: the question rows,
        # locked in id order, make them take turns (no key lock: foreign keys still pass).
        # What was read before the lock is read again after it.
        list(
            Question.objects.select_for_update(no_key=True)
            .filter(pk__in=[question.pk for question in questions])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        latest = self._latest(questions)
        current, to_create, to_update = {}, [], []
        for question in questions:
            content = question.content(texts(question))
            digest = content_digest(content)
            version = latest.get(question.pk)
            if version is not None and version.digest == digest:
                current[question.pk] = version
            elif version is not None and not version.in_use:
                version.content, version.digest = content, digest
                to_update.append(version)
                current[question.pk] = version
            else:
                new = QuestionVersion(
                    question=question, number=version.number + 1 if version else 1, content=content, digest=digest
                )
                to_create.append(new)
                current[question.pk] = new
        if to_update:
            self.bulk_update(to_update, ["content", "digest"])
        if to_create:
            self.bulk_create(to_create)
        return current


class QuestionVersion(models.Model):
    """A frozen copy of a question's text and choice texts, as some attempt showed it."""

    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.JSONField()
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(db_default=Now())

    objects = QuestionVersionManager()

    class Meta:
        ordering = ["question", "number"]
        constraints = [
            models.UniqueConstraint(fields=["question", "number"], name="version_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.question} (v{self.number})"

    @property
    def stem_html(self) -> str:
        return render_markdown(self.content["stem"])

    @property
    def explanation_html(self) -> str:
        return render_markdown(self.content["explanation"])

    # Versions frozen before the second edition have no topic, exhibit or sources.
    @property
    def topic(self) -> str:
        return self.content.get("topic", "")

    @property
    def exhibit_html(self) -> str:
        return render_markdown(self.content.get("exhibit", ""), exhibits_of=self.question_id)

    @property
    def sources_html(self) -> str:
        return render_markdown(self.content.get("sources", ""))

    def choice_text(self, choice_id: int) -> str:
        return self.content["choices"].get(str(choice_id), {}).get("text", "")

    def choice_feedback(self, choice_id: int) -> str:
        return self.content["choices"].get(str(choice_id), {}).get("feedback", "")


class ExhibitImage(models.Model):
    """An image a question's exhibit shows, ![alt](exhibit:<name>), kept in the database so
    every deployment serves the same bytes (see exams.exhibits for what is accepted)."""

    name = models.CharField(max_length=120, unique=True)
    content_type = models.CharField(max_length=20)
    data = models.BinaryField()
    digest = models.CharField(max_length=64)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Choice(models.Model):
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="choices")
    label = models.CharField(max_length=2, help_text="A, B, C… as authored; learners see their own order.")
    text = models.TextField(validators=[MaxLengthValidator(TEXT_LIMITS["choice"])])
    is_correct = models.BooleanField(default=False, help_text="Always the corrected key.")
    feedback = models.TextField(
        blank=True, help_text="Why this choice is right or wrong.", validators=[MaxLengthValidator(TEXT_LIMITS["feedback"])]
    )
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["question", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "label"], name="choice_unique_label"),
        ]

    def __str__(self) -> str:
        return f"{self.label}. {self.text[:60]}"


class ErratumSource(models.TextChoices):
    IMPORTED = "imported", "Imported"
    INSTRUCTOR = "instructor", "Instructor"
    LEARNERS = "learners", "Learner reports"


class ErratumStatus(models.TextChoices):
    REPORTED = "reported", "Reported"
    CONFIRMED = "confirmed", "Confirmed"
    REJECTED = "rejected", "Rejected"


class ErratumPolicy(models.TextChoices):
    CREDIT_CORRECTED = "credit_corrected", "Credit the corrected key"
    CREDIT_EITHER = "credit_either", "Credit either key"
    VOID = "void", "Void the item"


class Erratum(models.Model):
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="errata")
    published_key = models.ManyToManyField(
        Choice, blank=True, related_name="+", help_text="The choices the published key named."
    )
    note = models.TextField(blank=True)
    source = models.CharField(max_length=12, choices=ErratumSource.choices, default=ErratumSource.INSTRUCTOR)
    status = models.CharField(max_length=10, choices=ErratumStatus.choices, default=ErratumStatus.REPORTED)
    policy = models.CharField(max_length=16, choices=ErratumPolicy.choices, blank=True)
    reported_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decision_note = models.TextField(blank=True, help_text="Why it was rejected (for instructors).")
    corrected_version = models.ForeignKey(
        "QuestionVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        help_text="The question's text as the confirmation corrected it (explanation and feedback).",
    )

    class Meta:
        verbose_name_plural = "errata"
        ordering = ["-reported_at"]
        constraints = [
            # One open erratum per question gathers every learner's report.
            models.UniqueConstraint(
                fields=["question"], condition=Q(status="reported"), name="erratum_one_open_per_question"
            ),
            models.CheckConstraint(
                condition=~Q(status="confirmed") | ~Q(policy=""), name="erratum_confirmed_has_policy"
            ),
        ]
        indexes = [models.Index(fields=["question", "status"], name="erratum_question_status")]

    ONE_OPEN = (
        "This question already has an open erratum, and a question has one open erratum at a time: "
        "add to that one, or decide it first."
    )

    def __str__(self) -> str:
        return f"Erratum on {self.question} ({self.get_status_display()})"

    def clean(self) -> None:
        # The constraint's own validation is skipped by forms that leave status out (the
        # admin shows it read-only), so the rule is checked here for every form.
        if self.status == ErratumStatus.REPORTED and self.question_id is not None:
            others = Erratum.objects.filter(question_id=self.question_id, status=ErratumStatus.REPORTED).exclude(pk=self.pk)
            if others.exists():
                raise ValidationError(self.ONE_OPEN, code="one_open")

    @property
    def note_html(self) -> str:
        return render_markdown(self.note)


class Dispute(models.Model):
    """One learner's report on a question, gathered on its open erratum."""

    erratum = models.ForeignKey(Erratum, on_delete=models.CASCADE, related_name="disputes")
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="disputes")
    choice = models.ForeignKey(
        Choice, on_delete=models.PROTECT, null=True, blank=True, related_name="disputes",
        help_text="The choice the learner believes is right.",
    )
    reason = models.TextField(blank=True)
    response = models.ForeignKey(
        "Response", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The slot the report came from: its choice order gives the learner's letters.",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["erratum", "learner"], name="dispute_one_per_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.learner} on {self.erratum.question}"


class AttemptMode(models.TextChoices):
    MOCK = "mock", "Timed mock"
    PRACTICE = "practice", "Practice"
    DRILL = "drill", "Domain drill"
    REVIEW = "review", "Review mistakes"


class AttemptStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Expired"


class AttemptQuerySet(models.QuerySet):
    def with_clock(self):
        """Each attempt with the database's clock, which every web server agrees on."""
        return self.annotate(db_now=Now())

    def past_grace(self):
        return self.filter(status=AttemptStatus.IN_PROGRESS, deadline__lt=Now() - Attempt.GRACE)

    def finished(self):
        return self.filter(status__in=Attempt.FINISHED_STATUSES)

    def in_progress(self):
        return self.filter(status=AttemptStatus.IN_PROGRESS)

    def for_user(self, user):
        return self.filter(user=user)


class Attempt(models.Model):
    FINISHED_STATUSES = (AttemptStatus.SUBMITTED, AttemptStatus.EXPIRED)
    # Saves arriving this long after the deadline are still accepted (network, clock skew).
    GRACE = timedelta(seconds=30)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="attempts")
    mode = models.CharField(max_length=10, choices=AttemptMode.choices, default=AttemptMode.MOCK)
    started_at = models.DateTimeField(db_default=Now())
    deadline = models.DateTimeField(null=True, blank=True, help_text="Server clock; empty when untimed.")
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=AttemptStatus.choices, default=AttemptStatus.IN_PROGRESS)
    score = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True, help_text="Percent.")
    published_score = models.DecimalField(
        max_digits=5, decimal_places=2, null=True, blank=True, help_text="The score as first graded."
    )
    right_count = models.PositiveSmallIntegerField(null=True, blank=True)
    total_count = models.PositiveSmallIntegerField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    last_position = models.PositiveSmallIntegerField(default=1)
    domain = models.ForeignKey(
        Domain, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        help_text="For drills and filtered practice.",
    )
    feedback_at_end = models.BooleanField(
        default=False, db_default=False,
        help_text="Practice built to show keys and explanations only when it ends (no “Check answer”).",
    )

    objects = AttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "exam", "mode"],
                condition=Q(status="in_progress"),
                name="attempt_one_in_progress",
            ),
            models.CheckConstraint(
                condition=Q(status="in_progress") | Q(finished_at__isnull=False),
                name="attempt_finished_has_time",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=100), name="attempt_score_percent"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "status", "-finished_at"], name="attempt_user_history"),
            models.Index(fields=["user", "exam", "status"], name="attempt_user_exam"),
            models.Index(fields=["status", "deadline"], name="attempt_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.exam.code} {self.get_mode_display()} #{self.pk}"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED_STATUSES

    @property
    def is_timed(self) -> bool:
        return self.deadline is not None

    @property
    def checks_one_by_one(self) -> bool:
        """Whether "Check answer" shows each answer's key as the learner goes."""
        return self.mode != AttemptMode.MOCK and not self.feedback_at_end

    def seconds_left(self) -> float | None:
        """Seconds to the deadline by the database clock (needs `with_clock()`)."""
        if self.deadline is None:
            return None
        return max(0.0, (self.deadline - self.db_now).total_seconds())

    def is_past_grace(self) -> bool:
        """True once saves are refused: the deadline plus the grace has passed (database clock)."""
        return self.deadline is not None and self.db_now > self.deadline + self.GRACE

    @property
    def time_used(self) -> timedelta | None:
        if self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def record_answer(self, *, response: "Response", choice_ids: list[int]) -> bool:
        """Store the choices picked for one slot (the caller holds the attempt's row lock, or
        on SQLite the database's write lock).

        Returns whether anything changed; saving the same answer again is a no-op. A change
        always updates the slot's row (`answered_at`), which exams.saving relies on.
        """
        current = {pick.choice_id for pick in response.picks.all()}
        if current == set(choice_ids):
            return False
        if current:
            response.picks.all().delete()
        if choice_ids:
            ResponseChoice.objects.bulk_create(ResponseChoice(response=response, choice_id=pk) for pk in choice_ids)
        response.answered_at = Now() if choice_ids else None
        response.save(update_fields=["answered_at"])
        # What was prefetched is stale now: a check in the same request grades the new picks.
        getattr(response, "_prefetched_objects_cache", {}).pop("picks", None)
        return True

    def record_strikes(self, *, response: "Response", choice_ids: set[int]) -> bool:
        """Store which choices the learner struck out on one slot; returns whether it changed."""
        current = {strike.choice_id for strike in response.strikes.all()}
        if current == choice_ids:
            return False
        response.strikes.filter(choice_id__in=current - choice_ids).delete()
        ResponseStrike.objects.bulk_create(ResponseStrike(response=response, choice_id=pk) for pk in choice_ids - current)
        if connection.vendor == "postgresql":
            # A new row version for the slot: the one-statement save (exams.saving) sees that
            # its slot changed while it waited, and reads it again.
            Response.objects.filter(pk=response.pk).update(flagged=F("flagged"))
        getattr(response, "_prefetched_objects_cache", {}).pop("strikes", None)
        return True

    def end_time(self, *, expired: bool):
        """When the attempt ends: an expired one at its deadline, whenever the server noticed."""
        if expired and self.deadline:
            return self.deadline
        return getattr(self, "db_now", None) or timezone.now()

    def finish(self, *, expired: bool, grade) -> None:
        """Close the attempt with its grade (an exams.grading.AttemptGrade); the caller holds its row lock.

        Grading reads `finished_at` (errata policies depend on when an attempt finished),
        so exams.services.attempt_finish sets it, grades, then calls this.
        """
        if self.is_finished or self.finished_at is None:
            raise ValueError("finish an attempt once, after setting finished_at (exams.services.attempt_finish)")
        self.status = AttemptStatus.EXPIRED if expired else AttemptStatus.SUBMITTED
        self.right_count, self.total_count = grade.right, grade.total
        self.score = self.published_score = grade.score
        self.passed = grade.passed
        self.save(update_fields=[
            "status", "finished_at", "right_count", "total_count", "score", "published_score", "passed",
        ])


class Response(models.Model):
    """One question slot of an attempt, created when the attempt is drawn."""

    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="responses")
    position = models.PositiveSmallIntegerField()
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="responses")
    version = models.ForeignKey(QuestionVersion, on_delete=models.PROTECT, related_name="responses")
    # Frozen at the draw like the version: moving a question to another domain later must
    # not rewrite the per-domain results and mastery of attempts already taken. No index:
    # reads reach responses through their attempt or question, and one more index on the
    # largest table would cost every draw and regrade.
    domain = models.ForeignKey(
        Domain, on_delete=models.PROTECT, related_name="+", db_index=False,
        help_text="The question's domain when it was drawn.",
    )
    choice_order = models.JSONField(help_text="Choice ids in the order this attempt shows them.")
    selected = models.ManyToManyField(Choice, through="ResponseChoice", related_name="+", blank=True)
    # The candidate's strike-outs: kept so a reload or another device shows them; never graded.
    struck = models.ManyToManyField(Choice, through="ResponseStrike", related_name="+", blank=True)
    flagged = models.BooleanField(default=False)
    answered_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(
        null=True, blank=True, help_text="Practice: when the learner checked this answer; it is locked from then on."
    )
    is_correct = models.BooleanField(null=True, blank=True, help_text="Set by grading; empty for a void item.")

    class Meta:
        ordering = ["attempt", "position"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "position"], name="response_unique_position"),
            models.UniqueConstraint(fields=["attempt", "question"], name="response_unique_question"),
            models.CheckConstraint(condition=Q(position__gte=1), name="response_position_positive"),
        ]
        indexes = [models.Index(fields=["question", "attempt"], name="response_by_question")]

    def __str__(self) -> str:
        return f"{self.attempt} · {self.position}"


class ResponseChoice(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="picks")
    choice = models.ForeignKey(Choice, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "choice"], name="pick_unique_choice"),
        ]


class ResponseStrike(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="strikes")
    choice = models.ForeignKey(Choice, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "choice"], name="strike_unique_choice"),
        ]


class RegradeEvent(models.Model):
    """One confirmation's effect on past attempts, kept for the record and for learners' notices."""

    erratum = models.ForeignKey(Erratum, on_delete=models.PROTECT, related_name="regrades")
    policy = models.CharField(max_length=16, choices=ErratumPolicy.choices)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    attempts_touched = models.PositiveIntegerField(default=0)
    scores_changed = models.PositiveIntegerField(default=0)
    pass_flips = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Regrade for {self.erratum.question} ({self.get_policy_display()})"


class RegradeChange(models.Model):
    """An attempt whose score a regrade changed: its score before and after."""

    event = models.ForeignKey(RegradeEvent, on_delete=models.CASCADE, related_name="changes")
    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="regrade_changes")
    old_score = models.DecimalField(max_digits=5, decimal_places=2)
    new_score = models.DecimalField(max_digits=5, decimal_places=2)
    old_passed = models.BooleanField()
    new_passed = models.BooleanField()

    class Meta:
        ordering = ["event", "attempt"]
        constraints = [models.UniqueConstraint(fields=["event", "attempt"], name="regrade_change_once")]
        indexes = [models.Index(fields=["attempt", "event"], name="regrade_change_attempt")]


class CardState(models.IntegerChoices):
    # The values are fsrs.State's, so a card converts both ways without a table.
    LEARNING = 1, "Learning"
    REVIEW = 2, "Review"
    RELEARNING = 3, "Relearning"


class ReviewCardQuerySet(models.QuerySet):
    def due(self, *, user, exam):
        """The learner's cards of this exam due now (database clock), active questions only."""
        return self.filter(user=user, question__exam=exam, question__is_active=True, due__lte=Now())


class ReviewCard(models.Model):
    """A learner's FSRS memory state for one question (see exams.scheduling)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="review_cards")
    state = models.PositiveSmallIntegerField(choices=CardState.choices, default=CardState.LEARNING)
    step = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Learning step; empty in review.")
    stability = models.FloatField(null=True, blank=True, help_text="Days until recall falls to 90%.")
    difficulty = models.FloatField(null=True, blank=True, help_text="1 (easy) to 10 (hard).")
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = ReviewCardQuerySet.as_manager()

    class Meta:
        ordering = ["due", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "question"], name="review_card_once"),
            models.CheckConstraint(condition=Q(state__in=[1, 2, 3]), name="review_card_state"),
        ]
        indexes = [models.Index(fields=["user", "due"], name="review_card_due")]

    def __str__(self) -> str:
        return f"{self.user} · {self.question} (due {self.due:%Y-%m-%d %H:%M})"

    def as_fsrs(self) -> fsrs.Card:
        return fsrs.Card(
            card_id=self.pk or 0, state=fsrs.State(self.state), step=self.step, stability=self.stability,
            difficulty=self.difficulty, due=self.due.astimezone(UTC),
            last_review=self.last_review.astimezone(UTC) if self.last_review else None,
        )

    def take(self, card: fsrs.Card) -> None:
        """Copy the package's card state onto this row (not saved)."""
        self.state, self.step = int(card.state), card.step
        self.stability, self.difficulty = card.stability, card.difficulty
        self.due, self.last_review = card.due, card.last_review


class BookmarkQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(user=user)


NOTE_MAX_LENGTH = 2000


class Bookmark(models.Model):
    """A question a learner keeps coming back to, with their private note (never shown to anyone else)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bookmarks")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="bookmarks")
    note = models.TextField(blank=True, validators=[MaxLengthValidator(NOTE_MAX_LENGTH)], help_text="Markdown.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = BookmarkQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="bookmark_once")]
        indexes = [models.Index(fields=["user", "-updated_at"], name="bookmark_list")]

    def __str__(self) -> str:
        return f"{self.user} · {self.question}"

    @property
    def note_html(self) -> str:
        return render_markdown(self.note)


class LearnerAccommodation(Profile):
    """A learner's time-limit factor, as instructors manage it.

    A proxy of accounts.Profile so that its permissions are the exams app's, which is all
    the Instructors group holds.
    """

    class Meta:
        proxy = True
        verbose_name = "learner accommodation"
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.user} ×{self.accommodation_factor}"


class MiskeyFlag(models.TextChoices):
    LIKELY = "likely", "likely"
    VERY_LIKELY = "very likely", "very likely"


class ItemStatistic(models.Model):
    """One question's item statistics over finished mocks, as `item_statistics_refresh` last stored them.

    Fractions, not percents (Moodle's quiz statistics, exams.psychometrics.formulas). One
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

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["question", "first_mock_only"], name="item_statistic_once"),
        ]

    def __str__(self) -> str:
        return f"{self.question} ({'first mocks' if self.first_mock_only else 'all mocks'}, n = {self.n})"

    @property
    def miskey_caveat(self) -> bool:
        from exams.psychometrics.formulas import MIN_N_FOR_CONFIDENT_MISKEY

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

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["exam", "first_mock_only"], name="exam_statistic_once"),
        ]

    def __str__(self) -> str:
        return f"{self.exam} ({'first mocks' if self.first_mock_only else 'all mocks'}, {self.attempts} attempts)"
