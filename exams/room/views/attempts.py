"""Attempts of every mode: start, one question at a time, check (practice), review, submit, results."""
from contextlib import nullcontext
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Exists, OuterRef, Prefetch, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url, reswap, retarget, trigger_client_event

from accounts.models import Profile
from exams.room import grading, reading, saving, services
from exams.study import progress
from exams.room.access import in_running_mock, learner_required, owned_attempt, running_mock_question_ids
from exams.bank.formats import choice_label
from exams.room.forms import AnswerForm, SessionForm
from exams.markdown import render_inline_markdown
from exams.models import Attempt, AttemptMode, Bookmark, Erratum, ErratumStatus, Exam, QuestionKind, Response

TIME_UP = (
    "Time is up: this attempt has ended and was graded with the answers saved before the deadline."
)


@login_required
@require_POST
def start_mock(request: HttpRequest, code: str) -> HttpResponse:
    exam = get_object_or_404(Exam, code=code, is_published=True)
    services.finalize_expired(user=request.user)
    try:
        started = services.attempt_start(user=request.user, exam=exam, mode=AttemptMode.MOCK)
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return redirect("exams:exam", code=exam.code)
    if not started.created:
        messages.info(request, "You already have a mock of this exam in progress: here it is, with its clock still running.")
    return redirect("exams:question", attempt_id=started.attempt.pk, position=started.attempt.last_position)


SESSION_NAMES = {AttemptMode.PRACTICE: "practice session", AttemptMode.DRILL: "drill", AttemptMode.REVIEW: "review session"}


@login_required
@require_POST
def start_session(request: HttpRequest, code: str) -> HttpResponse:
    """Start an untimed practice session, a domain drill or a review of due mistakes."""
    exam = get_object_or_404(Exam, code=code, is_published=True)
    form = SessionForm(request.POST, exam=exam)
    back = redirect("exams:dashboard") if request.POST.get("back") == "dashboard" else redirect("exams:exam", code=exam.code)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return back
    mode, domain, count = form.cleaned_data["mode"], form.cleaned_data["domain"], form.cleaned_data["count"]
    # A mock past its deadline and grace no longer blocks a session: finish it first.
    services.finalize_expired(user=request.user)
    try:
        started = services.attempt_start(user=request.user, exam=exam, mode=mode, domain=domain, count=count)
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return back
    name = SESSION_NAMES[mode]
    if started.created and mode == AttemptMode.REVIEW:
        due = progress.reviews_due(user=request.user, exam=exam)
        taken = started.attempt.responses.count()
        if due > taken:
            messages.info(request, f"This review takes {taken} of the {due} questions due; the rest come back in your next review.")
    if not started.created:
        messages.info(request, f"You already have a {name} of {exam.code} in progress: here it is. End it from its review page to start another.")
    elif started.asked:
        total = started.attempt.responses.count()
        where = f"the {domain.name} domain" if domain else exam.code
        messages.info(
            request,
            f"Only {total} question{'s are' if total != 1 else ' is'} available in {where}, "
            f"so this {name} has {total} instead of {started.asked}.",
        )
    return redirect("exams:question", attempt_id=started.attempt.pk, position=started.attempt.last_position)


@login_required
def attempt_resume(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = owned_attempt(request.user, attempt_id)
    if attempt.is_finished:
        return redirect("exams:results", attempt_id=attempt.pk)
    return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)


def _navigator_button(slot: dict, current: int, *, oob: bool = False) -> SafeString:
    """One navigator button's HTML, printed here rather than by a template: the page has 60
    of them and the template loop was most of its rendering time. Every piece is a number or
    one of the fixed words below, so nothing needs escaping. `oob` marks it for htmx to swap
    in place of the one on the page (a save that does not redraw the question)."""
    position = slot["position"]
    state = "incomplete" if slot["incomplete"] else "answered" if slot["answered"] else "unanswered"
    classes = "nav-item" + "".join(f" {name}" for name in ("answered", "incomplete", "flagged") if slot[name])
    label = f"Question {position}, {state}" + (", flagged" if slot["flagged"] else "")
    extra = ""
    if position == current:
        classes += " current"
        extra = ' aria-current="step"'
    if oob:
        extra += ' hx-swap-oob="true"'
    return mark_safe(
        f'<button type="submit" name="go" value="{position}" id="nav-{position}" class="{classes}"{extra} '
        f'aria-label="{label}">{position}</button>'
    )


