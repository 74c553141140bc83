"""Run background tasks: django-tasks-db's db_worker, after starting the periodic tasks' chains."""
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

from jobs.periodic import start_periodic_tasks
from jobs.services import job_reclaim_interrupted


class Command(DatabaseWorkerCommand):
    help = (
        "Run queued background tasks (imports, regrades, statistics refreshes) and the periodic ones "
        "in settings.PERIODIC_TASKS, such as finishing expired attempts every minute. At start, and every "
        "minute, a job whose worker died (its lease ran out) is queued again once, then failed. "
        "Takes db_worker's options (--batch, --interval, --max-tasks, ...)."
    )

    def handle(self, **options):
        # A job a worker that died left running is queued again (once) before anything runs.
        for job in job_reclaim_interrupted():
            if options["verbosity"]:
                self.stdout.write(f"Job #{job.pk} ({job.title}) lost its worker: {job.get_status_display().lower()}.")
        for path in start_periodic_tasks():
            if options["verbosity"]:
                self.stdout.write(f"Scheduled {path}.")
        super().handle(**options)
