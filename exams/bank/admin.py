"""Django admin for instructors: exams and domains, the question bank, errata."""
from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.contrib.admin.widgets import AutocompleteSelect, RelatedFieldWidgetWrapper
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Case, Count, Exists, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_POST

from config.integrity import RaceSafeAdminMixin
from config.routers import statistics_reads
from exams.bank.admin_imports import QuestionImportExportMixin
from exams.bank.errata import regrade
from exams.bank import exhibits
from exams.bank.formats import exhibit_images
from exams.bank.status import question_lacks, questions_mark_ready, with_choices
from exams.bounds import MAX_CHOICES, MIN_CHOICES, TEXT_LIMITS
from exams.letters import choice_label
from exams.markdown import render_markdown
from exams.models import (
    Attempt,
    Choice,
    Dispute,
    Domain,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    Exam,
    ExamStatistic,
    ExhibitImage,
    ItemStatistic,
    LearnerAccommodation,
    MiskeyFlag,
    Question,
    QuestionKind,
    QuestionStatus,
)
from exams.statistics.formulas import (
    MIN_N_FOR_DISTRACTOR_VERDICT,
    MIN_N_FOR_ITEM_FIGURES,
    MIN_N_FOR_TEST_FIGURES,
    too_few_attempts,
)
from exams.statistics.tasks import REFRESH_JOB, statistics_refresh_request
from jobs.admin import show_outcome_with
from jobs.models import ACTIVE_STATUSES, Job, JobStatus
from jobs.services import JobAlreadyActive, job_enqueue, running_ahead, target_of

# What every "not computed yet" says instead of a shell command.
REFRESHED_WHEN = "Statistics are refreshed every night, after an import or a regrade, and by “Refresh statistics”."


def _live_forms(formset) -> list:
    """The inline forms that will exist after saving (filled in and not marked for deletion)."""
    return [
        form for form in formset.forms
        if hasattr(form, "cleaned_data") and form.cleaned_data and not form.cleaned_data.get("DELETE")
    ]


class DomainInlineFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        if any(self.errors):
            return
        live = _live_forms(self)
        total = sum(form.cleaned_data.get("weight") or 0 for form in live)
        if live and total != 100:
            raise ValidationError(f"Domain weights must add up to 100%; these add up to {total}%.")


class DomainInline(admin.StackedInline):
    model = Domain
    formset = DomainInlineFormSet
    extra = 0
    fields = ("name", "weight", "order")


def refresh_requested(job: Job) -> str:
    """What the instructor is told after asking for a refresh: where their request stands."""
    if job.status == JobStatus.QUEUED:
        ahead = running_ahead(job)
        where = f"queued behind job #{ahead.pk}, which is running" if ahead else "queued"
        return f"{job.title}: {where}. It recomputes from every finished mock, so a refresh asked for meanwhile is part of it."
    return f"{job.title}: {job.get_status_display().lower()}."


def refresh_statistics_of(modeladmin, request, exam: Exam) -> Job:
    """Ask for a refresh of the exam's statistics and say so, with a link to its progress."""
    job = statistics_refresh_request(exam=exam, user=request.user)
    url = reverse("admin:jobs_job_change", args=[job.pk])
    modeladmin.message_user(request, format_html('{} <a href="{}">See its progress</a>.', refresh_requested(job), url), messages.INFO)
    return job


@admin.action(description="Refresh statistics of the selected exams (in the background)", permissions=["change"])
def refresh_statistics_in_background(modeladmin, request, queryset) -> None:
    for exam in queryset:
        refresh_statistics_of(modeladmin, request, exam)


def latest_refresh(exam_ids) -> Job | None:
    """The newest refresh job still queued or running for these exams, if any (one query)."""
    return (
        Job.objects.active().filter(kind=REFRESH_JOB, target__in=[f"exams.exam:{pk}" for pk in exam_ids])
        .defer("payload").order_by("-created_at", "-id").first()
    )


@admin.register(Exam)
class ExamAdmin(admin.ModelAdmin):
    list_display = ("code", "title", "question_count", "time_limit_minutes", "passing_score", "is_published", "bank_size")
    list_filter = ("is_published",)
    search_fields = ("code", "title")
    inlines = [DomainInline]
    readonly_fields = ("test_statistics",)
    actions = [refresh_statistics_in_background]
    change_form_template = "admin/exams/exam/change_form.html"

    def get_urls(self):
        return [
            path(
                "refresh-statistics/", self.admin_site.admin_view(require_POST(self.refresh_statistics_view)),
                name="exams_exam_refresh_statistics",
            ),
            *super().get_urls(),
        ]

    def refresh_statistics_view(self, request) -> HttpResponse:
        """The "Refresh statistics" button (the exam's page, the question list): queue a refresh, show its progress."""
        raw = request.POST.get("exam", "")
        exam = Exam.objects.filter(pk=int(raw)).first() if raw.isdigit() else None
        if exam is None:
            self.message_user(request, "Choose an exam whose statistics to refresh; nothing was started.", messages.ERROR)
            return redirect("admin:exams_question_changelist")
        if not self.has_change_permission(request, exam):
            raise PermissionDenied
        job = refresh_statistics_of(self, request, exam)
        return redirect("admin:jobs_job_change", job.pk)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        if str(object_id).isdigit() and self.has_change_permission(request):
            extra_context["refresh_exams"] = list(Exam.objects.filter(pk=int(object_id)).values_list("pk", "code"))
            extra_context["refresh_job"] = latest_refresh([int(object_id)])
        return super().change_view(request, object_id, form_url, extra_context)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            bank=Count("questions", filter=Q(questions__is_active=True))
        )

    @admin.display(description="Test statistics (finished mocks)")
    def test_statistics(self, exam: Exam) -> str:
        if not exam.pk:
            return "—"
        # Statistics read the replica when one is configured (config.routers).
        with statistics_reads():
            rows = list(ExamStatistic.objects.filter(exam=exam).order_by("first_mock_only"))
        if not rows:
            return f"Not computed yet. {REFRESHED_WHEN}"
        for row in rows:
            row.too_few = too_few_attempts(row.attempts, minimum=MIN_N_FOR_TEST_FIGURES)
        return render_to_string("admin/exams/exam/test_statistics.html", {"rows": rows, "minimum": MIN_N_FOR_TEST_FIGURES})

    @admin.display(description="Active questions", ordering="bank")
    def bank_size(self, exam: Exam) -> int:
        return exam.bank

    def has_delete_permission(self, request, obj=None):
        # Domains, questions and attempts protect their exam: offer Delete only for an empty one.
        if obj is not None and (obj.domains.exists() or obj.questions.exists() or obj.attempts.exists()):
            return False
        return super().has_delete_permission(request, obj)


