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
#
# A job outlives its worker: while it runs, a thread renews its lease every
# JOB_HEARTBEAT_SECONDS on that second connection. A worker killed mid-job (kill -9, a
# redeploy) rolls its transaction back and stops renewing; once the lease (JOB_LEASE_SECONDS)
# has run out, job_reclaim_interrupted (at every worker start, and every minute) queues
# the job again, once, with its django-tasks-db row, and fails it "interrupted twice" the
# second time. A run whose job was reclaimed meanwhile (a worker that froze, not died)
# finds that out before committing and rolls back, so work is never applied twice.
import logging
import threading
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
    "INTERRUPTED_TWICE", "JOBS_DATABASE", "JobAlreadyActive", "JobError", "JobResult", "Progress", "job_abandon",
    "job_enqueue", "job_reclaim_interrupted", "job_request", "job_run", "target_of",
]

logger = logging.getLogger(__name__)
JOBS_DATABASE = "jobs"
# A job queued behind a running one looks again this long after its task found it busy.
BEHIND_RETRY = timedelta(seconds=5)
# How many times a worker may start a job: one retry after a worker that died.
MOST_RUNS = 2
INTERRUPTED_TWICE = (
    "Interrupted twice: its worker stopped before it finished (killed or redeployed), once more after it was "
    "queued again. Nothing was changed; start it again when the worker is healthy."
)


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
    heartbeat = _Heartbeat(job.pk, job.runs)
    heartbeat.start()
    try:
        with transaction.atomic():
            message = work(job=job, progress=_progress_of(job, latest))
            if not _still_ours(job):
                raise _Reclaimed
    except _Reclaimed:
        logger.warning("Job %s (%s) was queued again while this run went on: its work is rolled back", job_id, job.kind)
        return Job.objects.get(pk=job_id)
    except JobError as error:
        _finish(job, status=JobStatus.FAILED, error=f"{error} Nothing was changed.", payload=error.result or {}, **latest)
    except Exception as error:
        logger.exception("Job %s (%s) failed", job_id, job.kind)
        _finish(
            job, status=JobStatus.FAILED, error=f"{type(error).__name__}: {error}. Nothing was changed.", **latest
        )
    else:
        latest["done"] = latest.get("total", models.F("total"))
        kept = {}
        if isinstance(message, JobResult):
            message, kept = message.message, message.result
        _finish(job, status=JobStatus.SUCCEEDED, message=message or "", payload=kept, **latest)
    finally:
        heartbeat.stop()
    return Job.objects.get(pk=job_id)


class _Reclaimed(Exception):
    """This run's job was queued again (its lease ran out): roll its work back."""


def _still_ours(job: Job) -> bool:
    """Whether this run still holds the job, locking its row until the work commits.

    The lock makes job_reclaim_interrupted wait for the commit, so a job is never both
    committed by a run and queued again.
    """
    return Job.objects.select_for_update().filter(pk=job.pk, status=JobStatus.RUNNING, runs=job.runs).exists()


def _lease_alias() -> str | None:
    """The connection a heartbeat commits on while the work's transaction is open, if any.

    SQLite has one writer at a time, so there a running job carries no lease and is never
    reclaimed (a worker that died leaves it to job_abandon).
    """
    if JOBS_DATABASE in settings.DATABASES and connections[JOBS_DATABASE].vendor != "sqlite":
        return JOBS_DATABASE
    return None


def _lease_fields(now) -> dict:
    if _lease_alias() is None:
        return {}
    return {"heartbeat_at": now, "lease_until": now + timedelta(seconds=settings.JOB_LEASE_SECONDS)}


class _Heartbeat:
    """Renews a running job's lease every JOB_HEARTBEAT_SECONDS on its own thread and connection."""

    def __init__(self, job_id: int, run: int) -> None:
        self.job_id, self.run = job_id, run
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"job-{job_id}-heartbeat", daemon=True)

    def start(self) -> None:
        if _lease_alias() is not None:
            self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join()

    def _beat(self) -> None:
        alias = _lease_alias()
        try:
            while not self.stopped.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    Job.objects.using(alias).filter(pk=self.job_id, status=JobStatus.RUNNING, runs=self.run).update(
                        **_lease_fields(timezone.now())
                    )
                except Exception:  # a database blip: the next beat tries again
                    logger.exception("Job %s: the heartbeat could not be written", self.job_id)
        finally:
            connections[alias].close()


