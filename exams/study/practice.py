"""Practice workflows: build a session from the learner's plan, add another question like this one."""
import hashlib
import random
import secrets
from dataclasses import dataclass

from django.db import models
from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Q, QuerySet

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, Bookmark, Choice, Domain, Exam, Question, QuestionVersion, Response
from exams.room import draw
from exams.room.access import running_mock_question_ids
from exams.room.services import Started, StartRefused, attempt_start
from exams.statistics import calibration
from exams.study import builder


class PracticeSource(models.TextChoices):
    ALL = "all", "All questions"
    UNSEEN = "unseen", "Not yet seen"
    MISSED = "missed", "Missed in my last mocks"
    FLAGGED = "flagged", "Flagged in my last mocks"
    BOOKMARKED = "bookmarked", "Bookmarked"


@dataclass(frozen=True)
class PracticePlan:
    """What the learner asked the practice builder for (validated by PracticeBuilderForm)."""

    domains: tuple[Domain, ...]
    # Per domain id, the topics chosen within it; a domain not in here takes all its topics.
    topics: dict[int, frozenset[str]]
    count: int
    source: str = PracticeSource.ALL
    mocks: int = 2
    minutes: int | None = None
    feedback_at_end: bool = False


def _matching(*, user, exam: Exam, plan: PracticePlan) -> QuerySet:
    """The questions that match the plan (annotated `seen` only when the plan asks for unseen ones).

    Never a question of a mock the learner has running (its key would show).
    """
    questions = _bank_matching(exam=exam, plan=plan).exclude(pk__in=running_mock_question_ids(user))
    if plan.source == PracticeSource.UNSEEN:
        questions = questions.annotate(seen=_seen(user)).filter(seen=False)
    elif plan.source in (PracticeSource.MISSED, PracticeSource.FLAGGED):
        last_mocks = (
            Attempt.objects.finished().filter(user=user, exam=exam, mode=AttemptMode.MOCK)
            .order_by("-finished_at", "-pk").values("pk")[: plan.mocks]
        )
        slots = Response.objects.filter(attempt__in=last_mocks)
        if plan.source == PracticeSource.MISSED:
            slots = slots.filter(Q(is_correct=False) | Q(answered_at__isnull=True))
        else:
            slots = slots.filter(flagged=True)
        questions = questions.filter(pk__in=slots.values("question_id"))
    elif plan.source == PracticeSource.BOOKMARKED:
        questions = questions.filter(pk__in=Bookmark.objects.filter(user=user).values("question_id"))
    return questions


def _bank_matching(*, exam: Exam, plan: PracticePlan) -> QuerySet:
    """The questions learners meet in the plan's domains and topics, whoever asks."""
    questions = Question.objects.active().filter(exam=exam, domain__in=[domain.pk for domain in plan.domains])
    if plan.topics:
        within = Q(domain__in=[domain.pk for domain in plan.domains if domain.pk not in plan.topics])
        for domain_id, topics in plan.topics.items():
            within |= Q(domain_id=domain_id, topic__in=sorted(topics))
        questions = questions.filter(within)
    return questions


def _seen(user) -> Exists:
    return Exists(Response.objects.filter(attempt__user=user, question=OuterRef("pk")))


def practice_candidates(*, user, exam: Exam, plan: PracticePlan) -> tuple[list[builder.Candidate], set[int]]:
    """The questions that match the plan, and which of them the learner has seen: one query.

    Never a question of a mock the learner has running (its key would show).
    """
    questions = _matching(user=user, exam=exam, plan=plan)
    if plan.source != PracticeSource.UNSEEN:
        questions = questions.annotate(seen=_seen(user))
    rows = questions.order_by().values_list("pk", "domain_id", "exclusion_group", "seen")
    candidates, seen_ids = [], set()
    for question_id, domain_id, group, was_seen in rows:
        candidates.append(builder.Candidate(question_id, domain_id, group))
        if was_seen:
            seen_ids.add(question_id)
    return candidates, seen_ids


def practice_count(*, user, exam: Exam, plan: PracticePlan) -> int:
    """How many questions a session built from the plan can hold (one per exclusion group): one query.

    builder.distinct's count, taken in the database: the dashboard asks on every load, and
    reading a 10,000-question bank's rows (and whether each was seen) took tens of ms there.
    """
    counts = _matching(user=user, exam=exam, plan=plan).order_by().aggregate(
        ungrouped=Count("pk", filter=Q(exclusion_group="")),
        groups=Count("exclusion_group", distinct=True, filter=~Q(exclusion_group="")),
    )
    return counts["ungrouped"] + counts["groups"]