class ChoiceInlineFormSet(forms.BaseInlineFormSet):
    """Checks the key against the question's kind, and freezes it once learners were graded on it."""

    def add_fields(self, form, index):
        super().add_fields(form, index)
        # A tabular row names its inputs only by the column headers: each gets its own name.
        which = f"choice {form.instance.label}" if form.instance.pk else "the new choice"
        for name, field in form.fields.items():
            label = "Delete" if name == "DELETE" else str(field.label or name.replace("_", " "))
            field.widget.attrs["aria-label"] = f"{label[:1].upper()}{label[1:]} of {which}"

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        live = _live_forms(self)
        kind = self.instance.kind
        choose = self.instance.choose
        keys = [form for form in live if form.cleaned_data.get("is_correct")]
        if len(live) < MIN_CHOICES:
            raise ValidationError("A question needs at least two choices.")
        if len(live) > MAX_CHOICES:
            raise ValidationError(f"A question has at most {MAX_CHOICES} choices; this one has {len(live)}.")
        if kind == QuestionKind.SINGLE and len(keys) != 1:
            raise ValidationError(
                f"A single-answer question needs exactly one correct choice; {len(keys)} are marked correct."
            )
        if kind == QuestionKind.MULTIPLE and len(keys) != choose:
            raise ValidationError(
                f"This multiple-answer question says choose {choose}, so exactly {choose} choices must be "
                f"marked correct; {len(keys)} are."
            )
        labels = [form.cleaned_data.get("label") for form in live]
        if len(set(labels)) != len(labels):
            raise ValidationError("Each choice needs its own label (A, B, C…).")
        if self.instance.pk and self.instance.is_in_finished_attempt():
            before = set(Choice.objects.filter(question=self.instance, is_correct=True).values_list("pk", flat=True))
            after = {form.instance.pk for form in keys}
            removed = {form.instance.pk for form in self.forms if form.cleaned_data.get("DELETE") and form.instance.pk}
            if before != after or removed:
                raise ValidationError(
                    "Learners have finished attempts with this question, so its key cannot be changed or its "
                    "choices deleted here. Open an erratum on it (Errata, below) and confirm it with a policy: "
                    "that corrects the key and regrades every past attempt."
                )


class ChoiceInline(admin.TabularInline):
    """One compact row per choice (a stacked inline took about 460 px each)."""

    model = Choice
    formset = ChoiceInlineFormSet
    extra = 0
    min_num = MIN_CHOICES
    max_num = MAX_CHOICES
    fields = ("order", "label", "text", "is_correct", "feedback")

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name in ("text", "feedback"):
            field.widget = forms.Textarea(attrs={"rows": 2, "cols": 36})
        elif db_field.name in ("order", "label"):
            field.widget.attrs["class"] = "narrow-number"
        return field


class ErratumInlineFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        if any(self.errors):
            return
        # Every erratum listed here is open (decided ones are not shown), so two live forms
        # would be two open errata; each form alone passes Erratum.clean.
        if len([form for form in _live_forms(self) if form.instance.status == ErratumStatus.REPORTED]) > 1:
            raise ValidationError(Erratum.ONE_OPEN, code="one_open")


class ErratumInline(admin.StackedInline):
    """Errata are opened here; confirming or rejecting one happens on its triage page, which regrades."""

    model = Erratum
    formset = ErratumInlineFormSet
    extra = 0
    fields = ("status", "published_key", "note", "source", "policy", "reported_at", "decided_at", "triage")
    readonly_fields = ("status", "policy", "decided_at", "triage")
    filter_horizontal = ()
    show_change_link = True
    # An open erratum gathers learners' reports: it is rejected with a note, never deleted.
    can_delete = False

    def get_queryset(self, request):
        # Decided errata are history, seen (read-only) on their triage page, not edited here.
        return super().get_queryset(request).filter(status=ErratumStatus.REPORTED)

    @admin.display(description="Decision")
    def triage(self, erratum: Erratum) -> str:
        if not erratum.pk:
            return "Save first; then confirm or reject it on its triage page."
        url = reverse("admin:exams_erratum_decide", args=[erratum.pk])
        label = "Confirm or reject…" if erratum.status == ErratumStatus.REPORTED else "See the decision"
        return format_html('<a href="{}">{}</a>', url, label)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "published_key":
            question_id = request.resolver_match.kwargs.get("object_id")
            kwargs["queryset"] = Choice.objects.filter(question_id=question_id) if question_id else Choice.objects.none()
            kwargs["widget"] = forms.CheckboxSelectMultiple
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        if db_field.name == "published_key":
            field.label_from_instance = lambda choice: f"{choice.label}. {choice.text}"
        return field


class OpenErratumFilter(admin.SimpleListFilter):
    title = "open erratum"
    parameter_name = "open_erratum"

    def lookups(self, request, model_admin):
        return [("yes", "Has an open erratum"), ("no", "No open erratum")]

    def queryset(self, request, queryset):
        open_errata = Erratum.objects.filter(question=OuterRef("pk"), status=ErratumStatus.REPORTED)
        if self.value() == "yes":
            return queryset.filter(Exists(open_errata))
        if self.value() == "no":
            return queryset.exclude(Exists(open_errata))
        return queryset


class TopicFilter(admin.AllValuesFieldListFilter):
    """Topics as written, and "No topic" for the blank one (an empty link names nothing)."""

    def choices(self, changelist):
        for choice in super().choices(changelist):
            yield {**choice, "display": "No topic"} if choice["display"] == "" else choice


