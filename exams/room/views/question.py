"""Attempts of every mode: start, one question at a time, check (practice), review, submit, results."""
from contextlib import nullcontext

from django.contrib import auth
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect, push_url, reswap, retarget, trigger_client_event

from accounts.models import Profile
from exams.letters import choice_label
from exams.markdown import render_inline_markdown
from exams.models import Attempt, AttemptMode, Bookmark, Certainty, QuestionKind, Response
from exams.room import navigation, reading, saving, services
from exams.room.access import in_running_mock, learner_required, owned_attempt
from exams.room.forms import LEAVE_PLACES, AnswerForm
from exams.room.views.answered import confirmed_erratum_of, result_item
from exams.room.views.deadline import conflict, time_up
from exams.study import scheduling
from exams.study.reviews import due_after_check


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


def _question_context(request, shown: reading.Shown, *, walk: str = "") -> dict:
    attempt, response, navigator = shown.attempt, shown.response, shown.navigator
    walk = navigation.WALKS.get(walk, "")
    options = _options(response, shown.picked, shown.struck)
    item = next(slot for slot in navigator if slot["position"] == response.position)
    feedback = None
    held = False
    if response.checked_at is not None:
        # Practice: once checked, this one answer is graded and explained (unless a timed
        # mock started since holds the same question).
        held = in_running_mock(request.user, response.question_id)
        feedback = result_item(response, None if held else confirmed_erratum_of(response.question_id), held=held)
    # When the question comes back for review; not on a held one, whose timing would tell its verdict.
    due = None if held or feedback is None else due_after_check(response, user=request.user)
    return {
        "attempt": attempt,
        "exam": attempt.exam,
        "response": response,
        "question": response.question,
        "choices_html": _choices_html(options, multiple=response.question.kind == QuestionKind.MULTIPLE,
                                      checked=response.checked_at is not None),
        "picked_count": sum(option["selected"] for option in options),
        "asks_certainty": services.asks_certainty(attempt),
        "certainty_choices": Certainty.choices,
        "navigator_html": _navigator_html(navigator, response.position),
        "item": item,
        "slot_count": len(navigator),
        "seconds_left": attempt.seconds_left(),
        "shortcuts": _shortcuts_enabled(request, attempt),
        "checkable": attempt.checks_one_by_one,
        # Not on a question a running mock holds: the added question's topic would name its topic.
        "can_try_another": response.checked_at is not None and attempt.mode in (AttemptMode.PRACTICE, AttemptMode.DRILL)
        and not attempt.has_ended and not held,
        "bookmarked": response.checked_at is not None
        and Bookmark.objects.filter(user=request.user, question_id=response.question_id).exists(),
        "feedback": feedback,
        "comes_back": scheduling.comes_back(due=due, now=timezone.now()) if due else None,
        "key_hint": _key_hint(len(options)),
        "leave_places": [(place, label) for place, (_, label) in LEAVE_PLACES.items()],
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


def _walk_slots(navigator: list[dict], walk: str, position: int) -> dict | None:
    """Where a "Review flagged/unanswered" walk stands: which slots it visits and what comes next."""
    if not walk:
        return None
    slots = navigation.walk_positions(navigator, walk)
    return {
        "name": walk,
        "count": len(slots),
        "has_next": any(p > position for p in slots),
        "has_prev": any(p < position for p in slots),
    }


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
MALFORMED = object()  # a form post whose body does not parse


@learner_required
@require_http_methods(["GET", "POST"])
def question(request: HttpRequest, attempt_id: int, position: int) -> HttpResponse:
    """One slot of an attempt: show it (GET) or save its answer, flag, check and go on (POST)."""
    posted = _posted(request)
    fast = _in_one_statement(request, posted, attempt_id, position)
    if fast is not None:
        return fast
    # A page reads, each statement on its own (no BEGIN/COMMIT); a post writes in one transaction.
    with transaction.atomic() if request.method == "POST" else nullcontext():
        attempt = owned_attempt(request.user, attempt_id, for_update=request.method == "POST", with_clock=True,
                                with_shortcuts=True)
        closed = _closed(request, attempt)
        if closed is not None:
            return closed
        response = reading.slot_by_orm(attempt, position, with_text=request.method == "GET")
        if response is None:
            if request.method == "POST":
                return HttpResponseBadRequest(f"There is no question {position} in this attempt.")
            return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)
        if request.method == "GET":
            if attempt.last_position != position:
                Attempt.objects.filter(pk=attempt.pk).update(last_position=position)
            return _question_page(request, reading.shown_by_orm(attempt, response))
        form = _answer_form(request, posted, attempt, response, position)
        if not isinstance(form, AnswerForm):
            return form
        try:
            saved = services.slot_save(
                user=request.user, attempt=attempt, response=response, answer=form.cleaned_data,
                carries_answer="choice" in posted or form.cleaned_data["answer"], slot_count=form.slot_count,
            )
        except services.SlotRefused as refusal:
            return _refused(request, attempt, response, str(refusal))
    if form.cleaned_data["leave"]:
        return _leave(request, form.cleaned_data["leave"])
    return _after_save(request, attempt, response, saved)


