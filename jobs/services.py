"""Start, run and report on Jobs: the generic layer every long piece of work goes through."""
# A long workflow (an import of thousands of questions, a regrade of 100,000 attempts)
# becomes a job in three lines:
#
#     job = job_enqueue(kind="regrade", target=target_of(erratum), title=..., task=regrade_task, total=n)
#
#     @task()                                  # in the owning app's tasks.py
#     def regrade_task(*, job_id: int) -> None:
#         job_run(job_id=job_id, work=lambda *, job, progress: erratum_regrade(..., progress=progress))
#
# job_run runs the work in one transaction, so a job that fails leaves the data as it was
# and shows its error. Progress written while that transaction is open goes through a
# second connection (the "jobs" database alias), so the admin sees it before the commit.
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db import IntegrityError, connections, models, transaction
from django.tasks import Task
from django.utils import timezone

from jobs.models import Job, JobStatus

__all__ = [
    "JOBS_DATABASE", "JobAlreadyActive", "JobError", "JobResult", "Progress", "job_abandon", "job_enqueue", "job_request",
    "job_run", "target_of",
]

logger = logging.getLogger(__name__)
JOBS_DATABASE = "jobs"
# A job queued behind a running one looks again this long after its task found it busy.
BEHIND_RETRY = timedelta(seconds=5)


class JobAlreadyActive(Exception):
    """A job of this kind is already queued or running for this target."""

    def __init__(self, job: Job) -> None:
        self.job = job
        super().__init__(f"“{job.title}” is already {job.get_status_display().lower()} (job #{job.pk}): wait for it to finish.")


class JobError(Exception):
    """A failure the job's work expected, whose message the admin shows as it is.

    `result` is kept in the failed job's payload for the page that shows it (a regrade
    whose numbers moved keeps the new ones, to confirm again).
    """

    def __init__(self, message: str, *, result: dict | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class JobResult:
    """What a job's work returns when it has more than a message to keep: `result` stays in job.payload."""

    message: str
    result: dict


class Progress(Protocol):
    def __call__(self, done: int, *, total: int | None = None, stage: str | None = None) -> None: ...


def target_of(instance: models.Model) -> str:
    """A job's target for a model instance: exams.exam:3."""
    return f"{instance._meta.label_lower}:{instance.pk}"


def job_enqueue(
    *, kind: str, target: str, title: str, task: Task, total: int = 0, payload: dict | None = None, user=None
) -> Job:
    """Record a queued job and hand it to the task backend; refuse a second active one."""
    try:
        with transaction.atomic():
            job = Job.objects.create(
                kind=kind, target=target, title=title, total=total, payload=payload or {}, created_by=user
            )
            # With the database backend the task's row commits with the job's, so the worker
            # never sees a task without its job, nor a job that no task will run.
            task.enqueue(job_id=job.pk)
    except IntegrityError:
        active = Job.objects.active().filter(kind=kind, target=target).first()
        if active is None:
            raise
        raise JobAlreadyActive(active) from None
    return Job.objects.get(pk=job.pk)


def job_request(*, kind: str, target: str, title: str, task: Task, total: int = 0, payload: dict | None = None, user=None) -> Job:
    """Ask for work whose latest run is all that matters (a statistics refresh); never refused.

    With none of this kind and target active, a job is queued. With one queued, that one is
    the answer: it has not started, so it will see whatever this request was made for. With
    one running only, a second is queued behind it and starts once the first has finished
    (job_run looks again every BEHIND_RETRY). So at most one runs and one waits.
    """
    for _ in range(3):
        waiting = Job.objects.filter(kind=kind, target=target, status=JobStatus.QUEUED, queues_behind=True).first()
        if waiting is not None:
            return waiting
        try:
            with transaction.atomic():
                job = Job.objects.create(
                    kind=kind, target=target, title=title, total=total, payload=payload or {}, created_by=user,
                    queues_behind=True,
                )
                task.enqueue(job_id=job.pk)
        except IntegrityError:
            continue  # another request queued one first (or it started meanwhile): look again
        return Job.objects.get(pk=job.pk)
    raise RuntimeError(f"could not queue a {kind} job for {target}")


def running_ahead(job: Job) -> Job | None:
    """The job of the same kind and target running ahead of this queued-behind one, if any."""
    if not job.queues_behind:
        return None
    return Job.objects.filter(kind=job.kind, target=job.target, status=JobStatus.RUNNING).exclude(pk=job.pk).first()


def job_run(
    *, job_id: int, work: Callable[..., "str | JobResult | None"], requeue: Task | None = None
) -> Job | None:
    """Run work(job=, progress=) for a queued job in one transaction and record how it ended.

    The payload is emptied when the job ends, unless the work returns a JobResult (or raises
    a JobError) with a result to keep there. A job queued behind a running one (job_request)
    stays queued, and `requeue` (the task that called this) is enqueued to look again after
    BEHIND_RETRY.
    """
    if not _claim(job_id):
        job = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).first()
        if job is not None:
            _look_again_later(job, requeue)
        # Else already run (a task delivered twice), or the job row is gone.
        return None
    job = Job.objects.get(pk=job_id)
    # The last figures heard, written again at the end in case they could not be before.
    latest: dict = {}
    try:
        with transaction.atomic():
            message = work(job=job, progress=_progress_of(job, latest))
    except JobError as error:
        _finish(job_id, status=JobStatus.FAILED, error=f"{error} Nothing was changed.", payload=error.result or {}, **latest)
    except Exception as error:
        logger.exception("Job %s (%s) failed", job_id, job.kind)
        _finish(
            job_id, status=JobStatus.FAILED, error=f"{type(error).__name__}: {error}. Nothing was changed.", **latest
        )
    else:
        latest["done"] = latest.get("total", models.F("total"))
        kept = {}
        if isinstance(message, JobResult):
            message, kept = message.message, message.result
        _finish(job_id, status=JobStatus.SUCCEEDED, message=message or "", payload=kept, **latest)
    return Job.objects.get(pk=job_id)


