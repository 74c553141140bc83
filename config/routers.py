"""Send statistics reads to a read replica when one is configured (DATABASE_REPLICA_URL).

Only code that asks for it reads from the replica: item statistics run inside
`statistics_reads()`. Everything a learner does — answers, grading, their own pages —
stays on the primary, so nobody ever reads their own write from a lagging copy. A
replica that cannot be reached sends statistics back to the primary for a while.
"""
import time
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DatabaseError, connections

_statistics = ContextVar("statistics_reads", default=False)
REPLICA = "replica"
# A replica found unreachable is left alone this long: statistics read the primary meanwhile.
RETRY_AFTER = 30.0
_replica_down_until = [0.0]


def replica_reachable() -> bool:
    """Whether the replica takes connections now. One that does not (stopped, restarting)
    sends statistics to the primary for RETRY_AFTER seconds instead of failing the page;
    it costs one failed connection attempt (the replica's pool timeout) per RETRY_AFTER."""
    if time.monotonic() < _replica_down_until[0]:
        return False
    replica = connections[REPLICA]
    try:
        replica.ensure_connection()
    except DatabaseError:
        _replica_down_until[0] = time.monotonic() + RETRY_AFTER
        try:
            replica.close()
        except DatabaseError:
            pass
        return False
    return True


@contextmanager
def statistics_reads():
    token = _statistics.set(True)
    try:
        yield
    finally:
        _statistics.reset(token)


class StatisticsReplicaRouter:
    def db_for_read(self, model, **hints):
        if _statistics.get() and REPLICA in settings.DATABASES and replica_reachable():
            return REPLICA
        return None

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        # The replica holds the same rows as the primary.
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"
