"""A cohort member's mock results as their instructor sees them: score, per domain, and per
question only right / wrong / unanswered (never notes, certainty, picks or strikes)."""
from cohorts.access import attempts_visible_to
from cohorts.models import Cohort, Membership
from exams.models import Attempt, AttemptMode
from exams.room.report import domain_table


class Outcome:
    RIGHT = "Right"
    WRONG = "Wrong"
    UNANSWERED = "Unanswered"
    NOT_SCORED = "Not scored (voided)"


def outcome_of(*, answered: bool, is_correct: bool | None) -> str:
    if not answered:
        return Outcome.UNANSWERED
    if is_correct is None:
        return Outcome.NOT_SCORED
    return Outcome.RIGHT if is_correct else Outcome.WRONG


def member_mocks(*, cohort: Cohort, membership: Membership, chosen: str | None, viewer) -> dict:
    """The member's finished mocks of the cohort's exam, newest first, and the chosen one
    (the newest unless ?attempt= names another of them) in detail. A fixed number of queries."""
    mocks = list(
        attempts_visible_to(
            viewer,
            Attempt.objects.finished().filter(user_id=membership.learner_id, exam_id=cohort.exam_id, mode=AttemptMode.MOCK),
        )
        .select_related("exam")
        .order_by("-finished_at", "-pk")
    )
    by_id = {str(attempt.pk): attempt for attempt in mocks}
    attempt = by_id.get(chosen or "") or (mocks[0] if mocks else None)
    if attempt is None:
        return {"mocks": [], "attempt": None}
    slots = [
        {
            "position": position,
            "title": title,
            "domain": domain,
            "outcome": outcome_of(answered=answered_at is not None, is_correct=is_correct),
        }
        # Only these columns are read: the learner's notes and certainty never leave the table.
        for position, title, domain, answered_at, is_correct in attempt.responses.order_by("position").values_list(
            "position", "question__title", "domain__name", "answered_at", "is_correct"
        )
    ]
    return {
        "mocks": mocks,
        "attempt": attempt,
        "domains": domain_table(attempt=attempt, previous=None, domains=list(cohort.exam.domains.all())),
        "slots": slots,
        "counts": {
            name: sum(slot["outcome"] == name for slot in slots)
            for name in (Outcome.RIGHT, Outcome.WRONG, Outcome.UNANSWERED)
        },
    }
