"""Learners' reports on a question: they gather on its one open erratum."""

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils import timezone

from exams.models import Choice, Dispute, Erratum, ErratumSource, ErratumStatus, Response


def dispute_report(*, user, response: Response, choice_ids: Iterable[int] = (), reason: str) -> Dispute:
    """File or edit the learner's report on a question; reports gather on its one open erratum.

    `choice_ids` are the choices the learner believes right, as many as the question's
    Choose N (the form checks); none is "no opinion". Only the slot's own choices count.
    """
    choice_ids = [pk for pk in dict.fromkeys(choice_ids) if pk in set(response.choice_order)]
    with transaction.atomic():
        erratum = Erratum.objects.filter(question_id=response.question_id, status=ErratumStatus.REPORTED).first()
        if erratum is None:
            try:
                with transaction.atomic():
                    erratum = Erratum.objects.create(
                        question_id=response.question_id, source=ErratumSource.LEARNERS, status=ErratumStatus.REPORTED
                    )
                    # What learners are graded on now is the key the reports dispute.
                    erratum.published_key.set(Choice.objects.filter(question_id=response.question_id, is_correct=True))
            except IntegrityError:
                # Someone else opened it a moment ago: join theirs.
                erratum = Erratum.objects.get(question_id=response.question_id, status=ErratumStatus.REPORTED)
        dispute, _ = Dispute.objects.update_or_create(
            erratum=erratum,
            learner=user,
            defaults={"reason": reason, "response": response, "updated_at": timezone.now()},
        )
        dispute.choices.set(choice_ids)
    return dispute
