"""Bookmark workflows: add one (a double click makes one), edit its note."""

from django.db import IntegrityError, transaction
from django.utils import timezone

from exams.models import Bookmark, Response


def bookmark_add(*, user, response: Response) -> tuple[Bookmark, bool]:
    """Bookmark the question of a slot (the view checks the learner has answered and seen it).

    A double click makes one bookmark: the unique (user, question) constraint decides.
    """
    try:
        with transaction.atomic():
            return Bookmark.objects.get_or_create(user=user, question_id=response.question_id)
    except IntegrityError:
        return Bookmark.objects.get(user=user, question_id=response.question_id), False


def bookmark_note(*, bookmark: Bookmark, note: str) -> None:
    bookmark.note = note
    bookmark.updated_at = timezone.now()
    bookmark.full_clean(exclude=["user", "question"])
    bookmark.save(update_fields=["note", "updated_at"])