def bank_count(*, exam: Exam, plan: PracticePlan) -> int:
    """practice_count for a plan drawing from all questions while no mock of the learner runs:
    then nothing about the learner changes the count, so it is the bank's, cached per process
    under the bank's version (calibration.bank_cached; one query when warm). The dashboard asks
    on every load; the count read the 10,000-question bank (7.5 ms at bench/scale)."""
    assert plan.source == PracticeSource.ALL
    domains = sorted(domain.pk for domain in plan.domains)
    topics = sorted((domain_id, sorted(chosen)) for domain_id, chosen in plan.topics.items())
    digest = hashlib.sha256(repr((domains, topics)).encode()).hexdigest()[:32]

    def read() -> int:
        counts = _bank_matching(exam=exam, plan=plan).order_by().aggregate(
            ungrouped=Count("pk", filter=Q(exclusion_group="")),
            groups=Count("exclusion_group", distinct=True, filter=~Q(exclusion_group="")),
        )
        return counts["ungrouped"] + counts["groups"]

    return calibration.bank_cached(exam, f"builder-count:{digest}", read)


def practice_build(*, user, exam: Exam, plan: PracticePlan, seed: int | None = None) -> Started:
    """Draw and start the practice the learner built: as many as asked, or all that match.

    Raises StartRefused when nothing matches. Started.asked is set when fewer matched.
    """
    candidates, seen = practice_candidates(user=user, exam=exam, plan=plan)
    if not candidates:
        raise StartRefused("No question matches these choices: widen them (more domains or topics, another source).")
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    question_ids = builder.draw(
        candidates=candidates,
        domains=[draw.DomainQuota(domain_id=d.pk, weight=d.weight, order=d.order) for d in plan.domains],
        total=plan.count,
        rng=rng,
        seen=seen,
    )
    minutes = None
    if plan.minutes is not None:
        minutes = float(plan.minutes * Profile.objects.for_user(user).accommodation_factor)
    started = attempt_start(
        user=user, exam=exam, mode=AttemptMode.PRACTICE, question_ids=question_ids, seed=rng.randrange(2**63),
        minutes=minutes, feedback_at_end=plan.feedback_at_end,
    )
    if started.created and len(question_ids) < plan.count:
        return Started(started.attempt, created=True, asked=plan.count)
    return Started(started.attempt, created=started.created)


class NothingLikeIt(Exception):
    """"Try another like this" found nothing to add; the message says why."""


def attempt_add_like(*, attempt: Attempt, response: Response, seed: int | None = None) -> Response:
    """Add one unseen question of the same topic to the session, as its last slot.

    The caller holds the attempt's row lock, so two clicks never take one position. Unseen
    means in no attempt of this learner, which also keeps out a running mock's questions.
    """
    topic = response.question.topic
    if not topic:
        raise NothingLikeIt("This question has no topic in the bank, so there is no other like it to add.")
    taken_groups = attempt.responses.exclude(question__exclusion_group="").values("question__exclusion_group")
    rows = list(
        Question.objects.active()
        .filter(exam=attempt.exam, domain_id=response.question.domain_id, topic=topic)
        .exclude(Exists(Response.objects.filter(attempt__user=attempt.user, question=OuterRef("pk"))))
        .exclude(exclusion_group__in=taken_groups)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not rows:
        raise NothingLikeIt(f"You have already seen every question on “{topic}”: there is none left to add.")
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    question = Question.objects.prefetch_related(
        Prefetch("choices", queryset=Choice.objects.order_by("order", "pk"))
    ).get(pk=rng.choice(rows))
    version = QuestionVersion.objects.current_for([question])[question.pk]
    last = attempt.responses.aggregate(last=Max("position"))["last"] or 0
    return Response.objects.create(
        attempt=attempt,
        position=last + 1,
        question=question,
        domain_id=question.domain_id,
        version=version,
        choice_order=draw.shuffle_choices(
            choice_ids=[choice.pk for choice in question.choices.all()], keep_order=question.keep_order, rng=rng
        ),
    )
