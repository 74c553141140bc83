"""The admin's attempt pages, narrowed to what a cohort allows (cohorts.access).

The exams app registers AttemptAdmin; cohorts depends on exams, never the reverse, so the
rule that needs cohorts is applied here by registering the same admin again, scoped. Model
permissions alone would let every instructor read every learner's scores.
"""
from django.contrib import admin

from cohorts.access import attempts_visible_to, may_read_attempt
from exams.bank.admin import AttemptAdmin
from exams.models import Attempt


class CohortScopedAttemptAdmin(AttemptAdmin):
    def get_queryset(self, request):
        return attempts_visible_to(request.user, super().get_queryset(request))

    def has_view_permission(self, request, obj=None):
        allowed = super().has_view_permission(request, obj)
        return allowed and (obj is None or may_read_attempt(request.user, obj))


if admin.site.is_registered(Attempt):
    admin.site.unregister(Attempt)
admin.site.register(Attempt, CohortScopedAttemptAdmin)