def _navigator_html(navigator: list[dict], current: int) -> SafeString:
    return mark_safe("".join(f"<li>{_navigator_button(slot, current)}</li>" for slot in navigator))


def _options(response: Response, picked: frozenset[int], struck: frozenset[int]) -> list[dict]:
    count = len(response.choice_order)
    return [
        {
            "position": index,
            "letter": choice_label(index - 1),
            "text": render_inline_markdown(response.version.choice_text(choice_id)),
            "selected": choice_id in picked,
            "struck": choice_id in struck,
            # Keys that pick it: 1-9 then 0 for the tenth; A-E as well on short questions.
            "keys": ([str(index % 10)] if index <= 10 else []) + ([choice_label(index - 1).lower()] if count <= 5 else []),
        }
        for index, choice_id in enumerate(response.choice_order, start=1)
    ]


STRUCK_NOTE = '<span class="visually-hidden"> (struck out)</span>'


def _choice_row(option: dict, *, multiple: bool, checked: bool) -> str:
    """One choice's row (its input, letter, text and strike-out button), printed here rather
    than by a template for the navigator's reason: the loop was a quarter of the page's CPU.
    The text is Markdown already cleaned by nh3; every other piece is a number or a fixed word."""
    position, letter, struck = option["position"], option["letter"], option["struck"]
    disabled = " disabled" if checked or struck else ""
    row = (
        f'<div class="choice-row{" is-struck" if struck else ""}" data-position="{position}">'
        f'<label class="choice{" is-selected" if option["selected"] else ""}">'
        f'<input type="{"checkbox" if multiple else "radio"}" name="choice" value="{position}" data-letter="{letter}" '
        f'data-keys="{" ".join(option["keys"])}"{" checked" if option["selected"] else ""}{disabled}>'
        f'<span class="letter" aria-hidden="true">{letter}</span>'
        f'<span class="choice-text"><span class="visually-hidden">{letter}. </span>{option["text"]}'
        f'{STRUCK_NOTE if struck else ""}</span></label>'
    )
    if not checked:
        action = "Restore" if struck else "Strike out"
        row += (
            f'<button type="submit" name="strike" value="{position}" class="strike-button" '
            f'aria-pressed="{"true" if struck else "false"}" title="{action} {letter}">'
            f'<span aria-hidden="true">{"↺" if struck else "✕"}</span>'
            f'<span class="visually-hidden">{action} {letter}</span></button>'
        )
    return row + "</div>"


def _choices_html(options: list[dict], *, multiple: bool, checked: bool) -> SafeString:
    return mark_safe("".join(_choice_row(option, multiple=multiple, checked=checked) for option in options))


WALKS = {"flagged": "flagged", "unanswered": "unanswered"}


def _question_context(request, shown: reading.Shown, *, walk: str = "") -> dict:
    attempt, response, navigator = shown.attempt, shown.response, shown.navigator
    walk = WALKS.get(walk, "")
    options = _options(response, shown.picked, shown.struck)
    item = next(slot for slot in navigator if slot["position"] == response.position)
    feedback = None
    held = False
    if response.checked_at is not None:
        # Practice: once checked, this one answer is graded and explained (unless a timed
        # mock started since holds the same question).
        held = in_running_mock(request.user, response.question_id)
        feedback = _result_item(response, None if held else _confirmed_erratum(response.question_id), held=held)
    return {
        "attempt": attempt,
        "exam": attempt.exam,
        "response": response,
        "question": response.question,
        "choices_html": _choices_html(options, multiple=response.question.kind == QuestionKind.MULTIPLE,
                                      checked=response.checked_at is not None),
        "picked_count": sum(option["selected"] for option in options),
        "navigator_html": _navigator_html(navigator, response.position),
        "item": item,
        "slot_count": len(navigator),
        "seconds_left": attempt.seconds_left(),
        "shortcuts": _shortcuts_enabled(request, attempt),
        "checkable": attempt.checks_one_by_one,
        # Not on a question a running mock holds: the added question's topic would name its topic.
        "can_try_another": response.checked_at is not None and attempt.mode in (AttemptMode.PRACTICE, AttemptMode.DRILL)
        and not attempt.is_finished and not held,
        "bookmarked": response.checked_at is not None
        and Bookmark.objects.filter(user=request.user, question_id=response.question_id).exists(),
        "feedback": feedback,
        "key_hint": _key_hint(len(options)),
        "walk": walk,
        "walk_slots": _walk_slots(navigator, walk, response.position),
        "question_url": reverse("exams:question", args=[attempt.pk, response.position]) + (f"?walk={walk}" if walk else ""),
    }


