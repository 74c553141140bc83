"""Finish attempts whose deadline and grace have passed (run from cron, e.g. every minute)."""
from django.core.management.base import BaseCommand

from exams.room.services import finalize_expired


class Command(BaseCommand):
    help = "Grade and close every timed attempt past its deadline plus the 30-second grace."

    def handle(self, *args, **options):
        finished = finalize_expired()
        self.stdout.write(f"Finished {finished} expired attempt{'s' if finished != 1 else ''}.")
