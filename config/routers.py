"""Send statistics reads to a read replica when one is configured (DATABASE_REPLICA_URL).

Only code that asks for it reads from the replica: item statistics run inside
`statistics_reads()`. Everything a learner does — answers, grading, their own pages —
stays on the primary, so nobody ever reads their own write from a lagging copy.
"""
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

_statistics = ContextVar("statistics_reads", default=False)
REPLICA = "replica"


@contextmanager
def statistics_reads():
    token = _statistics.set(True)
    try:
        yield
    finally:
        _statistics.reset(token)


class StatisticsReplicaRouter:
    def db_for_read(self, model, **hints):
        if _statistics.get() and REPLICA in settings.DATABASES:
            return REPLICA
        return None

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        # The replica holds the same rows as the primary.
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"