def _shortcuts_enabled(request, attempt: Attempt) -> bool:
    """The learner's shortcut setting, read with the attempt when the view asked for it."""
    enabled = getattr(attempt, "shortcuts_enabled", None)
    return Profile.objects.for_user(request.user).shortcuts_enabled if enabled is None else enabled


def _key_hint(count: int) -> str:
    digits = f"1–{count % 10}" if count <= 10 else "1–9, 0"
    return f"{digits} or A–{choice_label(count - 1)}" if count <= 5 else digits


def _walk_positions(navigator: list[dict], walk: str) -> list[int]:
    """The slots a walk visits: the flagged ones, or those unanswered or incomplete."""
    if walk == "flagged":
        return [slot["position"] for slot in navigator if slot["flagged"]]
    return [slot["position"] for slot in navigator if not slot["answered"] or slot["incomplete"]]


def _walk_slots(navigator: list[dict], walk: str, position: int) -> dict | None:
    """Where a "Review flagged/unanswered" walk stands: which slots it visits and what comes next."""
    if not walk:
        return None
    slots = _walk_positions(navigator, walk)
    return {
        "name": walk,
        "count": len(slots),
        "has_next": any(p > position for p in slots),
        "has_prev": any(p < position for p in slots),
    }


def _confirmed_erratum(question_id: int) -> Erratum | None:
    return (
        Erratum.objects.filter(question_id=question_id, status=ErratumStatus.CONFIRMED)
        .select_related("corrected_version")
        .prefetch_related("published_key")
        .order_by("-decided_at", "-pk")
        .first()
    )


def _time_up(request: HttpRequest, attempt: Attempt) -> HttpResponse:
    """A save or page after the deadline and grace: end the attempt (under its lock) and say so."""
    services.attempt_expire(attempt_id=attempt.pk)
    results = reverse("exams:results", args=[attempt.pk])
    if request.method == "POST":
        return _conflict(TIME_UP, results)
    messages.warning(request, TIME_UP)
    return redirect(results)


def _conflict(message: str, results_url: str) -> HttpResponse:
    response = HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")
    response["X-Results-Url"] = results_url
    return response


def _go_target(go, position: int, slot_count: int, *, walk: list[int] | None = None) -> int | str:
    """The slot to show after a save: the one asked for, or this one. Walking the flagged or
    unanswered slots, Next and Previous step through only those; past the last, the review."""
    if walk is not None:
        if go == "next":
            return next((p for p in walk if p > position), "review")
        return next((p for p in reversed(walk) if p < position), position)
    if go == "prev":
        return max(1, position - 1)
    if go == "next":
        return min(slot_count, position + 1)
    return go if isinstance(go, int) else position


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


