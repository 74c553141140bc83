"""The statistics refresh in the background: asked for by the nightly run, imports, regrades and the admin's button.

A refresh recomputes everything from the finished mocks, so only its latest run matters:
a request while one runs queues behind it (jobs.services.job_request), and a request
while one waits joins that one. Nothing refuses it and nothing asks anyone to use a shell.
"""
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from exams.models import Exam
from exams.statistics.refresh import statistics_refresh_job
from jobs.models import Job
from jobs.periodic import next_time_of_day, schedule_next
from jobs.services import job_request, job_run, target_of

REFRESH_JOB = "refresh_statistics"
# The nightly refresh runs at this hour (settings.TIME_ZONE), when mocks are few.
NIGHTLY_AT_HOUR = 3


@task()
def refresh_statistics(*, job_id: int) -> None:
    """Item statistics of one exam's whole bank (a job from statistics_refresh_request)."""
    job_run(job_id=job_id, work=statistics_refresh_job, requeue=refresh_statistics)


def statistics_refresh_request(*, exam: Exam, user=None) -> Job:
    """Queue a refresh of the exam's item and test statistics, or join the one already waiting."""
    return job_request(
        kind=REFRESH_JOB, target=target_of(exam), title=f"Refresh the item statistics of {exam.code}",
        task=refresh_statistics, payload={"exam": exam.pk}, user=user,
    )


def statistics_refresh_on_commit(*, exam: Exam) -> None:
    """Ask for a refresh once the change under way (an import, a regrade) commits; one rolled back asks for nothing.

    After the commit, not inside it: the refresh must see the change, and a long import
    must not hold the one queued refresh of its exam (the unique index) until it ends.
    """
    transaction.on_commit(lambda: statistics_refresh_request(exam=exam))


def statistics_refresh_all() -> list[Job]:
    """A refresh of every exam that has questions (the nightly run)."""
    exams = Exam.objects.filter(questions__isnull=False).distinct().order_by("code")
    return [statistics_refresh_request(exam=exam) for exam in exams]


@task()
def refresh_statistics_nightly() -> int:
    """Refresh every exam's statistics, then run again the next night (settings.PERIODIC_TASKS).

    The worker starts the chain when it starts, so a deployment refreshes once at once too.
    """
    try:
        return len(statistics_refresh_all())
    finally:
        # Even after a failure the next night's run is scheduled.
        schedule_next(refresh_statistics_nightly, at=next_time_of_day(hour=NIGHTLY_AT_HOUR, after=timezone.now()))