class LikelyMiskeyedFilter(admin.SimpleListFilter):
    """Reads the stored item statistics (exams.statistics.tasks refreshes them), never recomputes them."""

    title = "likely mis-keyed"
    parameter_name = "miskeyed"

    def lookups(self, request, model_admin):
        return [("yes", "Likely or very likely mis-keyed"), ("very", "Very likely mis-keyed")]

    def queryset(self, request, queryset):
        if self.value() not in ("yes", "very"):
            return queryset
        flagged = ItemStatistic.objects.filter(question=OuterRef("pk"), first_mock_only=False).exclude(miskey="")
        if self.value() == "very":
            flagged = flagged.filter(miskey=MiskeyFlag.VERY_LIKELY)
        return queryset.filter(Exists(flagged))


# "Not reviewed in 12 months": never reviewed, or last reviewed more than a year ago.
REVIEW_DUE_DAYS = 365


class ReviewDueFilter(admin.SimpleListFilter):
    """Questions due a review against current documentation (Question.reviewed_on)."""

    title = "review"
    parameter_name = "review"

    def lookups(self, request, model_admin):
        return [("due", "Not reviewed in 12 months"), ("recent", "Reviewed in the last 12 months")]

    def queryset(self, request, queryset):
        cutoff = timezone.localdate() - timedelta(days=REVIEW_DUE_DAYS)
        if self.value() == "due":
            return queryset.filter(Q(reviewed_on__isnull=True) | Q(reviewed_on__lt=cutoff))
        if self.value() == "recent":
            return queryset.filter(reviewed_on__gte=cutoff)
        return queryset


class QuestionChangeList(ChangeList):
    """The question list, with the stored item statistics of the questions on this page (one query)."""

    def get_results(self, request):
        super().get_results(request)
        # Item statistics read the replica when one is configured (config.routers); the
        # questions themselves came from the primary.
        with statistics_reads():
            statistics = {
                row.question_id: row
                for row in ItemStatistic.objects.filter(question__in=[q.pk for q in self.result_list], first_mock_only=False)
            }
        for question in self.result_list:
            question.item_statistics = statistics.get(question.pk)


SEARCH_WORDS = 10
# "Drafts to review" shows this many drafts (it says so when there are more).
DRAFTS_SHOWN = 200
# Below this many finished mocks an item statistic is noise: the list says "too few
# attempts (n = 5)" in the n column and shows no figures (the mis-key rule's threshold too).
STATISTICS_MIN_N = MIN_N_FOR_ITEM_FIGURES


class QuestionAdminForm(forms.ModelForm):
    exhibit_upload = forms.FileField(
        required=False, label="Exhibit image",
        help_text=f"PNG, JPEG or WebP of at most {exhibits.MAX_BYTES // 1000} KB (never SVG). Saving puts this image in "
        "the exhibit above, in place of what it held; the file name is kept in lower case.",
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp"}),
    )
    exhibit_alt = forms.CharField(
        required=False, max_length=200, label="Image description",
        help_text="Required with an image: what it shows, read to learners who cannot see it.",
    )

    class Meta:
        model = Question
        fields = "__all__"

    def clean_exhibit_upload(self):
        """The upload's bytes checked as the importers check them: sniffed, bounded, one name one image."""
        upload = self.cleaned_data.get("exhibit_upload")
        self.exhibit_image = None
        if not upload:
            return upload
        if upload.size > exhibits.MAX_BYTES:
            raise forms.ValidationError(
                f"The image is {upload.size:,} bytes; at most {exhibits.MAX_BYTES:,} are allowed. Make it smaller."
            )
        data = upload.read()
        name = exhibits.upload_name(upload.name, data)
        try:
            content_type, digest = exhibits.checked_image(name, data)
        except exhibits.ExhibitError:
            raise forms.ValidationError(
                f"{upload.name!r} is not a PNG, JPEG or WebP image (SVG and other types are not accepted)."
            ) from None
        held = ExhibitImage.objects.filter(name=name).values_list("digest", flat=True).first()
        if held is not None and held != digest:
            raise forms.ValidationError(
                f"The bank already holds a different image named {name!r}: rename the file and upload it again."
            )
        self.exhibit_image = {"name": name, "data": data, "content_type": content_type, "digest": digest}
        return upload

    def clean(self):
        cleaned = super().clean()
        kind, choose = cleaned.get("kind"), cleaned.get("choose")
        if kind == QuestionKind.SINGLE and choose not in (None, 1):
            self.add_error("choose", "A single-answer question chooses exactly 1.")
        if kind == QuestionKind.MULTIPLE and choose is not None and choose < 2:
            self.add_error("choose", "A multiple-answer question chooses at least 2.")
        exam, domain = cleaned.get("exam"), cleaned.get("domain")
        if exam and domain and domain.exam_id != exam.pk:
            self.add_error("domain", f"{domain} is a domain of another exam, not {exam.code}.")
        voided = self.instance.pk and Erratum.objects.filter(
            question=self.instance, status=ErratumStatus.CONFIRMED, policy=ErratumPolicy.VOID
        ).exists()
        if voided and cleaned.get("is_active"):
            self.add_error("is_active", "This question was voided by a confirmed erratum; it stays retired. Write a new question instead.")
        image = getattr(self, "exhibit_image", None)
        alt = " ".join(cleaned.get("exhibit_alt", "").replace("[", "(").replace("]", ")").split())
        if image and not alt:
            self.add_error("exhibit_alt", "Describe the image: learners who cannot see it hear this instead.")
        elif image:
            # The instance is built from cleaned_data after clean() (_post_clean).
            cleaned["exhibit"] = f"![{alt}](exhibit:{image['name']})"
        return cleaned

    def clean_exhibit(self) -> str:
        exhibit = self.cleaned_data.get("exhibit", "")
        names = exhibit_images(exhibit)
        known = set(ExhibitImage.objects.filter(name__in=names).values_list("name", flat=True))
        missing = [name for name in names if name not in known]
        if missing:
            raise forms.ValidationError(
                f"No exhibit image named {', '.join(missing)} is in the bank. Upload it below (Exhibit image), "
                "or bring it with the shipped bank (load_bank) or a certprep JSON or Moodle XML import."
            )
        return exhibit


