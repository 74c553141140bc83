"""Learners' reports on a question: they gather on its one open erratum."""

from django.db import IntegrityError, transaction
from django.utils import timezone

from exams.models import Choice, Dispute, Erratum, ErratumSource, ErratumStatus, Response


def dispute_report(*, user, response: Response, choice_id: int | None, reason: str) -> Dispute:
    """File or edit the learner's report on a question; reports gather on its one open erratum."""
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
            defaults={"choice_id": choice_id, "reason": reason, "response": response, "updated_at": timezone.now()},
        )
    return dispute
