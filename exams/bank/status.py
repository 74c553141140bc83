"""Question status: what keeps a draft from learners, and marking drafts ready."""
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Prefetch

from exams.bank.formats import ParsedChoice, ParsedQuestion, ready_problems
from exams.models import Choice, Question, QuestionStatus


def question_as_parsed(question: Question) -> ParsedQuestion:
    """A question of the bank as the formats see it, so the importers' checks apply to it
    (its choices prefetched, in order; its domain and errata play no part in readiness)."""
    return ParsedQuestion(
        line=question.pk,
        title=question.title,
        stem=question.stem,
        explanation=question.explanation,
        kind=question.kind,
        choose=question.choose,
        keep_order=question.keep_order,
        domain=None,
        choices=tuple(
            ParsedChoice(text=choice.text, is_correct=choice.is_correct, feedback=choice.feedback)
            for choice in question.choices.all()
        ),
        topic=question.topic,
        exhibit=question.exhibit,
        sources=question.sources,
        exclusion_group=question.exclusion_group,
        idnumber=question.idnumber,
        difficulty=question.difficulty,
        reviewed_on=question.reviewed_on,
        status=question.status,
    )


def with_choices(questions):
    """The questions with their choices in order, for question_lacks (one query more)."""
    return questions.prefetch_related(Prefetch("choices", queryset=Choice.objects.order_by("order", "pk")))


def question_lacks(question: Question) -> list[str]:
    """What keeps this question from being ready; empty when "Mark ready" would take it."""
    return ready_problems(question_as_parsed(question))


@dataclass
class MarkedReady:
    marked: list[Question] = field(default_factory=list)
    already: list[Question] = field(default_factory=list)
    refused: list[tuple[Question, list[str]]] = field(default_factory=list)

    def messages(self) -> tuple[str, list[str]]:
        """The headline and, per refused question, why (for the admin's messages)."""
        parts = []
        if self.marked:
            parts.append(f"Marked {len(self.marked)} question{'s' if len(self.marked) != 1 else ''} ready.")
        if self.already:
            parts.append(f"{len(self.already)} {'was' if len(self.already) == 1 else 'were'} ready already.")
        if self.refused:
            count = len(self.refused)
            parts.append(f"{count} question{'s' if count != 1 else ''} stay{'s' if count == 1 else ''} draft:")
        reasons = [f"“{question.title}” (#{question.pk}): {'; '.join(problems)}." for question, problems in self.refused]
        return " ".join(parts) or "No question was selected.", reasons


@transaction.atomic
def questions_mark_ready(*, question_ids) -> MarkedReady:
    """Mark these questions ready where each passes the ready checks; the rest stay drafts,
    each with its reasons. The rows are locked, so an edit saved meanwhile is checked too."""
    outcome = MarkedReady()
    locked = list(Question.objects.select_for_update().filter(pk__in=list(question_ids)).order_by("pk").values_list("pk", flat=True))
    for question in with_choices(Question.objects.filter(pk__in=locked).order_by("pk")):
        if question.status == QuestionStatus.READY:
            outcome.already.append(question)
            continue
        problems = question_lacks(question)
        if problems:
            outcome.refused.append((question, problems))
        else:
            outcome.marked.append(question)
    if outcome.marked:
        # Not content: no new version, and the edit time stays the last edit's.
        Question.objects.filter(pk__in=[question.pk for question in outcome.marked]).update(status=QuestionStatus.READY)
    return outcome
