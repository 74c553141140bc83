"""Run background tasks: django-tasks-db's db_worker, after starting the periodic tasks' chains."""
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

from jobs.periodic import start_periodic_tasks


class Command(DatabaseWorkerCommand):
    help = (
        "Run queued background tasks (imports, regrades, statistics refreshes) and the periodic ones "
        "in settings.PERIODIC_TASKS, such as finishing expired attempts every minute. "
        "Takes db_worker's options (--batch, --interval, --max-tasks, ...)."
    )

    def handle(self, **options):
        for path in start_periodic_tasks():
            if options["verbosity"]:
                self.stdout.write(f"Scheduled {path}.")
        super().handle(**options)
