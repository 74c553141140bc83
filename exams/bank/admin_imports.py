"""Question import (upload → preview → confirm) and export actions for the question admin."""
# Kept out of exams/admin.py: QuestionAdmin takes QuestionImportExportMixin as its first
# base. The upload waits between preview and confirm in the server-side session (never a
# cookie, never a hidden field the browser could alter), at most one per session and at
# most MAX_UPLOAD_BYTES of text; confirming parses it again and imports all or nothing.
import math
import secrets
from importlib import import_module
from pathlib import PurePath

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.http import content_disposition_header, urlencode
from django.views.decorators.http import require_POST

from exams.bank.formats import ExportError, NotUtf8Error, decode_utf8
from exams.bank.imports import (
    FORMATS, MAX_IMPORT_QUESTIONS, WEIGHTS_NOTE, parse_upload, pending_parse, pending_summary, preview_of, write_export,
)
from exams.models import Domain, Exam
from jobs.admin import show_outcome_with
from jobs.models import Job, JobStatus
from jobs.services import JobAlreadyActive, job_enqueue, target_of

__all__ = ["MAX_UPLOAD_BYTES", "QuestionImportExportMixin", "QuestionImportForm"]

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
# Every extension some format of the registry accepts, in the registry's order.
ALLOWED_EXTENSIONS = tuple(dict.fromkeys(extension for bank_format in FORMATS.values() for extension in bank_format.upload_extensions))
_SKIPPING = [bank_format.label for bank_format in FORMATS.values() if bank_format.skips_unsupported]
SESSION_KEY = "exams.question_import"
_EXTENSION_LIST = ", ".join(ALLOWED_EXTENSIONS[:-1]) + " or " + ALLOWED_EXTENSIONS[-1]
# Larger imports run as a background job with progress; smaller ones in the request.
BACKGROUND_IMPORT_OVER = 500
IMPORT_JOB = "import_questions"
# Previews of more questions than this are checked by a background job too (a preview
# checks every question: 20,000 of them would hold a web worker for seconds).
BACKGROUND_PREVIEW_OVER = 2000
PREVIEW_JOB = "import_preview"


class QuestionImportForm(forms.Form):
    exam = forms.ModelChoiceField(queryset=Exam.objects.all(), help_text="The exam that receives the questions.")
    format = forms.ChoiceField(choices=[(name, bank_format.label) for name, bank_format in FORMATS.items()])
    file = forms.FileField(
        widget=forms.FileInput(attrs={"accept": ",".join(ALLOWED_EXTENSIONS)}),
        help_text=f"A UTF-8 {_EXTENSION_LIST} file of at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MB and "
        f"{MAX_IMPORT_QUESTIONS:,} questions.",
    )
    default_domain = forms.ModelChoiceField(
        queryset=Domain.objects.select_related("exam").order_by("exam__code", "order", "id"),
        required=False,
        help_text="For questions whose file names no domain (Aiken never does) or a domain the exam does not have.",
    )
    skip_unsupported = forms.BooleanField(
        required=False,
        label="Skip unsupported questions",
        help_text=f"{' and '.join(_SKIPPING)} only: leave out (and list) matching, numerical, short-answer, essay, "
        "description, missing-word and other question types certprep does not hold instead of failing on them.",
    )

    publish = forms.BooleanField(
        required=False,
        label="Publish at once",
        help_text="Import the questions as ready, drawn into attempts straight away, instead of as drafts to review. "
        "Every question must then have a topic, a difficulty, an explanation and feedback on every choice: "
        "if one lacks any, nothing is imported and each is listed.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["default_domain"].label_from_instance = lambda domain: f"{domain.exam.code} · {domain.name}"
        only = list(Exam.objects.values_list("pk", flat=True)[:2])
        if len(only) == 1 and not self.initial.get("exam"):
            # One exam: nothing to choose.
            self.initial["exam"] = only[0]
        self.text = ""

    def clean_file(self):
        upload = self.cleaned_data["file"]
        extension = PurePath(upload.name).suffix.lower()
        if extension not in ALLOWED_EXTENSIONS:
            raise forms.ValidationError(
                f"Upload a {_EXTENSION_LIST} file; {upload.name!r} is not one of those types."
            )
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                # Rounded up, so a file just over the limit never reads as "5.0 MB; the limit is 5 MB".
                f"The file is {math.ceil(upload.size * 10 / (1024 * 1024)) / 10:.1f} MB; the limit is "
                f"{MAX_UPLOAD_BYTES // (1024 * 1024)} MB. "
                "Split the bank into smaller files."
            )
        try:
            self.text = decode_utf8(upload.read())
        except NotUtf8Error as error:
            raise forms.ValidationError(str(error)) from None
        return upload

    def clean(self):
        cleaned = super().clean()
        exam, domain = cleaned.get("exam"), cleaned.get("default_domain")
        if exam and domain and domain.exam_id != exam.pk:
            self.add_error("default_domain", f"{domain.name!r} is a domain of {domain.exam.code}, not of {exam.code}.")
        return cleaned