@learner_required
@require_http_methods(["GET", "POST"])
def question(request: HttpRequest, attempt_id: int, position: int) -> HttpResponse:
    """One slot of an attempt: show it (GET) or save its answer, flag, check and go on (POST)."""
    posted = None
    if request.method == "POST" and request.content_type in FORM_TYPES:
        try:
            posted = request.POST
        except MultiPartParserError:
            pass  # refused below, once the attempt is known to be theirs
    if posted is not None and request.htmx:
        # The page's save on every change: one statement, or nothing and the general path below.
        plain = saving.plain_save(posted)
        if plain is not None:
            saved = saving.save_plainly(user_id=request.user.pk, attempt_id=attempt_id, position=position, save=plain)
            if saved is not None:
                item = {"position": position, "answered": saved.answered, "incomplete": saved.incomplete, "flagged": saved.flagged}
                return _saved_in_place(request, item, saved.seconds_left)
    if request.method == "GET":
        # The page of a slot on screen: one statement, or nothing and the general path below.
        shown = reading.question_page(user_id=request.user.pk, attempt_id=attempt_id, position=position)
        if shown is not None:
            return _question_page(request, shown)
    # A page reads, each statement on its own (no BEGIN/COMMIT); a post writes in one transaction.
    with transaction.atomic() if request.method == "POST" else nullcontext():
        attempt = owned_attempt(request.user, attempt_id, for_update=request.method == "POST", with_clock=True,
                                with_shortcuts=True)
        results_url = reverse("exams:results", args=[attempt.pk])
        if attempt.is_finished:
            if request.method == "POST":
                return _conflict("This attempt has ended; answers can no longer change.", results_url)
            return redirect(results_url)
        if attempt.is_past_grace():
            return _time_up(request, attempt)
        response = reading.slot_by_orm(attempt, position, with_text=request.method == "GET")
        if response is None:
            if request.method == "POST":
                return HttpResponseBadRequest(f"There is no question {position} in this attempt.")
            return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)

        if request.method == "GET":
            if attempt.last_position != position:
                Attempt.objects.filter(pk=attempt.pk).update(last_position=position)
            return _question_page(request, reading.shown_by_orm(attempt, response))

        if request.content_type not in FORM_TYPES:
            # A body that is not a form (JSON, text) would read as "no choices": refuse it
            # rather than answer "Saved" and erase the slot's answer.
            return HttpResponseBadRequest("An answer is sent as a form post.", content_type="text/plain; charset=utf-8")
        if posted is None:
            return HttpResponseBadRequest("The form post is malformed.", content_type="text/plain; charset=utf-8")
        form = AnswerForm(
            posted,
            choice_count=len(response.choice_order),
            choose=response.question.choose,
            # Counted only to move on: a plain save (the hot path) does without the query.
            slot_count=attempt.responses.count() if request.POST.get("go") else position,
            checkable=attempt.checks_one_by_one,
            uncheckable=(
                "This session shows keys and explanations when it ends, not one by one."
                if attempt.feedback_at_end else None
            ),
        )
        if not form.is_valid():
            if form.refused:
                return _refused(request, attempt, response, form.error_text())
            return HttpResponseBadRequest(form.error_text(), content_type="text/plain; charset=utf-8")
        order = response.choice_order
        picks = [order[index - 1] for index in form.cleaned_data["choice"]]
        struck_before = {strike.choice_id for strike in response.strikes.all()}
        if form.cleaned_data["struck_sent"]:
            struck = {order[index - 1] for index in form.cleaned_data["struck"]}
        elif form.cleaned_data["strike"]:
            struck = struck_before ^ {order[form.cleaned_data["strike"] - 1]}
        else:
            struck = struck_before
        if set(picks) & struck & struck_before:
            letters = ", ".join(choice_label(order.index(pk)) for pk in sorted(set(picks) & struck & struck_before, key=order.index))
            return _refused(request, attempt, response, f"You struck out {letters}: restore it before picking it.")
        # Striking out a picked choice removes the pick.
        picks = [pk for pk in picks if pk not in struck]
        check, flag, go = form.cleaned_data["check"], form.cleaned_data["flag"], form.cleaned_data["go"]
        current_picks = sorted(pick.choice_id for pick in response.picks.all())
        # The picks change only when the post says it carries the answer: the page's
        # answer=1, or choices themselves. A flag or a move alone never clears an answer.
        carries_answer = "choice" in posted or form.cleaned_data["answer"]
        if response.checked_at is not None:
            # A checked answer is locked; flags, strike-outs and moving on are still allowed,
            # and checking it again with the same picks (a retried request) changes nothing.
            if carries_answer and sorted(picks) != current_picks:
                # Refused, not a conflict: the attempt goes on, only this answer is locked.
                return _refused(request, attempt, response, "You already checked this answer, so it can no longer change.")
            check = False
        else:
            if not carries_answer:
                picks = [pk for pk in current_picks if pk not in struck]
            if check and not picks:
                return _refused(request, attempt, response, "Pick an answer before checking it.")
            if check and in_running_mock(request.user, response.question_id):
                # Checking shows the key: not while the same question waits in a timed mock.
                return _refused(
                    request, attempt, response,
                    "This question is also in your timed mock, which is still running: check it after the mock ends.",
                )
            attempt.record_answer(response=response, choice_ids=picks)
        if struck != struck_before:
            attempt.record_strikes(response=response, choice_ids=struck)
        if flag:
            response.flagged = (not response.flagged) if flag == "toggle" else flag == "on"
            response.save(update_fields=["flagged"])
        if check:
            services.attempt_check(attempt=attempt, response=response)
        walk = form.cleaned_data["walk"]
        target = _go_target(go, position, form.slot_count, walk=_walk_positions(reading.navigator_by_orm(attempt), walk) if walk and go in ("next", "prev") else None)
        if target == "review":
            go = "review"
            target = position
        # Only a move moves the resume point: a late save of the slot just left must not.
        if go is not None and target != attempt.last_position and not attempt.is_finished:
            Attempt.objects.filter(pk=attempt.pk).update(last_position=target)

    if go == "review":
        url = reverse("exams:review", args=[attempt.pk])
        return _saved(HttpResponseClientRedirect(url)) if request.htmx else redirect(url)
    if not request.htmx:
        url = reverse("exams:question", args=[attempt.pk, target])
        return redirect(f"{url}?walk={walk}" if walk else url)

    if go is None and not check:
        # A change on the page: confirm the save and update this slot in the navigator,
        # whose state is known from the save itself. The question on screen is not redrawn,
        # so nothing the learner has done since is overwritten.
        item = {
            "position": position,
            "answered": bool(picks) if response.checked_at is None else bool(current_picks),
            "incomplete": 0 < len(picks) < response.question.choose,
            "flagged": response.flagged,
        }
        return _saved_in_place(request, item, attempt.seconds_left(), finished=attempt.is_finished)
    # The slot to show next, read once the save has committed: in one statement when it can be.
    shown = None if attempt.is_finished else reading.question_page(user_id=request.user.pk, attempt_id=attempt.pk, position=target)
    if shown is None:
        shown = reading.read_by_orm(attempt, target)
    context = _question_context(request, shown, walk=walk)
    page = render(request, "exams/attempt.html#attempt-main", context)
    page = retarget(reswap(page, "outerHTML"), "#attempt-main")
    if target != position:
        page = push_url(page, context["question_url"])
    page["X-Slot"] = str(target)
    if attempt.is_finished:
        page["X-Attempt-Finished"] = "1"
    return _saved(trigger_client_event(page, "clock-sync", {"remaining": shown.attempt.seconds_left()}))


