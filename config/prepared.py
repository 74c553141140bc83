"""Server-side prepared statements for the exam room's two hot statements.

The plain answer save (exams.room.saving) and the question page's read (exams.room.reading) are one
statement each, run on every save and every move; PostgreSQL spent more time planning each
(0.75 and 0.59 ms) than running it. Prepared once per database connection, they are planned
once and then run from the plan PostgreSQL keeps for that connection.

Django's psycopg cursors bind parameters on the client and never prepare, which keeps
poolers working; so these go through SQL's own `PREPARE` and `EXECUTE`, still through
Django's cursor (logged, counted by the tests, errors translated). A connection that has not
prepared a statement yet prepares it first (one more statement, once per connection). Off
(`settings.PREPARED_STATEMENTS`) through PgBouncer in transaction mode, where the next
transaction may run on another server connection, and off on SQLite.
"""
import re
import weakref

from django.conf import settings
from django.db import DatabaseError, connection

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Which statements each open psycopg connection has prepared (its server session keeps them).
_prepared: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()
# SQLSTATE invalid_sql_statement_name: the session lost it (DISCARD ALL, DEALLOCATE).
_NOT_PREPARED = "26000"


BIGINT = 2**63 - 1
SMALLINT = 2**15 - 1  # a slot's position (PositiveSmallIntegerField)


def fit(value: int, most: int = BIGINT) -> bool:
    """Whether an id or position from a URL fits the parameter's type; one that does not
    cannot match a row, and the ORM's path says so (404) where EXECUTE would fail."""
    return -most - 1 <= value <= most


class Statement:
    """One statement written with `%(name)s` parameters, run prepared where it can be.

    `types` gives each parameter's SQL type, in the order PREPARE declares them.
    """

    def __init__(self, name: str, sql: str, types: dict[str, str]):
        unknown = set(_PLACEHOLDER.findall(sql)) - set(types)
        if unknown:
            raise ValueError(f"{name}: no type for {sorted(unknown)}")
        self.name, self.sql, self.order = name, sql, list(types)
        body = _PLACEHOLDER.sub(lambda m: f"${self.order.index(m.group(1)) + 1}", sql).replace("%%", "%")
        self.prepare_sql = f"PREPARE {name} ({', '.join(types.values())}) AS {body}"
        self.execute_sql = f"EXECUTE {name} ({', '.join(['%s'] * len(self.order))})"

    def execute(self, cursor, params: dict) -> None:
        if connection.vendor != "postgresql" or not getattr(settings, "PREPARED_STATEMENTS", False):
            cursor.execute(self.sql, params)
            return
        names = _prepared.setdefault(connection.connection, set())
        if self.name not in names:
            cursor.execute(self.prepare_sql)
            names.add(self.name)
        arguments = [params[name] for name in self.order]
        try:
            cursor.execute(self.execute_sql, arguments)
        except DatabaseError as error:
            if getattr(error.__cause__, "sqlstate", None) == _NOT_PREPARED:
                names.clear()  # DISCARD ALL and DEALLOCATE ALL take every one
            if getattr(error.__cause__, "sqlstate", None) != _NOT_PREPARED or connection.in_atomic_block:
                raise
            # Outside a transaction nothing is lost: prepare it again and run it.
            cursor.execute(self.prepare_sql)
            names.add(self.name)
            cursor.execute(self.execute_sql, arguments)
