"""The learner's dashboard — standing, readiness, what to practise next, history — and its exports."""
import hashlib
import json

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone, translation

from accounts.models import Profile
from exams import csvcells
from exams.letters import choice_label
from exams.models import Attempt, Bookmark, Exam, RegradeChange, Response
from exams.room import services
from exams.room.access import HELD_TEXT, held_back, running_mock_question_ids
from exams.study import ability, progress
from exams.study.views import practice

HISTORY_PAGE_SIZE = 20


def _chosen_exam(request: HttpRequest) -> Exam | None:
    # The domains once, for the standings, mastery over time, the builder and the page (three reads before).
    exams = Exam.objects.filter(is_published=True).prefetch_related("domains")
    code = request.GET.get("exam")
    if code:
        exam = exams.filter(code=code).first()
        if exam:
            return exam
    attempted = exams.filter(attempts__user=request.user).order_by("-attempts__started_at").first()
    return attempted or exams.order_by("code").first()


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    services.finalize_expired(user=request.user)
    exam = _chosen_exam(request)
    running = list(Attempt.objects.in_progress().with_clock().filter(user=request.user).select_related("exam", "domain"))
    context = {"exam": exam, "running": running}
    if exam is not None:
        # The key rule for totals: every figure below that counts a question the running
        # mock holds is shown as held (exams.room.access.held_back).
        held = held_back(request.user)
        standings = progress.domain_standings(user=request.user, exam=exam, held=held.question_ids)
        history = (
            Attempt.objects.finished().filter(user=request.user, exam=exam)
            .select_related("domain").order_by("-finished_at", "-pk")
        )
        page = Paginator(history, HISTORY_PAGE_SIZE).get_page(request.GET.get("page"))
        for attempt in page.object_list:
            attempt.held = held.attempt(attempt.pk)
        trend = progress.mock_trend(user=request.user, exam=exam)
        answered = sum(s.answered for s in standings)
        # The window may count an answer the running mock holds: then the figures wait (the key rule).
        estimate_held = answered >= progress.readiness.MIN_ANSWERED and any(s.held for s in standings)
        # Held: the readiness is not shown, so it is not simulated either.
        profile = Profile.objects.for_user(request.user)
        learner = ability.learner_estimate(user=request.user, exam=exam, standings=standings, held=estimate_held)
        context |= {
            "standings": standings,
            "answered_total": answered,
            "minimum_answers": progress.readiness.MIN_ANSWERED,
            "estimate": None if estimate_held else learner.readiness,
            "estimate_held": estimate_held,
            "held_text": HELD_TEXT,
            "calibrated": learner.calibrated,
            # A held domain's level would tell its mastery: held, as the table's row is.
            "standing_rows": [(s, None if s.held else learner.domain_ability.get(s.domain_id)) for s in standings],
            "rough_below": progress.readiness.ROUGH_BELOW,
            "weakest": progress.weakest_domain(standings, learner.domain_ability),
            "reviews": progress.review_outlook(user=request.user, exam=exam),
            "profile": profile,
            "review_sizes": services.REVIEW_SESSION_SIZES,
            "calibration": progress.certainty_calibration(user=request.user, exam=exam),
            "calibration_after": progress.CALIBRATION_AFTER,
            "trend": trend,
            "chart": progress.trend_chart(trend, exam.passing_score, held=held.attempt_ids),
            "mastery_charts": progress.mastery_charts(
                progress.mastery_history(user=request.user, exam=exam, mocks=trend, held=held.question_ids),
                exam.passing_score,
            ),
            "page": page,
            "domains": exam.domains.all(),
            # Driven by the learner's attempt ids so the (attempt, event) index is used. A
            # correction to a held score, or about a held question, waits for the mock's end.
            "score_changes": RegradeChange.objects.filter(
                attempt__in=Attempt.objects.finished().filter(user=request.user, exam=exam).values("pk")
            )
            .exclude(attempt_id__in=held.attempt_ids)
            .exclude(event__erratum__question_id__in=held.question_ids)
            .select_related("attempt", "event__erratum__question")
            .order_by("-event__created_at", "-pk")[:10],
            "other_exams": Exam.objects.filter(is_published=True).exclude(pk=exam.pk),
        } | practice.builder_context(request, exam=exam, form=practice.builder_form(exam=exam), profile=profile)
        context |= _fragment_keys(context)
    return render(request, "exams/dashboard.html", context)


def _fragment_keys(context: dict) -> dict:
    """Digests of everything the page's three chart and table sections show, which the template's
    {% cache %} tags vary on: the same inputs print the same markup, so a reload with nothing new
    reuses it, and anything new (a mock, a correction, a held score, another page, another time
    zone) is a new key. At 1,000 attempts these sections were most of the template's CPU time
    (bench/scale). Nothing in them is a form (no CSRF token) and every link is the attempt's own."""
    shared = (timezone.get_current_timezone_name(), translation.get_language(), context["held_text"], context["exam"].code,
              context["exam"].passing_score, len(context["trend"]), context["calibrated"])
    chart = context["chart"]
    trend = chart and (
        {name: value for name, value in chart.items() if name != "points"},
        [(point["x"], point["y"], point["dated"], point["held"], point["attempt"].pk, point["attempt"].finished_at,
          point["attempt"].score, point["attempt"].passed) for point in chart["points"]],
    )
    page = context["page"]
    history = (
        page.number, page.paginator.num_pages,
        [(a.pk, a.finished_at, a.started_at, a.mode, a.domain and a.domain.name, a.held, a.status, a.score, a.right_count,
          a.total_count, a.equated_score, a.passed) for a in page.object_list],
    )
    return {
        "trend_key": _digest(shared, trend),
        "mastery_key": _digest(shared, context["mastery_charts"]),
        "history_key": _digest(shared, history),
    }