def _question_page(request: HttpRequest, shown: reading.Shown) -> HttpResponse:
    """The question page (a GET), whole or as the htmx partial a move swaps in."""
    context = _question_context(request, shown, walk=request.GET.get("walk", ""))
    template = "exams/attempt.html#attempt-main" if request.htmx else "exams/attempt.html"
    return trigger_client_event(render(request, template, context), "clock-sync", {"remaining": shown.attempt.seconds_left()})


def _saved_in_place(request: HttpRequest, item: dict, seconds_left: float | None, *, finished: bool = False) -> HttpResponse:
    """A save of the slot on screen: "Saved" and its navigator item, the question not redrawn."""
    html = render_to_string("exams/attempt.html#save-status", {"saved": True}, request) + _navigator_button(
        item, item["position"], oob=True
    )
    page = HttpResponse(html)
    page["X-Slot"] = str(item["position"])
    if finished:
        page["X-Attempt-Finished"] = "1"
    return _saved(trigger_client_event(page, "clock-sync", {"remaining": seconds_left}))


def _refused(request, attempt: Attempt, response: Response, message: str) -> HttpResponse:
    """Input the learner can put right (too many picks, an empty check): 422 and the reason, on the page."""
    if request.htmx:
        return render(request, "exams/attempt.html#refusal", {"refusal": message}, status=422)
    context = _question_context(request, reading.read_by_orm(attempt, response.position), walk=request.POST.get("walk", ""))
    context["refusal"] = message
    return render(request, "exams/attempt.html", context, status=422)


def _saved(response: HttpResponse) -> HttpResponse:
    """Mark a response as the server's confirmation that the answer is stored (the page's "Saved")."""
    response["X-Answer-Saved"] = "1"
    return response


