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


def answered(*, attempt: Attempt, user, shown: str, domain) -> tuple[list, dict]:
    """The attempt's slots as the filter shows them (each marked `held` and `bookmarked`), and
    the confirmed errata on its questions, latest last."""
    responses = (
        attempt.responses.select_related("version", "question", "domain")
        .annotate(bookmarked=Exists(Bookmark.objects.filter(user=user, question=OuterRef("question_id"))))
        .prefetch_related("picks", "strikes", Prefetch("question__choices"))
        .order_by("position")
    )
    # The key rule: questions also in a running mock show neither key nor verdict. They are
    # listed under "wrong" whatever their grade, so the filter gives nothing away either.
    held = running_mock_question_ids(user)
    if shown == "wrong":
        responses = responses.filter(~Q(is_correct=True) | Q(question_id__in=held))
    elif shown == "flagged":
        responses = responses.filter(flagged=True)
    if domain is not None:
        responses = responses.filter(domain=domain)
    errata = {
        erratum.question_id: erratum
        for erratum in Erratum.objects.filter(
            question__responses__attempt=attempt, status=ErratumStatus.CONFIRMED
        ).select_related("corrected_version").prefetch_related("published_key").order_by("decided_at", "pk")
    }
    return list(responses.annotate(held=Exists(held.filter(question_id=OuterRef("question_id"))))), errata


def wrong_count(attempt: Attempt, *, held: frozenset[int] = frozenset()) -> int:
    """How many learner-visible questions this attempt got wrong or left unanswered ("practise these").

    A held question counts here whatever its grade, as the "wrong" filter lists it, so the
    number does not tell its verdict.
    """
    return attempt.responses.exclude(Q(is_correct=True) & ~Q(question_id__in=held)).filter(
        learner_questions("question__")
    ).count()
