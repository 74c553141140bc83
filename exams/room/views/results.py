"""The end of an attempt: its review page, the submit, the results, practising what went wrong."""
from collections import Counter
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from exams.models import Attempt, AttemptMode, ExamStatistic
from exams.room import grading, navigation, reading, report, services
from exams.room.access import HELD_TEXT, Held, held_back, owned_attempt
from exams.room.views.answered import result_item
from exams.room.views.deadline import time_up


@login_required
def review(request: HttpRequest, attempt_id: int) -> HttpResponse:
    with transaction.atomic():
        attempt = owned_attempt(request.user, attempt_id, with_clock=True)
        if attempt.has_ended:
            return redirect("exams:results", attempt_id=attempt.pk)
        if attempt.is_past_grace():
            return time_up(request, attempt)
    navigator = reading.navigator_by_orm(attempt)
    return render(
        request,
        "exams/review.html",
        {
            "attempt": attempt,
            "exam": attempt.exam,
            "navigator": navigator,
            "unanswered": [slot for slot in navigator if not slot["answered"]],
            "incomplete": [slot for slot in navigator if slot["incomplete"]],
            "flagged": [slot for slot in navigator if slot["flagged"]],
            "first_unanswered": next(iter(navigation.walk_positions(navigator, "unanswered")), 1),
            "seconds_left": attempt.seconds_left(),
            "shortcuts": False,
        },
    )


@login_required
@require_POST
def submit(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """Submit after a confirmation; without JavaScript the confirmation is its own page."""
    attempt = owned_attempt(request.user, attempt_id)
    if attempt.is_abandoned:
        return _abandoned(request, attempt)
    if not attempt.is_finished and request.POST.get("confirmed") != "1":
        return _confirm_page(request, attempt)
    services.attempt_submit(
        user=request.user, attempt_id=attempt.pk, timed_out=request.POST.get("reason") == "timeout"
    )
    return redirect("exams:results", attempt_id=attempt.pk)


def _confirm_page(request: HttpRequest, attempt: Attempt) -> HttpResponse:
    navigator = reading.navigator_by_orm(attempt)
    return render(
        request,
        "exams/submit_confirm.html",
        {
            "attempt": attempt,
            "unanswered": sum(not slot["answered"] for slot in navigator),
            "flagged": sum(slot["flagged"] for slot in navigator),
            "slot_count": len(navigator),
        },
    )


# How a domain's group sums up its questions, in this order (held ones say no verdict).
TALLY = [("right", "right"), ("wrong", "wrong"), ("unanswered", "unanswered"), ("void", "not counted"), ("held", "held")]
FILTERS = {"all": "All questions", "wrong": "Wrong or unanswered", "flagged": "Flagged"}


@login_required
@vary_on_headers("HX-Request")  # the list alone or the whole page, at one address: caches keep both apart
def results(request: HttpRequest, attempt_id: int) -> HttpResponse:
    with transaction.atomic():
        attempt = owned_attempt(request.user, attempt_id, for_update=True, with_clock=True)
        if attempt.is_abandoned:
            return _abandoned(request, attempt)
        if not attempt.is_finished:
            if not attempt.is_past_grace():
                messages.info(request, "Results appear once the attempt is submitted.")
                return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)
            services.attempt_finish(attempt=attempt, expired=True)
    shown = request.GET.get("show", "all")
    if shown not in FILTERS:
        shown = "all"
    domains = attempt.exam.domains.all()
    if attempt.mode != AttemptMode.MOCK:
        # A practice, drill or review lists the domains it held, not the exam's empty ones.
        domains = domains.filter(pk__in=attempt.responses.values("domain_id"))
    domains = list(domains)
    chosen_domain = next((d for d in domains if str(d.pk) == request.GET.get("domain")), None)
    responses, errata = report.answered(attempt=attempt, user=request.user)
    # The key rule for totals: a score or domain count that includes a question the running
    # mock holds is shown as held, and so is a change measured from one.
    held = held_back(request.user)
    context = {
        "attempt": attempt,
        "exam": attempt.exam,
        "shown": shown,
        "filters": FILTERS,
        "domains": domains,
        "chosen_domain": chosen_domain,
        **_questions(responses, errata, domains=domains, shown=shown, chosen_domain=chosen_domain),
        "wrong_count": report.wrong_count(attempt, held=held.question_ids),
        "practice_in_progress": Attempt.objects.in_progress().filter(
            user=request.user, exam=attempt.exam, mode=AttemptMode.PRACTICE
        ).first(),
        "held_count": sum(response.held for response in responses),
    }
    if request.htmx and not request.htmx.history_restore_request:
        # A filter swaps the questions in place: the score, table and chart above stay as they are.
        return render(request, "exams/results.html#questions", context)
    previous = report.previous_attempt(attempt)
    table = [
        _held_row(row, held=held, attempt=attempt, previous=previous)
        for row in report.domain_table(attempt=attempt, previous=previous, domains=domains)
    ]
    return render(
        request,
        "exams/results.html",
        {
            **context,
            "table": table,
            "chart": _chart(table, attempt.exam.passing_score),
            "previous": previous,
            # No column of dashes: a change shows only where a domain has one.
            "show_change": any(row["change"] is not None for row in table),
            "score_held": held.attempt(attempt.pk),
            "held_text": HELD_TEXT,
            # A correction's notice waits while the mock holds this attempt's score or its question.
            "score_changes": [] if held.attempt(attempt.pk) else attempt.regrade_changes.exclude(
                event__erratum__question_id__in=held.question_ids
            ).select_related("event__erratum__question").order_by("event__created_at"),
            "calibrated": attempt.mode == AttemptMode.MOCK and attempt.equated_score is None and ExamStatistic.objects.filter(
                exam=attempt.exam, first_mock_only=False, calibrated=True).exists(),
        },
    )