@login_required
def review(request: HttpRequest, attempt_id: int) -> HttpResponse:
    with transaction.atomic():
        attempt = owned_attempt(request.user, attempt_id, with_clock=True)
        if attempt.is_finished:
            return redirect("exams:results", attempt_id=attempt.pk)
        if attempt.is_past_grace():
            return _time_up(request, attempt)
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
            "first_unanswered": next(iter(_walk_positions(navigator, "unanswered")), 1),
            "seconds_left": attempt.seconds_left(),
            "shortcuts": False,
        },
    )


@login_required
@require_POST
def submit(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """Submit after a confirmation; without JavaScript the confirmation is its own page."""
    attempt = owned_attempt(request.user, attempt_id)
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


FILTERS = {"all": "All questions", "wrong": "Wrong or unanswered", "flagged": "Flagged"}


@login_required
def results(request: HttpRequest, attempt_id: int) -> HttpResponse:
    with transaction.atomic():
        attempt = owned_attempt(request.user, attempt_id, for_update=True, with_clock=True)
        if not attempt.is_finished:
            if not attempt.is_past_grace():
                messages.info(request, "Results appear once the attempt is submitted.")
                return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)
            services.attempt_finish(attempt=attempt, expired=True)
    shown = request.GET.get("show", "all")
    if shown not in FILTERS:
        shown = "all"
    domains = list(attempt.exam.domains.all())
    chosen_domain = next((d for d in domains if str(d.pk) == request.GET.get("domain")), None)

    previous = (
        Attempt.objects.finished()
        .filter(user=request.user, exam=attempt.exam, mode=attempt.mode, finished_at__lte=attempt.finished_at)
        .exclude(pk=attempt.pk)
        .order_by("-finished_at", "-pk")
        .first()
    )
    by_attempt = services.domain_results(attempts=[a for a in (attempt, previous) if a])
    table = []
    for domain in domains:
        right, total = by_attempt[attempt.pk].get(domain.pk, (0, 0))
        percent = _domain_percent(right, total)
        before = by_attempt[previous.pk].get(domain.pk) if previous else None
        before_percent = _domain_percent(*before) if before else None
        table.append({
            "domain": domain,
            "right": right,
            "total": total,
            "percent": percent,
            "passing": grading.is_passed(right=right, total=total, passing_score=attempt.exam.passing_score),
            "change": percent - before_percent if percent is not None and before_percent is not None else None,
        })

    responses = (
        attempt.responses.select_related("version", "question", "domain")
        .annotate(bookmarked=Exists(Bookmark.objects.filter(user=request.user, question=OuterRef("question_id"))))
        .prefetch_related("picks", "strikes", Prefetch("question__choices"))
        .order_by("position")
    )
    # The key rule: questions also in a running mock show neither key nor verdict. They are
    # listed under "wrong" whatever their grade, so the filter gives nothing away either.
    held = running_mock_question_ids(request.user)
    if shown == "wrong":
        responses = responses.filter(~Q(is_correct=True) | Q(question_id__in=held))
    elif shown == "flagged":
        responses = responses.filter(flagged=True)
    if chosen_domain is not None:
        responses = responses.filter(domain=chosen_domain)
    wrong = list(attempt.responses.exclude(is_correct=True).filter(question__is_active=True).values_list("question_id", flat=True))
    practice = Attempt.objects.in_progress().filter(user=request.user, exam=attempt.exam, mode=AttemptMode.PRACTICE).first()
    errata = {
        erratum.question_id: erratum
        for erratum in Erratum.objects.filter(
            question__responses__attempt=attempt, status=ErratumStatus.CONFIRMED
        ).select_related("corrected_version").prefetch_related("published_key").order_by("decided_at", "pk")
    }
    responses = list(responses.annotate(held=Exists(held.filter(question_id=OuterRef("question_id")))))
    items = [_result_item(response, errata.get(response.question_id), held=response.held) for response in responses]
    return render(
        request,
        "exams/results.html",
        {
            "attempt": attempt,
            "exam": attempt.exam,
            "table": table,
            "chart": _chart(table, attempt.exam.passing_score),
            "previous": previous,
            "items": items,
            "shown": shown,
            "filters": FILTERS,
            "domains": domains,
            "chosen_domain": chosen_domain,
            "wrong_count": len(wrong),
            "practice_in_progress": practice,
            "held_count": sum(response.held for response in responses),
            "score_changes": attempt.regrade_changes.select_related("event__erratum__question").order_by("event__created_at"),
        },
    )


