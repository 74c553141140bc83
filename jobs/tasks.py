"""The jobs app's own background work: finding jobs whose worker died."""
from datetime import timedelta

from django.tasks import task

from jobs.periodic import schedule_next
from jobs.services import job_reclaim_interrupted

RECLAIM_EVERY = timedelta(minutes=1)


@task()
def reclaim_interrupted_jobs() -> int:
    """Queue again (once) or fail the running jobs whose lease ran out; again a minute later."""
    try:
        return len(job_reclaim_interrupted())
    finally:
        # One bad run must not stop dead workers' jobs from ever being noticed again.
        schedule_next(reclaim_interrupted_jobs, every=RECLAIM_EVERY)