def _listing(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def preview_job_outcome(job: Job) -> dict:
    """Under a finished background preview (jobs.admin.show_outcome_with): the way to its preview."""
    return {"preview_url": (job.payload or {}).get("preview_url", "")}


show_outcome_with(PREVIEW_JOB, "admin/exams/question/import_preview_job_outcome.html", preview_job_outcome)


class QuestionImportExportMixin:
    """Import and export for a Question ModelAdmin: put it first among the admin's bases."""

    change_list_template = "admin/exams/question/change_list.html"
    # One export action per format of the registry (made below the class). A subclass
    # that declares its own actions should list these too.
    actions = [f"export_as_{name}" for name in FORMATS]

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        # Before the ModelAdmin's own patterns, whose "<path:object_id>/" would take "import/".
        return [
            path("import/", wrap(self.import_view), name="%s_%s_import" % info),
            path("import/<str:token>/", wrap(self.import_preview_view), name="%s_%s_import_preview" % info),
            path(
                "import/<str:token>/confirm/",
                wrap(require_POST(self.import_confirm_view)),
                name="%s_%s_import_confirm" % info,
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        extra_context = extra_context or {}
        if self.has_add_permission(request):
            url = self._admin_url("import")
            # Coming from a list filtered by exam, the form starts on that exam.
            exam = request.GET.get("exam__id__exact")
            extra_context["import_url"] = f"{url}?{urlencode({'exam': exam})}" if exam else url
        return super().changelist_view(request, extra_context)

    # Import ----------------------------------------------------------------------------

    def import_view(self, request: HttpRequest) -> HttpResponse:
        self._check_import_permission(request)
        if request.method == "POST":
            form = QuestionImportForm(request.POST, request.FILES)
            if form.is_valid():
                token = self._keep_pending(request, form=form)
                return HttpResponseRedirect(self._admin_url("import_preview", token))
        else:
            form = QuestionImportForm(initial={"exam": request.GET.get("exam")})
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Import questions",
            "form": form,
            "format_labels": _listing([bank_format.label for bank_format in FORMATS.values()]),
            # The large imports of the last while, with their progress while they run.
            "jobs": Job.objects.filter(kind=IMPORT_JOB).defer("payload")[:5],
            "background_over": BACKGROUND_IMPORT_OVER,
        }
        return TemplateResponse(request, "admin/exams/question/import_form.html", context)

    def import_preview_view(self, request: HttpRequest, token: str) -> HttpResponse:
        self._check_import_permission(request)
        pending = self._pending(request, token)
        if pending is None:
            return self._upload_again(request)
        exam = Exam.objects.filter(pk=pending["exam"]).first()
        if exam is None:
            return self._upload_again(request, reason="The exam of that upload no longer exists.")
        job = Job.objects.filter(pk=pending["preview_job"]).first() if pending.get("preview_job") else None
        if job is not None and job.status == JobStatus.SUCCEEDED:
            preview = job.payload["preview"]  # checked in the background (below)
        elif job is not None:
            return self._preview_page(request, token, pending=pending, exam=exam, job=job)
        else:
            result = pending_parse(pending=pending, exam=exam)
            if BACKGROUND_PREVIEW_OVER < len(result.questions) <= MAX_IMPORT_QUESTIONS:
                return self._preview_in_background(request, token, pending=pending, exam=exam, questions=len(result.questions))
            preview = preview_of(pending_summary(pending=pending, dry_run=True, result=result)[1])
        return self._preview_page(request, token, pending=pending, exam=exam, preview=preview)

    def _preview_page(self, request, token: str, *, pending: dict, exam: Exam, preview: dict | None = None,
                      job: Job | None = None) -> HttpResponse:
        """The preview (`preview`, see imports.preview_of), or the progress of the job checking it."""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Import questions into {exam.code}: preview",
            "exam": exam,
            "filename": pending["filename"],
            "format_label": FORMATS[pending["format"]].label,
            "default_domain": pending["default_domain"],
            "publish": pending.get("publish", False),
            "weights_note": WEIGHTS_NOTE,
            "confirm_url": self._admin_url("import_confirm", token),
            "upload_url": self._admin_url("import"),
            "job": job,
            **(preview or {}),
        }
        return TemplateResponse(request, "admin/exams/question/import_preview.html", context)

    def _preview_in_background(self, request, token: str, *, pending: dict, exam: Exam, questions: int) -> HttpResponse:
        from exams.tasks import preview_questions

        preview_url = self._admin_url("import_preview", token)
        job = job_enqueue(
            kind=PREVIEW_JOB,
            # One per upload: two instructors' previews of one exam never wait for each other.
            target=f"{target_of(exam)}:{token}",
            title=f"Check {questions:,} questions from {pending['filename'][:80]} for {exam.code}",
            task=preview_questions,
            total=questions,
            payload={**{key: value for key, value in pending.items() if key != "token"}, "preview_url": preview_url},
            user=request.user,
        )
        request.session[SESSION_KEY] = {**pending, "preview_job": job.pk}
        return self._preview_page(request, token, pending=pending, exam=exam, job=job)

    def import_confirm_view(self, request: HttpRequest, token: str) -> HttpResponse:
        self._check_import_permission(request)
        if self._pending(request, token) is None:
            return self._upload_again(request)
        with transaction.atomic():
            # A double click sends two confirms. Imports into one exam take turns on its
            # row, and each reads the session again once it has the lock: the second
            # finds the upload already claimed instead of importing it twice.
            exam = Exam.objects.select_for_update().filter(pk=request.session[SESSION_KEY]["exam"]).first()
            stored = import_module(settings.SESSION_ENGINE).SessionStore(session_key=request.session.session_key)
            pending = stored.get(SESSION_KEY)
            if not pending or not secrets.compare_digest(pending.get("token", ""), token):
                request.session.pop(SESSION_KEY, None)
                return self._upload_again(request)
            if exam is None:
                return self._upload_again(request, reason="The exam of that upload no longer exists.")
            questions = len(
                parse_upload(
                    data=pending["text"].encode("utf-8"), fmt=pending["format"],
                    skip_unsupported=pending["skip_unsupported"], exam_code=exam.code,
                ).questions
            )
            if questions > BACKGROUND_IMPORT_OVER:
                return self._import_in_background(request, exam=exam, pending=pending, stored=stored, questions=questions)
            summary = pending_summary(pending=pending, dry_run=False)[1]
            if not summary.ok:
                # Something changed since the preview (a domain was renamed, say): show why.
                self.message_user(request, summary.headline, messages.ERROR)
                return HttpResponseRedirect(self._admin_url("import_preview", token))
            del stored[SESSION_KEY]
            stored.save()
        request.session.pop(SESSION_KEY, None)
        per_domain = "; ".join(f"{plan.name}: {len(plan.questions)}" for plan in summary.domains)
        self.message_user(request, f"{summary.headline} {per_domain}".strip(), messages.SUCCESS)
        return HttpResponseRedirect(f"{self._admin_url('changelist')}?{urlencode({'exam__id__exact': exam.pk})}")

    def _import_in_background(self, request, *, exam: Exam, pending: dict, stored, questions: int) -> HttpResponse:
        from exams.tasks import import_questions

        try:
            job = job_enqueue(
                kind=IMPORT_JOB,
                target=target_of(exam),
                title=f"Import {questions:,} questions from {pending['filename'][:80]} into {exam.code}",
                task=import_questions,
                total=questions,
                payload={key: value for key, value in pending.items() if key != "token"},
                user=request.user,
            )
        except JobAlreadyActive as busy:
            # The upload stays waiting: confirm it again once the other import is done.
            self.message_user(request, f"Nothing was started: {busy}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:jobs_job_change", args=[busy.job.pk]))
        del stored[SESSION_KEY]
        stored.save()
        request.session.pop(SESSION_KEY, None)
        self.message_user(
            request,
            f"{questions:,} questions are more than {BACKGROUND_IMPORT_OVER} to import at once: they are being imported "
            "in the background. This page shows the progress; nothing is written unless all of them import.",
            messages.INFO,
        )
        return HttpResponseRedirect(self._admin_url("import"))

    def _check_import_permission(self, request: HttpRequest) -> None:
        if not self.has_add_permission(request):
            raise PermissionDenied

    def _admin_url(self, name: str, *args) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_{name}", args=args, current_app=self.admin_site.name
        )

    def _keep_pending(self, request: HttpRequest, *, form: QuestionImportForm) -> str:
        if settings.SESSION_ENGINE.endswith("signed_cookies"):
            raise ImproperlyConfigured(
                "The question import keeps an upload in the session: use a server-side session engine."
            )
        token = secrets.token_urlsafe(16)
        domain = form.cleaned_data["default_domain"]
        # One pending upload per session: a new upload replaces the one before.
        request.session[SESSION_KEY] = {
            "token": token,
            "exam": form.cleaned_data["exam"].pk,
            "format": form.cleaned_data["format"],
            "default_domain": domain.name if domain else None,
            "skip_unsupported": form.cleaned_data["skip_unsupported"],
            "publish": form.cleaned_data["publish"],
            "filename": PurePath(form.cleaned_data["file"].name).name,
            "text": form.text,
        }
        return token

    def _pending(self, request: HttpRequest, token: str) -> dict | None:
        pending = request.session.get(SESSION_KEY)
        if not pending or not secrets.compare_digest(pending.get("token", ""), token):
            return None
        return pending

    def _upload_again(self, request: HttpRequest, *, reason: str = "") -> HttpResponse:
        message = reason or (
            "That upload is no longer waiting: it was imported already, or another upload replaced it."
        )
        self.message_user(request, f"{message} Upload the file again.", messages.WARNING)
        return HttpResponseRedirect(self._admin_url("import"))

    # Export ----------------------------------------------------------------------------

    def _export(self, request: HttpRequest, queryset: QuerySet, *, fmt: str) -> HttpResponse | None:
        exam_ids = set(queryset.values_list("exam_id", flat=True))
        exams = list(Exam.objects.filter(pk__in=exam_ids).order_by("code"))
        if len(exams) != 1:
            codes = ", ".join(exam.code for exam in exams)
            self.message_user(
                request,
                f"Select questions of one exam to export (the selection spans {codes}): filter the list by exam first.",
                messages.ERROR,
            )
            return None
        exam = exams[0]
        try:
            text = write_export(exam=exam, fmt=fmt, questions=queryset)
        except ExportError as error:
            self.message_user(
                request,
                f"Nothing was exported: {error.format_name} cannot hold these questions. " + "; ".join(error.problems),
                messages.ERROR,
            )
            return None
        bank_format = FORMATS[fmt]
        filename = f"{exam.code}-questions.{bank_format.extension}"
        return HttpResponse(
            text,
            content_type=bank_format.content_type,
            headers={"Content-Disposition": content_disposition_header(as_attachment=True, filename=filename)},
        )


def _export_action(fmt: str):
    def export(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._export(request, queryset, fmt=fmt)

    export.__name__ = f"export_as_{fmt}"
    return admin.action(description=FORMATS[fmt].export_description, permissions=["view"])(export)


for _name in FORMATS:
    setattr(QuestionImportExportMixin, f"export_as_{_name}", _export_action(_name))


