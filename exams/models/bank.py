"""The bank: exams, domains, versioned questions, choices, exhibit images, errata and disputes."""
import hashlib
import json
from collections import defaultdict
from typing import NamedTuple

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.db.models import Q
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

from exams.bounds import TEXT_LIMITS
from exams.markdown import render_exhibit, render_markdown, render_sources


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


def _room_models():
    """Attempt and Response by name: exams.models.attempts defines them and imports this module."""
    return apps.get_model("exams", "Attempt"), apps.get_model("exams", "Response")


class QuestionStatus(models.TextChoices):
    """Moodle's question status: a draft is being written and never reaches a learner."""

    DRAFT = "draft", "Draft"
    READY = "ready", "Ready"


# What a learner may be given: a question that is ready and not retired. Every learner-facing
# read of questions goes through it (Question.objects.active(), or this condition through a
# relation), so a draft is never drawn, reviewed, bookmarked, counted or offered again.
LEARNER_QUESTIONS = Q(is_active=True, status=QuestionStatus.READY)


def learner_questions(prefix: str = "") -> Q:
    """LEARNER_QUESTIONS through a relation: learner_questions("question__")."""
    return Q(**{f"{prefix}is_active": True, f"{prefix}status": QuestionStatus.READY})


class QuestionQuerySet(models.QuerySet):
    def active(self):
        """The questions a learner may be given: ready and not retired (see LEARNER_QUESTIONS)."""
        return self.filter(LEARNER_QUESTIONS)

    def drafts(self):
        return self.filter(status=QuestionStatus.DRAFT)

    def in_finished_attempts(self):
        Attempt, _ = _room_models()
        return self.filter(
            responses__attempt__status__in=Attempt.FINISHED_STATUSES
        ).distinct()


class Difficulty(models.TextChoices):
    """The author's intended difficulty (docs/BANK_AUTHORING.md defines each level)."""

    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


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
    # Draft by default: a question made in the admin or by an import reaches learners only once
    # "Mark ready" (exams.bank.status) found it complete. The shipped bank loads as ready.
    status = models.CharField(
        max_length=5, choices=QuestionStatus.choices, default=QuestionStatus.DRAFT, db_default=QuestionStatus.DRAFT,
        help_text="Draft: being written, never shown to learners. Ready: drawn into attempts (while active).",
    )
    difficulty = models.CharField(
        max_length=6, choices=Difficulty.choices, default=Difficulty.MEDIUM, db_default=Difficulty.MEDIUM,
        help_text="Intended: easy = one step, recalling one fact; medium = one idea applied to a scenario; "
        "hard = weighing two or more constraints, or reading an exhibit.",
    )
    reviewed_on = models.DateField(
        null=True, blank=True,
        help_text="When a subject expert last checked this question against current documentation (not reset by edits).",
    )
    # Plain defaults rather than auto_now so fixtures may omit them.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ["exam", "domain__order", "id"]
        indexes = [
            models.Index(fields=["exam", "domain", "is_active"], name="question_draw_pool"),
            # The questions learners meet, by exam: the review outlook's join reads this, not the rows.
            models.Index(fields=["exam", "id"], condition=LEARNER_QUESTIONS, name="question_learner_by_exam"),
        ]
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
        Attempt, Response = _room_models()
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
        _, Response = _room_models()
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
        return render_exhibit(self.content.get("exhibit", ""), self.question_id) if self.content.get("exhibit") else ""

    @property
    def sources_html(self) -> str:
        return render_sources(self.content.get("sources", ""))

    def choice_text(self, choice_id: int) -> str:
        return self.content["choices"].get(str(choice_id), {}).get("text", "")

    def choice_feedback(self, choice_id: int) -> str:
        return self.content["choices"].get(str(choice_id), {}).get("feedback", "")


class ExhibitImage(models.Model):
    """An image a question's exhibit shows, ![alt](exhibit:<name>), kept in the database so
    every deployment serves the same bytes (see exams.bank.exhibits for what is accepted)."""

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
    # As many as the question's Choose N: on a "Choose 2" question a learner names both.
    choices = models.ManyToManyField(
        Choice, blank=True, related_name="disputes",
        help_text="The choices the learner believes are right (none: no opinion).",
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
