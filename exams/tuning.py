"""Per-transaction PostgreSQL settings for the few statements that work through millions of rows.

JIT is off for every connection (config.settings), so only memory is raised here.
"""
from contextlib import contextmanager

from django.db import connection as default_connection


@contextmanager
def local_work_mem(size: str, *, connection=default_connection):
    """`work_mem` raised for the statements inside, back to the default after.

    SET LOCAL cannot outlive the transaction, so the caller must be in one; SQLite has no
    such setting and is left alone.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{size}'")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL work_mem TO DEFAULT")