@admin.register(Question)
class QuestionAdmin(RaceSafeAdminMixin, QuestionImportExportMixin, admin.ModelAdmin):
    form = QuestionAdminForm
    list_display = (
        "title", "exam_code", "domain", "topic_name", "kind_short", "active", "open_errata", "times_used",
        "statistics_n", "facility", "discrimination", "point_biserial", "miskeyed",
    )
    list_filter = (
        "exam", "domain", ("topic", TopicFilter), "status", "kind", "difficulty", ReviewDueFilter, "is_active",
        OpenErratumFilter, LikelyMiskeyedFilter,
    )
    actions = [*QuestionImportExportMixin.actions, "mark_selected_ready", "mark_reviewed_today"]
    change_form_template = "admin/exams/question/change_form.html"
    list_select_related = ("exam", "domain")
    search_fields = ("title", "topic", "stem", "choices__text")
    search_help_text = f"Searches titles, topics, stems and choices; the first {SEARCH_WORDS} words are used."

    def get_search_results(self, request, queryset, search_term):
        # Each word adds an OR of four joined LIKEs: 1,500 words took 24 s. Ten find a question.
        words = search_term.split()
        if len(words) > SEARCH_WORDS:
            messages.info(request, f"Only the first {SEARCH_WORDS} of the {len(words)} words were searched.")
            search_term = " ".join(words[:SEARCH_WORDS])
        return super().get_search_results(request, queryset, search_term)
    # reviewed_on is set by the "Mark reviewed today" action (and the shipped bank), never by
    # an edit: the form shows it and does not post it back.
    # status changes only through "Mark ready", which checks the question first: a new
    # question is a draft, and an edit keeps a ready question ready.
    readonly_fields = ("status", "created_at", "updated_at", "reviewed_on", "preview", "statistics_panel")
    fieldsets = [
        (None, {"fields": (
            "exam", "domain", "topic", "title", "exhibit", "exhibit_upload", "exhibit_alt", "stem", "preview", "explanation",
            "sources",
        )}),
        ("Answering", {"fields": ("kind", "choose", "keep_order", "is_active", "exclusion_group", "idnumber")}),
        ("Review", {"fields": ("status", "difficulty", "reviewed_on")}),
        ("Item statistics (finished mocks)", {"fields": ("statistics_panel",)}),
        ("History", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    ]
    inlines = [ChoiceInline, ErratumInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            open_erratum_count=Count("errata", filter=Q(errata__status=ErratumStatus.REPORTED), distinct=True),
            response_count=Count("responses", distinct=True),
        )

    # Short headers and values, so every column fits beside the filters at 1,280 px.
    @admin.display(description="Kind", ordering="kind")
    def kind_short(self, question: Question) -> str:
        return "single" if question.kind == QuestionKind.SINGLE else f"choose {question.choose}"

    @admin.display(description="Active", boolean=True, ordering="is_active")
    def active(self, question: Question) -> bool:
        return question.is_active

    @admin.display(description="Open errata", ordering="open_erratum_count")
    def open_errata(self, question: Question) -> int:
        return question.open_erratum_count

    @admin.display(description="Drawn", ordering="response_count")
    def times_used(self, question: Question) -> int:
        return question.response_count

    def get_changelist(self, request, **kwargs):
        return QuestionChangeList

    @admin.action(description="Mark selected ready", permissions=["change"])
    def mark_selected_ready(self, request, queryset):
        self._report_marked(request, questions_mark_ready(question_ids=queryset.values_list("pk", flat=True)))

    def _report_marked(self, request, outcome) -> None:
        headline, reasons = outcome.messages()
        level = messages.WARNING if outcome.refused else messages.SUCCESS
        self.message_user(request, headline, level)
        for reason in reasons:
            self.message_user(request, reason, messages.WARNING)

    def get_urls(self):
        return [
            path("drafts/", self.admin_site.admin_view(self.drafts_view), name="exams_question_drafts"),
            *super().get_urls(),
        ]

    def drafts_view(self, request):
        """Drafts to review: every draft with what it lacks; the complete ones can be marked ready here."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        can_change = self.has_change_permission(request)
        if request.method == "POST":
            if not can_change:
                raise PermissionDenied
            chosen = [value for value in request.POST.getlist("question") if value.isdigit() and len(value) < 12]
            self._report_marked(request, questions_mark_ready(question_ids=[int(value) for value in chosen]))
            return redirect("admin:exams_question_drafts")
        drafts = list(
            with_choices(Question.objects.drafts().select_related("exam", "domain").order_by("exam__code", "domain__order", "pk"))[
                :DRAFTS_SHOWN
            ]
        )
        for question in drafts:
            question.lacks = question_lacks(question)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Drafts to review",
            "drafts": drafts,
            "shown": DRAFTS_SHOWN,
            "can_change": can_change,
        }
        return TemplateResponse(request, "admin/exams/question/drafts.html", context)

    def save_model(self, request, obj, form, change):
        image = getattr(form, "exhibit_image", None)
        if image:
            # Stored before the question that shows it; the same bytes under the same name are kept once.
            ExhibitImage.objects.get_or_create(name=image["name"], defaults={
                "data": image["data"], "content_type": image["content_type"], "digest": image["digest"],
            })
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        if "_mark_ready" in request.POST:
            return self._save_and_mark_ready(request, obj)
        return super().response_add(request, obj, post_url_continue)

    def response_change(self, request, obj):
        if "_mark_ready" in request.POST:
            return self._save_and_mark_ready(request, obj)
        return super().response_change(request, obj)

    def _save_and_mark_ready(self, request, obj):
        """"Save and mark ready": the edits are saved either way; the status changes only if nothing is missing."""
        self.message_user(request, f"“{obj}” was saved.", messages.SUCCESS)
        self._report_marked(request, questions_mark_ready(question_ids=[obj.pk]))
        return redirect("admin:exams_question_change", obj.pk)

    @admin.action(description="Mark reviewed today", permissions=["change"])
    def mark_reviewed_today(self, request, queryset):
        # A plain UPDATE: the review date is not content, so no new version, no updated_at.
        today = timezone.localdate()
        count = queryset.update(reviewed_on=today)
        self.message_user(request, f"Marked {count} question{'s' if count != 1 else ''} reviewed on {today:%Y-%m-%d}.")

    def _stat(self, question: Question):
        """The question's statistics when enough mocks hold it to mean anything (n ≥ 30), else None."""
        stats = getattr(question, "item_statistics", None)
        return stats if stats is not None and stats.n >= STATISTICS_MIN_N else None

    @admin.display(description="Exam", ordering="exam__code")
    def exam_code(self, question: Question) -> str:
        return question.exam.code

    @admin.display(description="n")
    def statistics_n(self, question: Question) -> str:
        stats = getattr(question, "item_statistics", None)
        if stats is None:
            return "—"  # not computed yet (the page says so)
        return too_few_attempts(stats.n, minimum=STATISTICS_MIN_N) or f"{stats.n:,}"

    def changelist_view(self, request, extra_context=None):
        # Say how old the statistics on the page are: they are stored by a refresh, not live.
        with statistics_reads():
            latest = ItemStatistic.objects.order_by("-computed_at").values_list("computed_at", flat=True).first()
        if latest is None:
            messages.info(request, f"Item statistics have not been computed yet. {REFRESHED_WHEN}")
        else:
            messages.info(request, f"Item statistics as computed {timezone.localtime(latest):%Y-%m-%d %H:%M}. {REFRESHED_WHEN}")
        exams = list(Exam.objects.order_by("code").values_list("pk", "code"))
        chosen = request.GET.get("exam__id__exact", "")
        if chosen.isdigit() and int(chosen) in dict(exams):
            exams = [(int(chosen), dict(exams)[int(chosen)])]
        extra_context = {
            **(extra_context or {}),
            "refresh_exams": exams if self.admin_site.get_model_admin(Exam).has_change_permission(request) else [],
            "refresh_job": latest_refresh([pk for pk, _ in exams]),
            "drafts_url": reverse("admin:exams_question_drafts"),
        }
        return super().changelist_view(request, extra_context)

    @admin.display(description="p · b")
    def facility(self, question: Question) -> str:
        """Facility over mocks, and the Rasch difficulty (logits) over every mode's first answers."""
        stats = self._stat(question)
        facility = f"{stats.facility:.2f}" if stats and stats.facility is not None else "—"
        row = getattr(question, "item_statistics", None)
        if row is None or row.rasch_difficulty is None or (row.rasch_n or 0) < STATISTICS_MIN_N:
            return facility
        return f"{facility} · {row.rasch_difficulty:+.1f}±{row.rasch_se:.1f}"

    @admin.display(description="D")
    def discrimination(self, question: Question) -> str:
        stats = self._stat(question)
        return f"{stats.d_upper_lower:+.2f}" if stats and stats.d_upper_lower is not None else "—"

    @admin.display(description="r (rest)")
    def point_biserial(self, question: Question) -> str:
        stats = self._stat(question)
        return f"{stats.discrimination_index:+.2f}" if stats and stats.discrimination_index is not None else "—"

    @admin.display(description="Mis-key flag")
    def miskeyed(self, question: Question) -> str:
        stats = self._stat(question)
        if not stats or not stats.miskey:
            return "—"
        return f"{stats.miskey} (n = {stats.n}{', few attempts' if stats.miskey_caveat else ''})"

    def has_delete_permission(self, request, obj=None):
        # Choices and answers protect a question: it is retired (Active unticked), never deleted.
        return False

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if isinstance(getattr(field, "widget", None), RelatedFieldWidgetWrapper):
            # An exam or domain with questions cannot be deleted: offer no delete beside it.
            field.widget.can_delete_related = False
        return field

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "exam":
            only = list(Exam.objects.values_list("pk", flat=True)[:2])
            if len(only) == 1:
                field.initial = only[0]
        return field

    @admin.display(description="Item statistics")
    def statistics_panel(self, question: Question) -> str:
        if not question.pk:
            return "—"
        with statistics_reads():
            rows = {row.first_mock_only: row for row in ItemStatistic.objects.filter(question=question)}
        if not rows:
            return f"Not computed yet. {REFRESHED_WHEN}"
        for row in rows.values():
            row.too_few = too_few_attempts(row.n, minimum=MIN_N_FOR_ITEM_FIGURES)
            row.rasch_too_few = too_few_attempts(row.rasch_n or 0, minimum=MIN_N_FOR_ITEM_FIGURES)
            row.no_distractor_verdict = too_few_attempts(row.n, minimum=MIN_N_FOR_DISTRACTOR_VERDICT)
        variants = [(label, rows[key]) for key, label in ((False, "All"), (True, "Each learner's first")) if key in rows]
        return render_to_string(
            "admin/exams/question/statistics_panel.html",
            {"stats": rows.get(False), "first": rows.get(True), "variants": variants, "minimum": MIN_N_FOR_ITEM_FIGURES},
        )

    @admin.display(description="Stem as learners see it")
    def preview(self, question: Question) -> str:
        if not question.pk:
            return "—"
        exhibit = render_markdown(question.exhibit, exhibits_of=question.pk) if question.exhibit else ""
        return format_html('<div class="stem-preview">{}{}</div>', exhibit, question.stem_html)

    @admin.display(description="topic", ordering="topic")
    def topic_name(self, question: Question) -> str:
        return question.topic or "No topic"


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("confirm", "Confirm"), ("reject", "Reject")], widget=forms.RadioSelect)
    policy = forms.ChoiceField(
        choices=ErratumPolicy.choices, required=False, widget=forms.RadioSelect,
        help_text="Credit either key: attempts finished before today keep credit for the published key too.",
    )
    corrected_key = forms.ModelMultipleChoiceField(
        queryset=Choice.objects.none(), required=False, widget=forms.CheckboxSelectMultiple,
        help_text="The choices that are right. For a voided item this may stay as it is.",
    )
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False,
        help_text="Confirm: shown to learners beside the corrected key. Reject: why, for the record.",
    )
    explanation = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}), required=False, max_length=TEXT_LIMITS["explanation"],
        label="Corrected explanation",
        help_text="Markdown. Confirming saves it, and the feedback below, as a new version of the question; "
        "past results show it beside the correction, with the text as shown in their attempt one click away.",
    )

    def __init__(self, *args, question: Question, choices: list[Choice], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["corrected_key"].queryset = question.choices.order_by("order", "pk")
        # The whole text, not Choice.__str__'s first 60 characters: the key is chosen by it.
        self.fields["corrected_key"].label_from_instance = lambda choice: f"{choice.label}. {choice.text}"
        self.fields["explanation"].initial = question.explanation
        self.choices = choices
        for choice in choices:
            self.fields[f"feedback_{choice.pk}"] = forms.CharField(
                widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=TEXT_LIMITS["feedback"],
                label=f"Feedback on {choice.label}", initial=choice.feedback,
                help_text=f"{choice.label}. {choice.text}",
            )

    def feedback(self) -> dict[int, str]:
        return {choice.pk: self.cleaned_data.get(f"feedback_{choice.pk}", "") for choice in self.choices}

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("decision") == "confirm" and not cleaned.get("policy"):
            self.add_error("policy", "Choose how past attempts are regraded.")
        if cleaned.get("decision") == "reject" and not (cleaned.get("note") or "").strip():
            self.add_error("note", "Say why the reports are rejected.")
        return cleaned


class ErratumStatusFilter(admin.SimpleListFilter):
    """Open errata by default: the queue is what needs deciding; "All" shows the history too."""

    title = "status"
    parameter_name = "status"
    ALL = "all"

    def lookups(self, request, model_admin):
        return [*ErratumStatus.choices, (self.ALL, "All")]

    def value(self):
        return super().value() or ErratumStatus.REPORTED

    def queryset(self, request, queryset):
        value = self.value()
        if value == self.ALL:
            return queryset
        if value not in ErratumStatus.values:
            return queryset.none()
        return queryset.filter(status=value)

    def choices(self, changelist):
        # Django's own "All" would drop the parameter, which here means open.
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == str(lookup),
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }


