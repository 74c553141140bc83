"""What a learner may reach and see: the one ownership check for learner objects (404 for
anyone else), the login check for them, and the key rule's one source (running mocks)."""
from dataclasses import dataclass, field
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.db import connection
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Now
from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, AttemptStatus, Bookmark, Response


def owned_attempt(user, attempt_id: int, *, for_update: bool = False, with_clock: bool = False,
                  with_shortcuts: bool = False) -> Attempt:
    """The attempt if this user owns it; 404 otherwise (never 403: ids are not confirmed).

    `with_shortcuts` reads the learner's shortcut setting in the same query
    (`attempt.shortcuts_enabled`, and `attempt.ask_certainty_in_mocks`; None when they have
    no profile yet).
    """
    attempts = Attempt.objects.select_related("exam")
    if with_clock:
        attempts = attempts.with_clock()
    if with_shortcuts:
        profile = Profile.objects.filter(user_id=OuterRef("user_id"))
        attempts = attempts.annotate(
            shortcuts_enabled=Subquery(profile.values("shortcuts_enabled")[:1]),
            ask_certainty_in_mocks=Subquery(profile.values("ask_certainty_in_mocks")[:1]),
        )
    if for_update:
        attempts = attempts.select_for_update(of=("self",))
    return get_object_or_404(attempts, pk=attempt_id, user_id=user.pk)


def owned_bookmark(user, bookmark_id: int) -> Bookmark:
    """The bookmark if this user owns it; 404 otherwise."""
    return get_object_or_404(Bookmark.objects.select_related("question__domain"), pk=bookmark_id, user_id=user.pk)


def learner_required(view):
    """Like login_required, but an htmx request gets a 401 it can show, not a login page.

    Following a redirect to the login form would hand the page a 200 that looks like a
    saved answer; a 401 makes the page say "Not saved".
    """

    @wraps(view)
    def guarded(request, *args, **kwargs):
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if getattr(request, "htmx", False):
            return HttpResponse(
                "Your session has ended, so this was not saved. Reload the page and log in again.",
                status=401, content_type="text/plain; charset=utf-8",
            )
        return redirect_to_login(request.get_full_path())

    return guarded


def running_mock_question_ids(user) -> QuerySet:
    """The key rule: the questions of the learner's timed mocks that are still running.

    While a mock runs, no page or download of this learner shows these questions' key,
    explanation, feedback, topic or right/wrong, and no draw (practice, drill, review, a
    practice of chosen questions) takes them. Every feature that shows or draws questions
    asks here. A mock past its deadline and grace counts as ended: its answers can no longer
    change. A flat `values_list` of question ids: filter with `pk__in=` / `question_id__in=`
    (one subquery, no extra query) or take `set(...)` of it (one query).
    """
    return (
        Response.objects.filter(
            attempt__user_id=user.pk, attempt__mode=AttemptMode.MOCK, attempt__status=AttemptStatus.IN_PROGRESS,
        )
        .filter(Q(attempt__deadline__isnull=True) | Q(attempt__deadline__gte=Now() - Attempt.GRACE))
        .order_by()
        .values_list("question_id", flat=True)
    )


def in_running_mock(user, question_id: int) -> bool:
    """Whether the key rule hides this one question from this learner now."""
    return running_mock_question_ids(user).filter(question_id=question_id).exists()


HELD_TEXT = "held until your mock ends"


@dataclass(frozen=True)
class Held:
    """The key rule for totals: what a learner's running mock holds back from every total.

    A score, a domain's right count, a mastery figure or a score change that counts a
    question the running mock holds would let the learner work its verdict out (23/25
    with 22 shown right and one held), so every page and download that shows such a total
    asks here and shows HELD_TEXT instead. Empty (and false) when no mock runs.
    """

    question_ids: frozenset[int] = frozenset()
    # Finished attempts that hold one of those questions, and (attempt, domain) pairs.
    attempt_ids: frozenset[int] = frozenset()
    attempt_domains: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    def __bool__(self) -> bool:
        return bool(self.question_ids)

    def attempt(self, attempt_id: int | None) -> bool:
        """Whether this attempt's score counts a held question."""
        return attempt_id in self.attempt_ids

    def domain(self, attempt_id: int | None, domain_id: int) -> bool:
        """Whether this attempt's right count in this domain counts a held question."""
        return (attempt_id, domain_id) in self.attempt_domains


def held_back(user) -> Held:
    """What the learner's running mock holds back from totals now (one query).

    Reads the responses of held questions in the running mock itself (which names the
    questions) and in the learner's finished attempts (which names the totals they reach).
    """
    rows = _held_rows(user)
    questions, attempts, domains = set(), set(), set()
    for attempt_id, domain_id, question_id, status in rows:
        questions.add(question_id)
        if status != AttemptStatus.IN_PROGRESS:
            attempts.add(attempt_id)
            domains.add((attempt_id, domain_id))
    return Held(frozenset(questions), frozenset(attempts), frozenset(domains))


def _held_rows(user):
    """(attempt id, domain id, question id, attempt status) of the learner's responses, in the
    running mock and in their finished attempts, to the questions the running mock holds.

    On PostgreSQL, driven by the learner's own attempts: each is probed for the held ids in the
    (attempt, question) index. Driven by the questions (the planner's choice for the plain join)
    it read every learner's answers to the mock's 60 questions: 35,000 rows and 60-170 ms with a
    mock running at bench/scale, growing with the whole site's history; this reads ~25 ms at
    1,000 attempts, and nothing while no mock runs (the held set is empty, the join is skipped).
    """
    statuses = (AttemptStatus.IN_PROGRESS, *Attempt.FINISHED_STATUSES)
    if connection.vendor != "postgresql":
        return (
            Response.objects.filter(attempt__user_id=user.pk, question_id__in=running_mock_question_ids(user))
            .filter(attempt__status__in=statuses)
            .order_by()
            .values_list("attempt_id", "domain_id", "question_id", "attempt__status")
        )
    held_sql, held_params = running_mock_question_ids(user).query.sql_with_params()
    response, attempt = Response._meta.db_table, Attempt._meta.db_table
    marks = ", ".join(["%s"] * len(statuses))
    sql = f"""
        WITH held AS MATERIALIZED (SELECT ARRAY({held_sql}) AS ids),
        mine AS MATERIALIZED (SELECT id, status FROM {attempt} WHERE user_id = %s AND status IN ({marks}))
        SELECT r.attempt_id, r.domain_id, r.question_id, m.status
        FROM held h
        CROSS JOIN mine m
        CROSS JOIN LATERAL (
            SELECT x.question_id FROM {response} x WHERE x.attempt_id = m.id AND x.question_id = ANY(h.ids) OFFSET 0
        ) hit
        JOIN {response} r ON r.attempt_id = m.id AND r.question_id = hit.question_id
        WHERE cardinality(h.ids) > 0
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*held_params, user.pk, *statuses])
        return cursor.fetchall()
