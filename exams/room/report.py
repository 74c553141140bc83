"""What a finished attempt's results page reads: the previous attempt, the per-domain table, the answered questions."""
from django.db.models import Exists, OuterRef, Prefetch, Q

from exams.models import Attempt, Bookmark, Erratum, ErratumStatus, learner_questions
from exams.room import grading
from exams.room.access import running_mock_question_ids
from exams.room.services import domain_results


def previous_attempt(attempt: Attempt) -> Attempt | None:
    """The learner's attempt of the same mode finished just before this one."""
    return (
        Attempt.objects.finished()
        .filter(user=attempt.user_id, exam=attempt.exam_id, mode=attempt.mode, finished_at__lte=attempt.finished_at)
        .exclude(pk=attempt.pk)
        .order_by("-finished_at", "-pk")
        .first()
    )


def domain_table(*, attempt: Attempt, previous: Attempt | None, domains) -> list[dict]:
    """Per domain: right, total, passed, and (right, total) of the previous attempt (or None). One query."""
    by_attempt = domain_results(attempts=[a for a in (attempt, previous) if a])
    table = []
    for domain in domains:
        right, total = by_attempt[attempt.pk].get(domain.pk, (0, 0))
        table.append({
            "domain": domain,
            "right": right,
            "total": total,
            "passing": grading.is_passed(right=right, total=total, passing_score=attempt.exam.passing_score),
            "before": by_attempt[previous.pk].get(domain.pk) if previous else None,
        })
    return table


def answered(*, attempt: Attempt, user) -> tuple[list, dict]:
    """Every slot of the attempt (each marked `held` and `bookmarked`), and the confirmed
    errata on its questions, latest last. The page filters them (`listed`): the question grid
    needs every slot whatever the filter, and one read costs the same as a filtered one."""
    responses = (
        attempt.responses.select_related("version", "question", "domain")
        .annotate(bookmarked=Exists(Bookmark.objects.filter(user=user, question=OuterRef("question_id"))))
        .prefetch_related("picks", "strikes", Prefetch("question__choices"))
        .order_by("position")
    )
    held = running_mock_question_ids(user)
    errata = {
        erratum.question_id: erratum
        for erratum in Erratum.objects.filter(
            question__responses__attempt=attempt, status=ErratumStatus.CONFIRMED
        ).select_related("corrected_version").prefetch_related("published_key").order_by("decided_at", "pk")
    }
    return list(responses.annotate(held=Exists(held.filter(question_id=OuterRef("question_id"))))), errata


def listed(response, *, shown: str, domain_id: int | None) -> bool:
    """Whether a filter ("all", "wrong", "flagged", and a domain or none) lists this slot.

    The key rule: questions also in a running mock show neither key nor verdict. They are
    listed under "wrong" whatever their grade, so the filter gives nothing away either.
    """
    if domain_id is not None and response.domain_id != domain_id:
        return False
    if shown == "wrong":
        return response.held or response.is_correct is not True
    if shown == "flagged":
        return response.flagged
    return True


def verdict(response) -> str:
    """A slot's state in the learner's words: held, right, void, wrong or unanswered."""
    if response.held:
        return "held"
    if response.is_correct:
        return "right"
    if response.is_correct is None:
        return "void"
    return "wrong" if response.answered_at else "unanswered"


def wrong_count(attempt: Attempt, *, held: frozenset[int] = frozenset()) -> int:
    """How many learner-visible questions this attempt got wrong or left unanswered ("practise these").

    A held question counts here whatever its grade, as the "wrong" filter lists it, so the
    number does not tell its verdict.
    """
    return attempt.responses.exclude(Q(is_correct=True) & ~Q(question_id__in=held)).filter(
        learner_questions("question__")
    ).count()
