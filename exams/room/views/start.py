"""Starting an attempt: a mock, an untimed session (practice, drill, review), resuming one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.models import Profile
from exams.models import AttemptMode, Exam
from exams.room import services
from exams.room.access import owned_attempt
from exams.room.forms import SessionForm
from exams.study import progress


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
    """Start an untimed practice session, a domain drill, a review of what is due or of recent mistakes.

    A review is sized 10, 20 or 50 (the learner's last choice, remembered on their profile
    once the session starts); any other size is refused and nothing starts.
    """
    exam = get_object_or_404(Exam, code=code, is_published=True)
    form = SessionForm(request.POST, exam=exam)
    back = redirect("exams:dashboard") if request.POST.get("back") == "dashboard" else redirect("exams:exam", code=exam.code)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return back
    mode, domain, count = form.cleaned_data["mode"], form.cleaned_data["domain"], form.cleaned_data["count"]
    mistakes = mode == "mistakes"
    size = None
    if mode in ("review", "mistakes"):
        mode, domain = AttemptMode.REVIEW, None
        profile = Profile.objects.for_user(request.user)
        size = count = form.cleaned_data["size"] or profile.review_session_size
        if mistakes and (due := progress.reviews_due(user=request.user, exam=exam)):
            # Offered only when nothing is due: what is due comes first, in its own order.
            messages.error(request, f"You have {due} question{'s' if due != 1 else ''} due for review: review those first.")
            return back
    # A mock past its deadline and grace no longer blocks a session: finish it first.
    services.finalize_expired(user=request.user)
    try:
        started = services.attempt_start(user=request.user, exam=exam, mode=mode, domain=domain, count=count, mistakes=mistakes)
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return back
    if started.created and size is not None and size != profile.review_session_size:
        Profile.objects.filter(pk=profile.pk).update(review_session_size=size)
    name = SESSION_NAMES[mode]
    if started.created and mistakes:
        taken = started.attempt.responses.count()
        messages.info(request, f"Your mistakes, {taken} question{'s' if taken != 1 else ''}: those on a ten-minute step first, "
                      "then those answered wrong in the last 7 days, newest first. Your answers count as reviews.")
    elif started.created and mode == AttemptMode.REVIEW:
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
    if attempt.has_ended:
        return redirect("exams:results", attempt_id=attempt.pk)
    return redirect("exams:question", attempt_id=attempt.pk, position=attempt.last_position)
