"""Django's ModelBackend, with the user read every signed-in request makes in plain SQL.

`get_user` is what `django.contrib.auth.get_user` calls on every request for the user id in
the session; it returns the same user, or None for an unknown or inactive one, as Django's
(`user_can_authenticate`), and the session's password hash is still checked by Django
after it. Only the read changes: one SQL statement instead of an ORM query compiled on
every request, which cost a plain save 0.3 ms of CPU (docs/BENCHMARKS.md, issue 23);
psycopg prepares it like any statement a connection runs often. Elsewhere than
PostgreSQL it is Django's.
"""
from django.contrib.auth import backends, get_user_model
from django.db import connection
from psycopg.types.numeric import Int4

User = get_user_model()
FIELDS = [field.attname for field in User._meta.concrete_fields]
READ = (
    f"SELECT {', '.join(connection.ops.quote_name(field.column) for field in User._meta.concrete_fields)} "
    f"FROM {connection.ops.quote_name(User._meta.db_table)} WHERE {connection.ops.quote_name(User._meta.pk.column)} = %s"
)


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        if connection.vendor != "postgresql" or not isinstance(user_id, int) or not -(2**31) <= user_id < 2**31:
            return super().get_user(user_id)
        with connection.cursor() as cursor:
            cursor.execute(READ, [Int4(user_id)])  # typed as the column: one prepared statement
            row = cursor.fetchone()
        if row is None:
            return None
        user = User.from_db(connection.alias, FIELDS, row)
        return user if self.user_can_authenticate(user) else None
