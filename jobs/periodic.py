"""Tasks that run every so often: each run schedules the next (run_after), one chain per task."""
# The tasks framework has no scheduler. A periodic task ends by enqueueing itself to run
# again after its interval; the worker command starts the chain when none is waiting.
# Chains that doubled (two workers starting at once) fold back into one, because a run
# only schedules the next when no other run is already waiting.
from datetime import datetime, timedelta

from django.conf import settings
from django.tasks import Task, TaskResultStatus
from django.utils import timezone
from django.utils.module_loading import import_string


def _waiting(task: Task) -> bool:
    from django_tasks_db.models import DBTaskResult

    backend = task.get_backend()
    return DBTaskResult.objects.filter(
        task_path=task.module_path, backend_name=backend.alias, status=TaskResultStatus.READY
    ).exists()


def schedule_next(task: Task, *, every: timedelta | None = None, at: datetime | None = None) -> bool:
    """Enqueue the task's next run after `every`, or at `at`, unless a run is already waiting.

    Only a backend that can defer (the database one) keeps a chain; with the immediate
    backend a run is just a run.
    """
    if (every is None) == (at is None):
        raise ValueError("give either every= or at=")
    if not task.get_backend().supports_defer or _waiting(task):
        return False
    task.using(run_after=at if at is not None else timezone.now() + every).enqueue()
    return True


def next_time_of_day(*, hour: int, after: datetime) -> datetime:
    """The first `hour`:00 (in the project's time zone) strictly after `after`."""
    local = timezone.localtime(after)
    candidate = local.replace(hour=hour, minute=0, second=0, microsecond=0)
    if candidate <= local:
        candidate = timezone.make_aware(
            datetime.combine(candidate.date() + timedelta(days=1), candidate.time().replace(tzinfo=None)),
            timezone.get_current_timezone(),
        )
    return candidate


def start_periodic_tasks() -> list[str]:
    """Enqueue a first run of every task in settings.PERIODIC_TASKS that has none waiting."""
    started = []
    for path in getattr(settings, "PERIODIC_TASKS", []):
        task = import_string(path)
        if task.get_backend().supports_defer and not _waiting(task):
            task.enqueue()
            started.append(path)
    return started
