"""Demo accounts for a local copy (make run); never used by the container deployment."""
import os

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.models import Profile
from exams.roles import instructors_group

DEMO_PASSWORD = "certprep-demo"
LEARNER = "learner"
INSTRUCTOR = "instructor"


class Command(BaseCommand):
    help = "Create (or reset) a demo learner and a demo instructor, and print their credentials."

    @transaction.atomic
    def handle(self, *args, **options):
        learner = self._user(LEARNER, "learner@example.com", staff=False)
        instructor = self._user(INSTRUCTOR, "instructor@example.com", staff=True)
        instructor.groups.add(instructors_group())
        for user in (learner, instructor):
            Profile.objects.for_user(user)
        self.stdout.write(self.style.SUCCESS("Demo accounts (local use only):"))
        # make run passes its PORT, so the addresses printed are the ones it serves.
        site = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
        self.stdout.write(f"  learner:    {LEARNER} / {DEMO_PASSWORD}   {site}/")
        self.stdout.write(f"  instructor: {INSTRUCTOR} / {DEMO_PASSWORD}   {site}/admin/")

    def _user(self, username: str, email: str, *, staff: bool) -> User:
        user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
        user.email = email
        user.is_staff = staff
        user.set_password(DEMO_PASSWORD)
        user.save()
        return user