@login_required
@require_POST
def practise_wrong(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """An untimed practice of exactly the questions this attempt got wrong or left unanswered."""
    attempt = owned_attempt(request.user, attempt_id)
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
                services.attempt_submit(user=request.user, attempt_id=running.pk)
            started = services.attempt_start(user=request.user, exam=attempt.exam, mode=AttemptMode.PRACTICE, question_ids=wrong)
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return redirect("exams:results", attempt_id=attempt.pk)
    messages.info(request, f"Practising the {started.attempt.responses.count()} questions you got wrong or left unanswered.")
    return redirect("exams:question", attempt_id=started.attempt.pk, position=1)


def _domain_percent(right: int, total: int) -> Decimal | None:
    """A domain's percent, rounded as every score is shown."""
    return grading.shown_percent(grading.score_percent(right=right, total=total)) if total else None


def _result_item(response: Response, erratum: Erratum | None, *, held: bool = False) -> dict:
    """One answered question as results and checked practice show it: key, feedback, notice.

    `held`: the question is also in the learner's running mock, so only the learner's own
    answer is shown (the key rule, `exams.room.access.running_mock_question_ids`).
    """
    if held:
        picked = {pick.choice_id for pick in response.picks.all()}
        options = [
            {"letter": choice_label(index), "text": render_inline_markdown(response.version.choice_text(choice_id)),
             "picked": choice_id in picked, "struck": False, "is_key": False, "feedback": ""}
            for index, choice_id in enumerate(response.choice_order)
        ]
        return {"response": response, "options": options, "held": True,
                "answer_letters": [option["letter"] for option in options if option["picked"]], "key_letters": [], "notice": None}
    choices = {choice.pk: choice for choice in response.question.choices.all()}
    picked = {pick.choice_id for pick in response.picks.all()}
    struck = {strike.choice_id for strike in response.strikes.all()}
    letter = {choice_id: choice_label(index) for index, choice_id in enumerate(response.choice_order)}
    options = [
        {
            "letter": letter[choice_id],
            "text": render_inline_markdown(response.version.choice_text(choice_id)),
            "feedback": render_inline_markdown(response.version.choice_feedback(choice_id)),
            "struck": choice_id in struck,
            "is_key": choices[choice_id].is_correct if choice_id in choices else False,
            "picked": choice_id in picked,
        }
        for choice_id in response.choice_order
    ]
    corrected = _corrected_text(response, erratum)
    if corrected is not None:
        # The corrected feedback in place, the attempt's own one step away ("as shown in your attempt").
        for option, choice_id in zip(options, response.choice_order, strict=True):
            option["shown_feedback"] = option["feedback"]
            option["feedback"] = render_inline_markdown(corrected.choice_feedback(choice_id))
            option["feedback_corrected"] = option["feedback"] != option["shown_feedback"]
    notice = None
    if erratum is not None:
        published = [choice.pk for choice in erratum.published_key.all()]
        notice = {
            "erratum": erratum,
            "published": [
                {"letter": letter.get(pk, "?"), "text": render_inline_markdown(response.version.choice_text(pk))} for pk in published
            ],
            "corrected": [option for option in options if option["is_key"]],
            "text": corrected,
        }
    return {
        "response": response,
        "options": options,
        "answer_letters": [option["letter"] for option in options if option["picked"]],
        "key_letters": [option["letter"] for option in options if option["is_key"]],
        "notice": notice,
    }


def _corrected_text(response: Response, erratum: Erratum | None):
    """The question's text as the latest confirmed erratum corrected it, when it differs from the attempt's."""
    corrected = erratum.corrected_version if erratum is not None else None
    if corrected is None or corrected.pk == response.version_id:
        return None
    shown = response.version
    if corrected.content["explanation"] == shown.content["explanation"] and all(
        corrected.choice_feedback(pk) == shown.choice_feedback(pk) for pk in response.choice_order
    ):
        return None
    return corrected


def _chart(table: list[dict], passing_score: int) -> dict:
    """The per-domain bars: each bar's length in percent of its track."""
    return {
        "rows": [
            {"label": row["domain"].name, "percent": row["percent"], "passed": row["passing"], "length": float(row["percent"] or 0)}
            for row in table
        ],
        "passing_score": passing_score,
    }
