"""A demo cohort for a local copy (make run): the demo instructor's, with the demo learner in it."""
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from cohorts.models import Cohort, Invitation, Membership
from exams.models import Exam

NAME = "Demo cohort"


class Command(BaseCommand):
    help = "Create (once) a cohort of the demo instructor's on the NCA-GENM exam with the demo learner as a member."

    @transaction.atomic
    def handle(self, *args, **options):
        instructor = User.objects.filter(username="instructor").first()
        learner = User.objects.filter(username="learner").first()
        exam = Exam.objects.filter(code="NCA-GENM").first()
        if not (instructor and learner and exam):
            raise CommandError("Run load_bank and create_demo_accounts first (make run does).")
        cohort, created = Cohort.objects.get_or_create(owner=instructor, name=NAME, defaults={"exam": exam})
        if not Invitation.objects.usable().filter(cohort=cohort).exists():
            Invitation.objects.create(cohort=cohort)
        Membership.objects.get_or_create(cohort=cohort, learner=learner)
        self.stdout.write(f"{'Created' if created else 'Kept'} “{NAME}” (instructor's, with learner): /cohorts/{cohort.pk}/")
