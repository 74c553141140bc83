"""Background work on the bank and on attempts: thin wrappers over workflows, run by `manage.py worker`.

The task paths (exams.tasks.*) are stored in queued django-tasks-db rows and settings.PERIODIC_TASKS,
so they stay here while the workflows they call live in each concern's package.
"""
from datetime import timedelta

from django.tasks import task

from exams.bank.errata.regrade import erratum_confirm_job
from exams.bank.imports import import_pending_upload, preview_pending_upload
from exams.room.services import finalize_expired
# Queued before the refresh moved to its own package, a task row names exams.tasks.refresh_statistics.
from exams.statistics.tasks import refresh_statistics  # noqa: F401
from jobs.periodic import schedule_next
from jobs.services import job_run

FINALIZE_EVERY = timedelta(minutes=1)


@task()
def import_questions(*, job_id: int) -> None:
    """A large question import (see exams.bank.admin_imports.BACKGROUND_IMPORT_OVER)."""
    job_run(job_id=job_id, work=import_pending_upload)


@task()
def preview_questions(*, job_id: int) -> None:
    """The check behind a large import's preview (see exams.bank.admin_imports.BACKGROUND_PREVIEW_OVER)."""
    job_run(job_id=job_id, work=preview_pending_upload)


@task()
def regrade_erratum(*, job_id: int) -> None:
    """A confirmation of an erratum, or its dry run, over more attempts than exams.bank.errata.regrade.BACKGROUND_REGRADE_OVER."""
    job_run(job_id=job_id, work=erratum_confirm_job)


@task()
def finalize_expired_attempts() -> int:
    """Finish attempts past deadline and grace, then run again a minute later (settings.PERIODIC_TASKS)."""
    try:
        return finalize_expired()
    finally:
        # Even after a failure the next minute's run is scheduled: one bad run must not
        # stop expired attempts from ever being finished again.
        schedule_next(finalize_expired_attempts, every=FINALIZE_EVERY)
