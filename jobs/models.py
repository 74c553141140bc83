"""A Job: one piece of long work run by the task worker, with its progress and outcome."""
# Django's tasks framework runs work but records no progress and allows any number of the
# same task at once. A Job row is what the admin polls, and its partial unique constraints
# are what refuse a second import into one exam (or a second regrade of one erratum)
# while the first is queued or running, and what keep a refresh (a job that queues behind)
# to one running and one queued.
from django.conf import settings
from django.db import models
from django.db.models import Q


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


ACTIVE_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING)


class JobQuerySet(models.QuerySet):
    def active(self):
        return self.filter(status__in=ACTIVE_STATUSES)


class Job(models.Model):
    kind = models.CharField(max_length=40, help_text="What the job does, e.g. import_questions.")
    target = models.CharField(max_length=100, help_text="What it works on, e.g. exams.exam:3 (see jobs.services.target_of).")
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    stage = models.CharField(max_length=100, blank=True, help_text="What the job is doing now, in words.")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True, help_text="What the job did, once it succeeded.")
    error = models.TextField(blank=True, help_text="Why the job failed; a failed job changed nothing.")
    # The job's input (an uploaded bank's text, say); emptied once the job has finished.
    payload = models.JSONField(default=dict, blank=True)
    # Work whose latest run is all that matters (a statistics refresh): a request while one
    # runs queues behind it instead of being refused (jobs.services.job_request).
    queues_behind = models.BooleanField(
        default=False, help_text="A request while one runs waits behind it (one running, one queued) instead of being refused."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A running job's worker renews its lease every JOB_HEARTBEAT_SECONDS; a lease that ran
    # out means the worker died, and the job is queued again once (jobs.services).
    runs = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker has started it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="When its worker last said it was alive.")
    lease_until = models.DateTimeField(null=True, blank=True, help_text="A running job whose lease ran out lost its worker.")
    retried_at = models.DateTimeField(null=True, blank=True, help_text="When it was queued again after its worker stopped.")

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "target"],
                condition=Q(status__in=ACTIVE_STATUSES, queues_behind=False),
                name="one_active_job_per_kind_and_target",
                violation_error_message="A job of this kind is already queued or running for this target.",
            ),
            models.UniqueConstraint(
                fields=["kind", "target"],
                condition=Q(status=JobStatus.QUEUED, queues_behind=True),
                name="one_queued_job_behind_per_kind_and_target",
                violation_error_message="A job of this kind is already queued for this target.",
            ),
            models.UniqueConstraint(
                fields=["kind", "target"],
                condition=Q(status=JobStatus.RUNNING, queues_behind=True),
                name="one_running_job_behind_per_kind_and_target",
                violation_error_message="A job of this kind is already running for this target.",
            ),
            models.CheckConstraint(condition=Q(total=0) | Q(done__lte=models.F("total")), name="job_done_within_total"),
        ]
        indexes = [
            models.Index(fields=["kind", "-created_at"], name="job_kind_recent"),
            models.Index(fields=["lease_until"], condition=Q(status=JobStatus.RUNNING), name="job_running_lease"),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_status_display().lower()})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def percent(self) -> int | None:
        if not self.total:
            return None
        return min(100, self.done * 100 // self.total)
