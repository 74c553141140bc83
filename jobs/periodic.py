"""Tasks that run every so often: each run schedules the next (run_after), one chain per task."""
# The tasks framework has no scheduler. A periodic task ends by enqueueing itself to run
# again after its interval; the worker command starts the chain when none is waiting.
# Chains that doubled (two workers starting at once) fold back into one, because a run
# only schedules the next when no other run is already waiting.
from datetime import timedelta

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


def schedule_next(task: Task, *, every: timedelta) -> bool:
    """Enqueue the task's next run after `every`, unless a run is already waiting.

    Only a backend that can defer (the database one) keeps a chain; with the immediate
    backend a run is just a run.
    """
    if not task.get_backend().supports_defer or _waiting(task):
        return False
    task.using(run_after=timezone.now() + every).enqueue()
    return True


def start_periodic_tasks() -> list[str]:
    """Enqueue a first run of every task in settings.PERIODIC_TASKS that has none waiting."""
    started = []
    for path in getattr(settings, "PERIODIC_TASKS", []):
        task = import_string(path)
        if task.get_backend().supports_defer and not _waiting(task):
            task.enqueue()
            started.append(path)
    return started