def _claim(job_id: int) -> bool:
    """Mark the queued job running, unless one of its kind and target runs ahead of it."""
    job = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).first()
    if job is None or running_ahead(job) is not None:
        return False
    try:
        with transaction.atomic():
            # The constraint on running jobs settles two workers claiming at the same moment.
            return bool(Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
                status=JobStatus.RUNNING, started_at=timezone.now()
            ))
    except IntegrityError:
        return False


def _look_again_later(job: Job, requeue: Task | None) -> None:
    if requeue is not None and requeue.get_backend().supports_defer:
        requeue.using(run_after=timezone.now() + BEHIND_RETRY).enqueue(job_id=job.pk)
    else:
        logger.warning("Job %s stays queued behind a running %s job, and nothing will look at it again", job.pk, job.kind)


def _finish(job_id: int, *, payload: dict | None = None, **fields) -> None:
    fields.pop("stage", None)
    Job.objects.filter(pk=job_id).update(finished_at=timezone.now(), payload=payload or {}, stage="", **fields)


def _progress_of(job: Job, latest: dict) -> Progress:
    def progress(done: int, *, total: int | None = None, stage: str | None = None) -> None:
        fields: dict = {"done": done}
        if total is not None:
            fields["total"] = total
        if stage is not None:
            fields["stage"] = stage
        latest.update(fields)
        _write_progress(job.pk, fields)

    return progress


def _write_progress(job_id: int, fields: dict) -> None:
    if not connections["default"].in_atomic_block:
        Job.objects.filter(pk=job_id).update(**fields)
    elif JOBS_DATABASE in settings.DATABASES and connections[JOBS_DATABASE].vendor != "sqlite":
        # Committed at once on its own connection, while the work's transaction is open.
        # (SQLite has one writer at a time, so there the figures show only at the end.)
        Job.objects.using(JOBS_DATABASE).filter(pk=job_id).update(**fields)


def job_abandon(*, job_id: int, user) -> bool:
    """Mark a queued or running job failed because its worker stopped (killed, redeployed).

    Its work ran in one transaction, so a worker that died changed nothing; this only frees
    the target for a new job. Should the worker in fact still be running, its own ending
    is recorded over this one.
    """
    return bool(
        Job.objects.active().filter(pk=job_id).update(
            status=JobStatus.FAILED, finished_at=timezone.now(), payload={}, stage="",
            error=f"Marked as failed by {user.get_username()}: its worker stopped before it finished. Nothing was changed.",
        )
    )
