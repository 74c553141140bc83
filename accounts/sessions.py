"""Django's database sessions, with the read every signed-in request makes in plain SQL.

`SESSION_ENGINE = "accounts.sessions"`: the same table, the same signed encoding, the same
expiry check (`expire_date` after the application's clock) and the same answer for a key
that is unknown or expired (an empty session under a fresh key), so sessions written by
Django's own engine stay valid and logout still deletes the row. Only the load changes:
one SQL statement instead of an ORM query compiled on every request, which cost a plain
save 0.4 ms of CPU, a fifth of it (docs/BENCHMARKS.md, issue 23); psycopg prepares it like
any statement a connection runs often. Elsewhere than PostgreSQL it is Django's load. A
session signed in through Django's ModelBackend reads as signed in through ours
(accounts.backends), which extends it.
"""
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone

LOAD = "SELECT session_data FROM django_session WHERE session_key = %s AND expire_date > %s"

# Sessions signed in before accounts.backends.ModelBackend took over name Django's, which it
# extends: they read as ours, so nobody is signed out by the change.
LEGACY_BACKEND = "django.contrib.auth.backends.ModelBackend"
BACKEND = "accounts.backends.ModelBackend"


class SessionStore(db.SessionStore):
    def load(self):
        data = super().load()
        if data.get(BACKEND_SESSION_KEY) == LEGACY_BACKEND:
            data[BACKEND_SESSION_KEY] = BACKEND
        return data

    def _get_session_from_db(self):
        if connection.vendor != "postgresql":
            return super()._get_session_from_db()
        with connection.cursor() as cursor:
            cursor.execute(LOAD, [self.session_key, timezone.now()])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return self.model(session_key=self.session_key, session_data=row[0])
