"""Django admin for instructors: exams and domains, the question bank, errata."""
from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, OuterRef, Q
from django.utils.html import format_html

from exams.admin_imports import QuestionImportExportMixin
from exams.models import (
    Attempt,
    Choice,
    Dispute,
    Domain,
    Erratum,
    ErratumStatus,
    Exam,
    Question,
    QuestionKind,
)


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


@admin.register(Exam)
class ExamAdmin(admin.ModelAdmin):
    list_display = ("code", "title", "question_count", "time_limit_minutes", "passing_score", "is_published", "bank_size")
    list_filter = ("is_published",)
    search_fields = ("code", "title")
    inlines = [DomainInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            bank=Count("questions", filter=Q(questions__is_active=True))
        )

    @admin.display(description="Active questions", ordering="bank")
    def bank_size(self, exam: Exam) -> int:
        return exam.bank


class ChoiceInlineFormSet(forms.BaseInlineFormSet):
    """Checks the key against the question's kind, and freezes it once learners were graded on it."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        live = _live_forms(self)
        kind = self.instance.kind
        choose = self.instance.choose
        keys = [form for form in live if form.cleaned_data.get("is_correct")]
        if len(live) < 2:
            raise ValidationError("A question needs at least two choices.")
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


class ChoiceInline(admin.StackedInline):
    model = Choice
    formset = ChoiceInlineFormSet
    extra = 0
    min_num = 2
    fields = ("order", "label", "text", "is_correct", "feedback")

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name in ("text", "feedback"):
            field.widget = forms.Textarea(attrs={"rows": 2, "cols": 40})
        return field


class ErratumInline(admin.StackedInline):
    model = Erratum
    extra = 0
    fields = ("status", "published_key", "note", "source", "policy", "reported_at", "decided_at")
    readonly_fields = ("decided_at",)
    filter_horizontal = ()
    show_change_link = True

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "published_key":
            question_id = request.resolver_match.kwargs.get("object_id")
            kwargs["queryset"] = Choice.objects.filter(question_id=question_id) if question_id else Choice.objects.none()
            kwargs["widget"] = forms.CheckboxSelectMultiple
        return super().formfield_for_manytomany(db_field, request, **kwargs)


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


class QuestionAdminForm(forms.ModelForm):
    class Meta:
        model = Question
        fields = "__all__"

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
        return cleaned


@admin.register(Question)
class QuestionAdmin(QuestionImportExportMixin, admin.ModelAdmin):
    form = QuestionAdminForm
    list_display = ("title", "exam", "domain", "kind", "is_active", "open_errata", "times_used", "updated_at")
    list_filter = ("exam", "domain", "kind", "is_active", OpenErratumFilter)
    list_select_related = ("exam", "domain")
    search_fields = ("title", "stem", "choices__text")
    readonly_fields = ("created_at", "updated_at", "preview")
    fieldsets = [
        (None, {"fields": ("exam", "domain", "title", "stem", "preview", "explanation")}),
        ("Answering", {"fields": ("kind", "choose", "keep_order", "is_active")}),
        ("History", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    ]
    inlines = [ChoiceInline, ErratumInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            open_erratum_count=Count("errata", filter=Q(errata__status=ErratumStatus.REPORTED), distinct=True),
            response_count=Count("responses", distinct=True),
        )

    @admin.display(description="Open errata", ordering="open_erratum_count")
    def open_errata(self, question: Question) -> int:
        return question.open_erratum_count

    @admin.display(description="Times drawn", ordering="response_count")
    def times_used(self, question: Question) -> int:
        return question.response_count

    @admin.display(description="Stem as learners see it")
    def preview(self, question: Question) -> str:
        return format_html('<div class="stem-preview">{}</div>', question.stem_html) if question.pk else "—"


@admin.register(Erratum)
class ErratumAdmin(admin.ModelAdmin):
    list_display = ("question", "status", "source", "policy", "reported_at", "dispute_count")
    list_filter = ("status", "source", "policy")
    list_select_related = ("question",)
    search_fields = ("question__title", "note")
    readonly_fields = ("decided_at",)
    autocomplete_fields = ("question",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(disputes_total=Count("disputes"))

    @admin.display(description="Reports", ordering="disputes_total")
    def dispute_count(self, erratum: Erratum) -> int:
        return erratum.disputes_total

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "published_key":
            kwargs["widget"] = forms.CheckboxSelectMultiple
            object_id = request.resolver_match.kwargs.get("object_id")
            if object_id:
                kwargs["queryset"] = Choice.objects.filter(question__errata__pk=object_id)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


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


admin.site.register(Dispute, list_display=("erratum", "learner", "choice", "created_at"), list_select_related=("erratum__question", "learner", "choice"))
admin.site.site_header = "certprep administration"
admin.site.site_title = "certprep admin"
admin.site.index_title = "Question bank and learners"
