"""One account per email address, compared without case (a database constraint backs the check)."""
from django.contrib.auth.models import User
from django.db.models import Value
from django.db.models.functions import Lower

EMAIL_TAKEN = "An account with this email address already exists. Log in or reset the password."

# The constraint, user_email_ci_unique, is on auth_user, which this project does not own:
# accounts' migration 0002 adds it through the schema editor, so PostgreSQL and SQLite each
# get a partial index on LOWER(email). The check compares as the index does.


def email_taken(email: str, *, user_pk: int | None = None) -> bool:
    """Whether another account holds this address, compared as the constraint compares it."""
    if not email:
        return False
    return (
        User.objects.alias(lowered=Lower("email")).filter(lowered=Lower(Value(email)))
        .exclude(pk=user_pk).exists()
    )