def _digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _export_bookmarks(user) -> list[dict]:
    """The learner's bookmarks with their notes (one query); a running mock's notes stay out."""
    # The key rule's one source (exams.room.access): a mock past its grace counts as ended there too.
    in_running_mock = running_mock_question_ids(user).filter(question_id=OuterRef("question_id"))
    rows = (
        Bookmark.objects.for_user(user).annotate(hidden=Exists(in_running_mock))
        .order_by("question_id").values("question_id", "question__title", "note", "hidden", "created_at", "updated_at")
    )
    return [
        {
            "question_id": row["question_id"], "question_title": row["question__title"],
            "note": "" if row["hidden"] else row["note"],
            "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat(),
        }
        for row in rows
    ]


def _export_notes(bookmarks: list[dict]) -> dict[int, str]:
    return {bookmark["question_id"]: bookmark["note"] for bookmark in bookmarks}


def _export_rows(user):
    """Every response of the learner's finished attempts, attempt by attempt (three queries).

    The key rule: a question also in the learner's running mock is exported without whether
    it was answered right (`correct` is empty), as its results page shows no verdict, and an
    attempt holding one without its score and pass (`held` true), as its results page holds
    them back.
    """
    held_now = held_back(user)
    held = held_now.question_ids
    responses = (
        Response.objects.filter(attempt__user=user, attempt__status__in=Attempt.FINISHED_STATUSES)
        .select_related("attempt__exam", "question", "domain")
        .prefetch_related("picks")
        .order_by("attempt__finished_at", "attempt_id", "position")
    )
    for response in responses.iterator(chunk_size=2000):
        letters = {choice_id: choice_label(index) for index, choice_id in enumerate(response.choice_order)}
        if response.question_id in held:
            response.is_correct = None
        response.attempt.held = held_now.attempt(response.attempt_id)
        yield response, "".join(sorted(letters.get(pick.choice_id, "?") for pick in response.picks.all()))


ATTEMPT_FIELDS = [
    "attempt_id", "exam", "mode", "status", "started_at", "finished_at", "score", "published_score", "passed",
    "equated_score", "held",
]
RESPONSE_FIELDS = [
    "position", "question_id", "question_title", "domain", "selected", "correct", "flagged", "answered_at", "bookmarked", "note",
]


def _attempt_values(attempt: Attempt) -> list:
    if attempt.held:  # its score counts a question the running mock holds
        return [
            attempt.pk, attempt.exam.code, attempt.mode, attempt.status, attempt.started_at.isoformat(),
            attempt.finished_at.isoformat(), None, None, None, None, True,
        ]
    return [
        attempt.pk, attempt.exam.code, attempt.mode, attempt.status, attempt.started_at.isoformat(),
        attempt.finished_at.isoformat(), attempt.score, attempt.published_score, attempt.passed, attempt.equated_score, False,
    ]


def _response_values(response: Response, selected: str, notes: dict[int, str]) -> list:
    return [
        response.position, response.question_id, response.question.title,
        response.domain.name, selected, response.is_correct, response.flagged,
        response.answered_at.isoformat() if response.answered_at else None,
        response.question_id in notes, notes.get(response.question_id, ""),
    ]


class _Echo:
    def write(self, value: str) -> str:
        return value


@login_required
def export_csv(request: HttpRequest) -> StreamingHttpResponse:
    writer = csvcells.Writer(_Echo())

    def lines():
        notes = _export_notes(_export_bookmarks(request.user))
        yield writer.writerow(ATTEMPT_FIELDS + RESPONSE_FIELDS)
        for response, selected in _export_rows(request.user):
            yield writer.writerow(_attempt_values(response.attempt) + _response_values(response, selected, notes))

    stamp = timezone.now().strftime("%Y%m%d")
    return StreamingHttpResponse(
        lines(), content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="certprep-history-{stamp}.csv"'},
    )


@login_required
def export_json(request: HttpRequest) -> HttpResponse:
    attempts: dict[int, dict] = {}
    bookmarks = _export_bookmarks(request.user)
    notes = _export_notes(bookmarks)
    for response, selected in _export_rows(request.user):
        attempt = response.attempt
        if attempt.pk not in attempts:
            attempts[attempt.pk] = dict(zip(ATTEMPT_FIELDS, _attempt_values(attempt), strict=True)) | {"responses": []}
        attempts[attempt.pk]["responses"].append(dict(zip(RESPONSE_FIELDS, _response_values(response, selected, notes), strict=True)))
    body = {
        "format": "certprep-history",
        "version": 1,
        "learner": request.user.get_username(),
        "exported_at": timezone.now().isoformat(),
        "attempts": list(attempts.values()),
        "bookmarks": bookmarks,
    }
    stamp = timezone.now().strftime("%Y%m%d")
    return HttpResponse(
        json.dumps(body, cls=DjangoJSONEncoder, indent=1), content_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="certprep-history-{stamp}.json"'},
    )