def _leave(request: HttpRequest, place: str) -> HttpResponse:
    """The no-JavaScript header: the answer is saved (committed); now go where the learner asked."""
    if place == "logout":
        auth.logout(request)
        return render(request, "registration/logged_out.html")
    url = reverse(LEAVE_PLACES[place][0])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _posted(request: HttpRequest):
    """The posted form, MALFORMED when its body does not parse, None for a GET or a body that is not a form."""
    if request.method != "POST" or request.content_type not in FORM_TYPES:
        return None
    if request.content_type == "multipart/form-data" and not getattr(request, "multipart_checked", False):
        # Django's parser reads a broken body as fewer fields (often none), which would save
        # as "no answer": only a body the gate found well formed (config.hostile) is read.
        return MALFORMED
    try:
        return request.POST
    except MultiPartParserError:
        return MALFORMED  # refused once the attempt is known to be theirs


def _in_one_statement(request: HttpRequest, posted, attempt_id: int, position: int) -> HttpResponse | None:
    """The hot paths in one statement each: the page's save on every change, and the page of a
    slot on screen. None sends the request down the general path."""
    if posted is not None and posted is not MALFORMED and request.htmx:
        plain = saving.plain_save(posted)
        if plain is not None:
            saved = saving.save_plainly(user_id=request.user.pk, attempt_id=attempt_id, position=position, save=plain)
            if saved is not None:
                item = {"position": position, "answered": saved.answered, "incomplete": saved.incomplete, "flagged": saved.flagged}
                return _saved_in_place(request, item, saved.seconds_left)
    if request.method == "GET":
        shown = reading.question_page(user_id=request.user.pk, attempt_id=attempt_id, position=position)
        if shown is not None:
            return _question_page(request, shown)
    return None


def _closed(request: HttpRequest, attempt: Attempt) -> HttpResponse | None:
    """An attempt that has ended (or whose time is up) shows its results; a post to it is refused."""
    results_url = reverse("exams:results", args=[attempt.pk])
    if attempt.has_ended:
        if request.method == "POST":
            return conflict("This attempt has ended; answers can no longer change.", results_url)
        return redirect(results_url)
    if attempt.is_past_grace():
        return time_up(request, attempt)
    return None


def _answer_form(request: HttpRequest, posted, attempt: Attempt, response: Response, position: int) -> AnswerForm | HttpResponse:
    """The post read as an answer, or the 400 that says why it cannot be."""
    if posted is None:
        # A body that is not a form (JSON, text) would read as "no choices": refuse it
        # rather than answer "Saved" and erase the slot's answer.
        return HttpResponseBadRequest("An answer is sent as a form post.", content_type="text/plain; charset=utf-8")
    if posted is MALFORMED:
        return HttpResponseBadRequest(
            "Not saved: the form post is malformed. Nothing was changed.", content_type="text/plain; charset=utf-8"
        )
    form = AnswerForm(
        posted,
        choice_count=len(response.choice_order),
        choose=response.question.choose,
        # Counted only to move on: a plain save (the hot path) does without the query.
        slot_count=attempt.responses.count() if posted.get("go") else position,
        checkable=attempt.checks_one_by_one,
        uncheckable=(
            "This session shows keys and explanations when it ends, not one by one."
            if attempt.feedback_at_end else None
        ),
    )
    if form.is_valid():
        return form
    if form.refused:
        return _refused(request, attempt, response, form.error_text())
    return HttpResponseBadRequest(form.error_text(), content_type="text/plain; charset=utf-8")


def _after_save(request: HttpRequest, attempt: Attempt, response: Response, saved: "services.SlotSaved") -> HttpResponse:
    """Where the learner goes once the save has committed: the review, another slot, or this one confirmed."""
    if saved.go == "review":
        url = reverse("exams:review", args=[attempt.pk])
        return _saved(HttpResponseClientRedirect(url)) if request.htmx else redirect(url)
    if not request.htmx:
        url = reverse("exams:question", args=[attempt.pk, saved.target])
        return redirect(f"{url}?walk={saved.walk}" if saved.walk else url)
    if saved.go is None and not saved.checked:
        # A change on the page: confirm the save and update this slot in the navigator,
        # whose state is known from the save itself. The question on screen is not redrawn,
        # so nothing the learner has done since is overwritten.
        return _saved_in_place(request, saved.item, attempt.seconds_left(), finished=attempt.is_finished)
    # The slot to show next, read once the save has committed: in one statement when it can be.
    shown = None if attempt.is_finished else reading.question_page(
        user_id=request.user.pk, attempt_id=attempt.pk, position=saved.target
    )
    if shown is None:
        shown = reading.read_by_orm(attempt, saved.target)
    context = _question_context(request, shown, walk=saved.walk)
    page = render(request, "exams/attempt.html#attempt-main", context)
    page = retarget(reswap(page, "outerHTML"), "#attempt-main")
    if saved.target != response.position:
        page = push_url(page, context["question_url"])
    page["X-Slot"] = str(saved.target)
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
    html = render_to_string("exams/_save_status.html", {"saved": True}, request) + _navigator_button(
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