def _held_row(row: dict, *, held: Held, attempt: Attempt, previous: Attempt | None) -> dict:
    """A domain row with its percent and change, or marked held (no count, no change)."""
    domain_id = row["domain"].pk
    if held.domain(attempt.pk, domain_id):
        return dict(row, right=None, passing=None, percent=None, change=None, held=True, before=None)
    if previous is not None and held.domain(previous.pk, domain_id):
        row = dict(row, before=None)
    return dict(row, percent=_domain_percent(row["right"], row["total"]), change=_change(row), held=False)


def _questions(responses: list, errata: dict, *, domains: list, shown: str, chosen_domain) -> dict:
    """The question grid (every slot, whatever the filter) and the listed questions grouped by domain.

    A grid cell whose question the filter leaves out links to the whole list at that question.
    Groups start closed unless the learner narrowed the list (a filter or a domain): then
    they asked to see those questions.
    """
    domain_id = chosen_domain.pk if chosen_domain else None
    grid, by_domain = [], {}
    for response in responses:
        state = report.verdict(response)
        is_listed = report.listed(response, shown=shown, domain_id=domain_id)
        corrected = not response.held and response.question_id in errata
        notes = [state] + (["flagged"] if response.flagged else []) + (["changed by a correction"] if corrected else [])
        grid.append({
            "position": response.position, "state": state, "flagged": response.flagged, "corrected": corrected,
            "label": f"Question {response.position}: " + ", ".join(notes),
            "href": f"#q-{response.position}" if is_listed else f"?show=all#q-{response.position}",
        })
        if is_listed:
            item = result_item(response, None if response.held else errata.get(response.question_id), held=response.held)
            item["state"] = state
            by_domain.setdefault(response.domain_id, []).append(item)
    narrowed = shown != "all" or chosen_domain is not None
    groups = []
    # A slot keeps the domain it was drawn in; one the exam no longer lists still shows, last.
    known = {domain.pk for domain in domains}
    extra = [items[0]["response"].domain for pk, items in by_domain.items() if pk not in known]
    for domain in [*domains, *extra]:
        items = by_domain.get(domain.pk, [])
        if not items:
            continue
        states = Counter(item["state"] for item in items)
        tally = ", ".join(f"{states[state]} {word}" for state, word in TALLY if states[state])
        count = f"{len(items)} question{'s' if len(items) != 1 else ''}"
        groups.append({"domain": domain, "items": items, "tally": f"{count}: {tally}", "open": narrowed})
    return {"grid": grid, "groups": groups, "listed_count": sum(len(group["items"]) for group in groups)}


def _change(row: dict) -> Decimal | None:
    """A domain's change since the previous attempt of the same mode, in points."""
    before = _domain_percent(*row["before"]) if row["before"] else None
    now = _domain_percent(row["right"], row["total"])
    return now - before if now is not None and before is not None else None


@login_required
@require_POST
def practise_wrong(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """An untimed practice of exactly the questions this attempt got wrong or left unanswered."""
    attempt = owned_attempt(request.user, attempt_id)
    if attempt.is_abandoned:
        return _abandoned(request, attempt)
    if not attempt.is_finished:
        return redirect("exams:attempt", attempt_id=attempt.pk)
    services.finalize_expired(user=request.user)
    running = Attempt.objects.in_progress().filter(user=request.user, exam=attempt.exam, mode=AttemptMode.PRACTICE).first()
    if running is not None and request.POST.get("abandon") != str(running.pk):
        messages.info(request, "You have a practice session in progress: finish it, or abandon it to practise these.")
        return redirect("exams:results", attempt_id=attempt.pk)
    wrong = list(
        attempt.responses.exclude(is_correct=True).order_by("position").values_list("question_id", flat=True)
    )
    try:
        # Abandoning the running practice and starting this one stand or fall together.
        with transaction.atomic():
            if running is not None:
                services.attempt_abandon(user=request.user, attempt_id=running.pk)
            started = services.attempt_start(user=request.user, exam=attempt.exam, mode=AttemptMode.PRACTICE, question_ids=wrong)
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return redirect("exams:results", attempt_id=attempt.pk)
    messages.info(request, f"Practising the {started.attempt.responses.count()} questions you got wrong or left unanswered.")
    return redirect("exams:question", attempt_id=started.attempt.pk, position=1)


def _abandoned(request: HttpRequest, attempt: Attempt) -> HttpResponse:
    """An abandoned practice has no results: it was ended before it was submitted."""
    messages.info(
        request,
        "You ended that practice before submitting it, so it has no score and no results. "
        "The answers you checked in it still count towards your reviews.",
    )
    return redirect(reverse("exams:dashboard") + f"?exam={attempt.exam.code}")


def _domain_percent(right: int, total: int) -> Decimal | None:
    """A domain's percent, rounded as every score is shown."""
    return grading.shown_percent(grading.score_percent(right=right, total=total)) if total else None


def _chart(table: list[dict], passing_score: int) -> dict:
    """The per-domain bars: each bar's length in percent of its track."""
    return {
        "rows": [
            {"label": row["domain"].name, "percent": row["percent"], "passed": row["passing"], "held": row["held"],
             "length": float(row["percent"] or 0)}
            for row in table
        ],
        "passing_score": passing_score,
    }


