"""Jobs in the admin: a read-only list, and a status page whose progress the browser polls (htmx)."""
from collections.abc import Callable

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html

from jobs.models import Job, JobStatus
from jobs.services import job_abandon, running_ahead

# htmx stops polling when a response has this status: the job has finished.
STOP_POLLING = 286

# kind → template shown under a finished job's outcome: the next step of the work that
# started it (a previewed regrade's numbers and its Confirm button). The owning app
# registers its own, so this app knows no other.
OUTCOME_TEMPLATES: dict[str, tuple[str, Callable[[Job], dict]]] = {}


def show_outcome_with(kind: str, template: str, context: Callable[[Job], dict]) -> None:
    """Show `template`, with context(job), under each finished job of this kind."""
    OUTCOME_TEMPLATES[kind] = (template, context)


def interrupted_at(job: Job) -> str:
    """When a job whose worker died was queued again, as the admin shows times."""
    from django.utils import formats, timezone

    return formats.date_format(timezone.localtime(job.retried_at), "DATETIME_FORMAT")


def progress_context(job: Job) -> dict:
    # A job queued behind a running one (jobs.services.job_request) says which.
    base = {"job": job, "ahead": running_ahead(job) if job.status == JobStatus.QUEUED else None}
    outcome = None if job.is_active else OUTCOME_TEMPLATES.get(job.kind)
    if outcome is None:
        return base
    template, context = outcome
    return {**base, "outcome_template": template, **context(job)}


def progress_response(request: HttpRequest, job: Job) -> HttpResponse:
    """The job's progress partial; once the job has finished, also the signal to stop polling."""
    return TemplateResponse(
        request, "admin/jobs/job/status.html#progress-body", progress_context(job),
        status=200 if job.is_active else STOP_POLLING,
    )


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["title", "kind", "status_shown", "progress", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "kind"]
    search_fields = ["title"]
    list_select_related = ["created_by"]
    # The payload may hold a whole uploaded bank: never loaded for the list.
    exclude = ["payload"]
    actions = ["mark_failed"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("payload")

    @admin.display(description="Status", ordering="status")
    def status_shown(self, job: Job) -> str:
        """The status, and whether a worker that died left it to be run again."""
        if job.retried_at is None:
            return job.get_status_display()
        return format_html("{} (interrupted, retried at {})", job.get_status_display(), interrupted_at(job))

    @admin.display(description="Progress")
    def progress(self, job: Job) -> str:
        if not job.total:
            return "—"
        return format_html("{} of {} ({}%)", f"{job.done:,}", f"{job.total:,}", job.percent)

    @admin.action(description="Mark as failed: their worker stopped (frees the target for a new job)", permissions=["abandon"])
    def mark_failed(self, request, queryset) -> None:
        marked = sum(job_abandon(job_id=pk, user=request.user) for pk in queryset.values_list("pk", flat=True))
        self.message_user(request, f"Marked {marked} queued or running job{'s' if marked != 1 else ''} as failed.")

    def has_abandon_permission(self, request) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request):
        return False  # jobs start from the work they do (an import, a regrade), not here

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # the record of what ran, and what failed

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:job_id>/progress/", wrap(self.progress_view), name="jobs_job_progress"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if not self.has_view_permission(request):
            return super().change_view(request, object_id, form_url, extra_context)
        if not str(object_id).isdigit():
            raise Http404("No such job.")
        job = get_object_or_404(self.get_queryset(request), pk=object_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": job.title,
            "subtitle": "Job",
            **progress_context(job),
        }
        return TemplateResponse(request, "admin/jobs/job/status.html", context)

    def progress_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return progress_response(request, get_object_or_404(self.get_queryset(request), pk=job_id))