class QuestionAutocomplete(AutocompleteSelect):
    """Django's autocomplete select, which re-renders a refused form without looking up a
    posted value that is not an id (Django's own queries it as one: "1e309" raised)."""

    def optgroups(self, name, value, attr=None):
        pk = self.field.remote_field.model._meta.pk

        def is_id(candidate) -> bool:
            try:
                pk.to_python(candidate)
            except ValidationError:
                return False
            return True

        return super().optgroups(name, [candidate for candidate in value if is_id(candidate)], attr)


def decided_list() -> HttpResponse:
    """The errata list after a decision: all of them, so the one just decided is there and counted.

    The default list holds open errata only, so it said "0 errata" (and "0 results (1
    total)", whose link led back to the same empty list) once the last one was decided.
    """
    return HttpResponseRedirect(f"{reverse('admin:exams_erratum_changelist')}?{ErratumStatusFilter.parameter_name}={ErratumStatusFilter.ALL}")


@admin.register(Erratum)
class ErratumAdmin(RaceSafeAdminMixin, admin.ModelAdmin):
    """The triage queue: open errata first, the most disputed and newest on top."""

    # Triage first, so it is one click from each row at any width.
    list_display = ("decide_link", "question", "status", "dispute_count", "reported_at", "source", "policy")
    list_display_links = ("question",)
    list_filter = (ErratumStatusFilter, "source", "policy")
    list_select_related = ("question",)
    search_fields = ("question__title", "note", "disputes__reason")
    readonly_fields = ("status", "policy", "decided_at", "decided_by", "decision_note")
    autocomplete_fields = ("question",)
    fields = ("question", "published_key", "note", "source", "status", "policy", "reported_at", "decided_at", "decided_by", "decision_note")

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.status != ErratumStatus.REPORTED:
            # A decision is history: learners' scores were regraded by it.
            return self.fields
        return self.readonly_fields

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(disputes_total=Count("disputes", distinct=True))

    def get_search_results(self, request, queryset, search_term):
        """Each word (the first 10) in the question's title, the note or a report's reason.

        The reasons are matched with EXISTS, not Django's join: a join through the many
        disputes makes the admin add DISTINCT, which PostgreSQL refuses beside this queue's
        expression ordering (a 500 the fuzzer found on ?q=0).
        """
        from django.utils.text import smart_split, unescape_string_literal

        for word in list(smart_split(search_term))[:10]:
            if word[:1] in ('"', "'") and word[-1:] == word[:1] and len(word) > 1:
                word = unescape_string_literal(word)
            queryset = queryset.filter(
                Q(question__title__icontains=word) | Q(note__icontains=word)
                | Exists(Dispute.objects.filter(erratum=OuterRef("pk"), reason__icontains=word))
            )
        return queryset, False

    def get_ordering(self, request):
        # Expressions, not annotation names: other admins order their erratum choices with
        # this too (the Dispute pages' select), on a queryset without the annotations.
        return [
            Case(When(status=ErratumStatus.REPORTED, then=Value(0)), default=Value(1)).asc(),
            Coalesce(Subquery(
                Dispute.objects.filter(erratum=OuterRef("pk")).order_by().values("erratum").annotate(n=Count("pk")).values("n")
            ), 0).desc(),
            "-reported_at",
        ]

    @admin.display(description="Reports", ordering="disputes_total")
    def dispute_count(self, erratum: Erratum) -> int:
        return erratum.disputes_total

    def has_delete_permission(self, request, obj=None):
        # Decided errata are history (their regrades protect them); open ones are rejected with a note.
        return False

    @admin.display(description="Decide")
    def decide_link(self, erratum: Erratum) -> str:
        label = "Triage" if erratum.status == ErratumStatus.REPORTED else "Decision"
        return format_html('<a href="{}">{}</a>', reverse("admin:exams_erratum_decide", args=[erratum.pk]), label)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "question":
            kwargs["widget"] = QuestionAutocomplete(db_field, self.admin_site, using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "published_key":
            kwargs["widget"] = forms.CheckboxSelectMultiple
            object_id = request.resolver_match.kwargs.get("object_id")
            kwargs["queryset"] = Choice.objects.filter(question__errata__pk=object_id) if object_id else Choice.objects.none()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_urls(self):
        return [
            path("<int:erratum_id>/decide/", self.admin_site.admin_view(self.decide_view), name="exams_erratum_decide"),
            *super().get_urls(),
        ]

    def decide_view(self, request, erratum_id: int):
        """Triage, then decide: a confirmation is previewed first (a dry run of the regrade), then confirmed."""
        erratum = get_object_or_404(Erratum.objects.select_related("question__exam", "question__domain"), pk=erratum_id)
        if not self.has_change_permission(request, erratum):
            raise PermissionDenied
        choices = list(erratum.question.choices.order_by("order", "pk"))
        form = DecisionForm(
            request.POST or None, question=erratum.question, choices=choices,
            initial={"corrected_key": [c.pk for c in choices if c.is_correct], "note": erratum.note},
        )
        preview = outdated = None
        holding = regrade.holding_attempts(erratum=erratum)
        if request.method == "POST" and erratum.status == ErratumStatus.REPORTED and "preview_job" in request.POST:
            return self._confirm_previewed_in_background(request, erratum=erratum, attempts=holding)
        if request.method == "POST" and erratum.status == ErratumStatus.REPORTED and form.is_valid():
            try:
                decided = self._decide(request, erratum=erratum, form=form, holding=holding)
                if not isinstance(decided, regrade.RegradeSummary):
                    return decided
                preview = decided
            except regrade.PreviewOutdated as changed:
                preview, outdated = changed.summary, True
            except ValueError as refused:
                form.add_error(None, str(refused))
        context = self._triage_context(request, erratum=erratum, choices=choices, form=form, holding=holding)
        context.update({
            "preview": preview,
            "preview_policy": ErratumPolicy(form.cleaned_data["policy"]).label if preview else "",
            "outdated": outdated,
        })
        return TemplateResponse(request, "admin/exams/erratum/decide.html", context)

    def _decide(self, request, *, erratum: Erratum, form, holding: int):
        """Reject, preview or confirm as the form says: a response to send, or the dry run's summary to show."""
        if form.cleaned_data["decision"] == "reject":
            regrade.erratum_reject(erratum=erratum, user=request.user, note=form.cleaned_data["note"])
            self.message_user(request, f"Rejected the reports on “{erratum.question}”. Nothing was regraded.")
            return decided_list()
        confirming = request.POST.get("action") == "confirm" and request.POST.get("preview")
        decision = {
            "policy": form.cleaned_data["policy"],
            "corrected_choice_ids": [c.pk for c in form.cleaned_data["corrected_key"]],
            "note": form.cleaned_data["note"] or None,
            "explanation": form.cleaned_data["explanation"], "feedback": form.feedback(),
        }
        if holding > regrade.BACKGROUND_REGRADE_OVER:
            return self._regrade_in_background(
                request, erratum=erratum, attempts=holding, decision=regrade.decision_json(**decision),
                expected=request.POST["preview"] if confirming else None,
            )
        outcome = regrade.erratum_confirm(
            erratum=erratum, **decision, user=request.user,
            dry_run=not confirming, expected=request.POST.get("preview") if confirming else None,
        )
        if outcome.event is None:
            return outcome.summary
        self.message_user(request, regrade.confirmed_message(outcome.summary), messages.SUCCESS)
        return decided_list()

    def _triage_context(self, request, *, erratum: Erratum, choices: list, form, holding: int) -> dict:
        """What the triage page shows besides the decision: tallies, reports, past regrades, jobs."""
        # Per choice, how many reports name it (a "Choose 2" report counts for both); a
        # report that names none is "no opinion".
        tallies = dict(erratum.disputes.values("choices").annotate(n=Count("pk")).values_list("choices", "n"))
        published = set(erratum.published_key.values_list("pk", flat=True))
        disputes = list(
            erratum.disputes.select_related("learner", "response").prefetch_related("choices").order_by("-updated_at")
        )
        return {
            **self.admin_site.each_context(request),
            "title": f"Triage: {erratum.question}",
            "opts": self.model._meta,
            "erratum": erratum,
            "question": erratum.question,
            "choices": [{"choice": c, "tally": tallies.get(c.pk, 0), "published": c.pk in published} for c in choices],
            "no_opinion": tallies.get(None, 0),
            "disputes": [{"dispute": d, **learner_letters(d, choices)} for d in disputes],
            "form": form,
            "decision_fields": [form[name] for name in ("decision", "policy", "corrected_key", "note")],
            "text_fields": [form["explanation"], *(form[f"feedback_{c.pk}"] for c in choices)],
            "regrades": erratum.regrades.order_by("-created_at"),
            "holding": holding,
            # This erratum's dry runs and regrades in the background, with their progress while they run.
            "jobs": Job.objects.filter(
                kind__in=[regrade.PREVIEW_JOB, regrade.REGRADE_JOB], target=target_of(erratum)
            ).defer("payload")[:3],
            "background_over": regrade.BACKGROUND_REGRADE_OVER if holding > regrade.BACKGROUND_REGRADE_OVER else None,
        }

    def _regrade_in_background(
        self, request, *, erratum: Erratum, attempts: int, decision: dict, expected: str | None
    ) -> HttpResponse:
        """Start the dry run (no `expected`) or the confirmation as a job, and show its page."""
        from exams.tasks import regrade_erratum

        kind = regrade.REGRADE_JOB if expected else regrade.PREVIEW_JOB
        what = "regrade" if expected else "dry run of the regrade"
        try:
            job = job_enqueue(
                kind=kind, target=target_of(erratum), task=regrade_erratum, total=len(regrade.REGRADE_STEPS),
                user=request.user,
                title=f"{what[:1].upper()}{what[1:]} of {attempts:,} attempts for the erratum on “{erratum.question}”"[:200],
                payload={"erratum": erratum.pk, "decision": decision, **({"expected": expected} if expected else {})},
            )
        except JobAlreadyActive as busy:
            self.message_user(request, f"Nothing was started: {busy}", messages.ERROR)
            return redirect("admin:jobs_job_change", busy.job.pk)
        then = "then its numbers, to confirm" if not expected else "nothing is saved unless it completes"
        self.message_user(
            request,
            f"{attempts:,} finished attempts hold this question, more than {regrade.BACKGROUND_REGRADE_OVER} to "
            f"regrade at once: the {what} runs in the background. This page shows its progress; {then}.",
            messages.INFO,
        )
        return redirect("admin:jobs_job_change", job.pk)

    def _confirm_previewed_in_background(self, request, *, erratum: Erratum, attempts: int) -> HttpResponse:
        """"Confirm and regrade" under a finished regrade job: confirm the decision it kept, checked against its numbers."""
        job_id = request.POST["preview_job"]
        job = (
            Job.objects.filter(
                pk=int(job_id), kind__in=[regrade.PREVIEW_JOB, regrade.REGRADE_JOB], target=target_of(erratum),
            ).exclude(status__in=ACTIVE_STATUSES).first()
            if job_id.isdigit() else None
        )
        kept = job.payload if job is not None else {}
        if not kept.get("digest") or "decision" not in kept:
            self.message_user(request, "That preview is not one of this erratum's: preview the decision again.", messages.ERROR)
            return redirect("admin:exams_erratum_decide", erratum.pk)
        # Finished attempts only grow in number, so a regrade previewed in the background is
        # confirmed there too; the job checks the numbers as the request would.
        return self._regrade_in_background(
            request, erratum=erratum, attempts=attempts, decision=kept["decision"], expected=kept["digest"],
        )


def regrade_job_outcome(job: Job) -> dict:
    """What a finished regrade job's page shows beneath it (jobs.admin.show_outcome_with)."""
    kept = job.payload or {}
    if "erratum" not in kept:
        return {}
    context = {"decide_url": reverse("admin:exams_erratum_decide", args=[kept["erratum"]])}
    if "summary" in kept:
        context |= {
            "preview": regrade.RegradeSummary.from_json(kept["summary"]),
            "preview_policy": ErratumPolicy(kept["decision"]["policy"]).label,
            "outdated": kept.get("outdated", False),
            "still_open": Erratum.objects.filter(pk=kept["erratum"], status=ErratumStatus.REPORTED).exists(),
        }
    return context


for _kind in (regrade.PREVIEW_JOB, regrade.REGRADE_JOB):
    show_outcome_with(_kind, "admin/exams/erratum/regrade_job_outcome.html", regrade_job_outcome)


def learner_letters(dispute: Dispute, choices: list[Choice]) -> dict:
    """The report in the learner's letters beside the authored ones, from the slot it came from.

    "their A = D": the learner saw the choices shuffled, so the letter they name is not the
    authored label. `named` lists each choice the report names, in the learner's order,
    with both letters and the whole text (never cut). Without a slot (a report older than
    the slot was recorded, and not derivable) only the authored letters are known.
    """
    by_id = {choice.pk: choice for choice in choices}
    order = dispute.response.choice_order if dispute.response is not None else None
    theirs = {choice_id: choice_label(index) for index, choice_id in enumerate(order or [])}
    named = sorted(dispute.choices.all(), key=lambda choice: (order.index(choice.pk) if choice.pk in (order or []) else 99, choice.order, choice.pk))
    named_rows = [{"theirs": theirs.get(choice.pk), "authored": choice.label, "text": choice.text} for choice in named]
    if not order:
        return {"named": named_rows, "their_letters": []}
    return {
        "named": named_rows,
        "their_letters": [
            {"theirs": theirs[choice_id], "authored": by_id[choice_id].label}
            for choice_id in order if choice_id in by_id
        ],
    }


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    """Read-only: attempts change only through the learner's own actions and regrading."""

    list_display = ("id", "user", "exam", "mode", "status", "score", "published_score", "passed", "started_at", "finished_at")
    list_filter = ("exam", "mode", "status", "passed")
    list_select_related = ("user", "exam")
    search_fields = ("user__username", "user__email")
    date_hierarchy = "started_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Dispute)
class DisputeAdmin(admin.ModelAdmin):
    """Learners' reports, read here or (better) on their erratum's triage page: learners file and edit them."""

    list_display = ("erratum", "learner", "believes_right", "created_at")
    list_select_related = ("erratum__question", "learner", "response")
    fields = ("erratum", "learner", "believes_right", "reason", "created_at", "updated_at")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("choices")

    @admin.display(description="Believes right")
    def believes_right(self, dispute: Dispute) -> str:
        """Both letters, the learner's and the authored, with each choice's whole text."""
        rows = learner_letters(dispute, list(dispute.choices.all()))["named"]
        if not rows:
            return "No opinion"
        return format_html_join(
            "; ", "{}{}: {}",
            ((f"their {row['theirs']} = " if row["theirs"] else "", f"authored {row['authored']}", row["text"]) for row in rows),
        )
    search_fields = ("reason", "learner__username", "erratum__question__title")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
admin.site.site_header = "certprep administration"
admin.site.site_title = "certprep admin"
admin.site.index_title = "Question bank and learners"
# The app list is one click away on Home and in the breadcrumbs; at 1,280 px its sidebar
# pushed the question list's statistics columns off-screen.
admin.site.enable_nav_sidebar = False


@admin.register(LearnerAccommodation)
class LearnerAccommodationAdmin(admin.ModelAdmin):
    """Extra time per learner; instructors manage it (it belongs to the exams app's permissions)."""

    list_display = ("user", "accommodation_factor")
    list_editable = ("accommodation_factor",)
    fields = ("user", "accommodation_factor")
    readonly_fields = ("user",)
    search_fields = ("user__username", "user__email")
    list_select_related = ("user",)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