def _claim(job_id: int) -> bool:
    """Mark the queued job running, unless one of its kind and target runs ahead of it."""
    job = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).first()
    if job is None or running_ahead(job) is not None:
        return False
    try:
        with transaction.atomic():
            # The constraint on running jobs settles two workers claiming at the same moment.
            now = timezone.now()
            return bool(Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
                status=JobStatus.RUNNING, started_at=now, runs=models.F("runs") + 1, **_lease_fields(now)
            ))
    except IntegrityError:
        return False


def job_reclaim_interrupted() -> list[Job]:
    """Queue again, once, each running job whose lease ran out; fail it the second time.

    Its worker died (killed, redeployed) and its work's transaction rolled back, so nothing
    of it was applied. Its django-tasks-db row, left "running" by the dead worker, follows:
    ready again to run the retry, or failed with the job. A job with no such row to run it
    again (another task backend) is failed too. Run at every worker start and every minute.
    """
    from django.tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    now = timezone.now()
    reclaimed = []
    with transaction.atomic():
        # Locked, and skipped while a run is committing (it locks its job in _still_ours).
        expired = list(
            Job.objects.select_for_update(skip_locked=True).filter(status=JobStatus.RUNNING, lease_until__lt=now)
        )
        for job in expired:
            rows = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING, args_kwargs__kwargs__job_id=job.pk)
            retried = job.runs < MOST_RUNS and rows.exists() and _requeue(job, now=now)
            if retried:
                rows.update(status=TaskResultStatus.READY, started_at=None, run_after=now)
                logger.warning("Job %s (%s): its worker stopped; queued again", job.pk, job.kind)
            else:
                error = INTERRUPTED_TWICE if job.runs >= MOST_RUNS else (
                    "Interrupted: its worker stopped before it finished, and no task was left to run it again. "
                    "Nothing was changed."
                )
                Job.objects.filter(pk=job.pk).update(
                    status=JobStatus.FAILED, finished_at=now, payload={}, stage="", lease_until=None, error=error,
                )
                rows.update(
                    status=TaskResultStatus.FAILED, finished_at=now, return_value=None,
                    exception_class_path="jobs.services.JobInterrupted", traceback=error,
                )
                logger.error("Job %s (%s): %s", job.pk, job.kind, error)
            reclaimed.append(job.pk)
    return list(Job.objects.filter(pk__in=reclaimed))


def _requeue(job: Job, *, now) -> bool:
    """Queue the job again, unless a request queued behind it already holds that place."""
    try:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(
                status=JobStatus.QUEUED, started_at=None, heartbeat_at=None, lease_until=None, retried_at=now,
                stage="Interrupted: its worker stopped; queued again",
            )
    except IntegrityError:
        return False
    return True


def _look_again_later(job: Job, requeue: Task | None) -> None:
    if requeue is not None and requeue.get_backend().supports_defer:
        requeue.using(run_after=timezone.now() + BEHIND_RETRY).enqueue(job_id=job.pk)
    else:
        logger.warning("Job %s stays queued behind a running %s job, and nothing will look at it again", job.pk, job.kind)


def _finish(job: Job, *, payload: dict | None = None, **fields) -> None:
    """Record how this run ended, unless the job was queued again meanwhile (its lease ran out)."""
    fields.pop("stage", None)
    Job.objects.filter(pk=job.pk, runs=job.runs).update(
        finished_at=timezone.now(), payload=payload or {}, stage="", lease_until=None, **fields
    )


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
    the target for a new job. Should the worker in fact still be running, it finds before
    committing that the job is no longer its own and rolls its work back. (A worker that
    died is noticed without this once its lease runs out: job_reclaim_interrupted.)
    """
    return bool(
        Job.objects.active().filter(pk=job_id).update(
            status=JobStatus.FAILED, finished_at=timezone.now(), payload={}, stage="", lease_until=None,
            error=f"Marked as failed by {user.get_username()}: its worker stopped before it finished. Nothing was changed.",
        )
    )
