"""The practice builder (its own page and the dashboard's Practise card) and "Try another like this"."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, Exam, Question
from exams.room import services
from exams.room.access import in_running_mock, owned_attempt
from exams.statistics import calibration
from exams.study.forms import PracticeBuilderForm
from exams.study.practice import (
    NothingLikeIt, PracticeSource, attempt_add_like, bank_count, practice_build, practice_count,
)


def builder_form(*, exam: Exam, data=None) -> PracticeBuilderForm:
    """The builder's form, with the exam's domains and topics read in two queries (the topics
    cached under the bank's version: a scan of the 10,000-question bank at bench/scale)."""
    topics = calibration.bank_cached(exam, "builder-topics", lambda: list(
        Question.objects.active().filter(exam=exam).exclude(topic="")
        .order_by("domain_id", "topic").values_list("domain_id", "topic").distinct()
    ))
    return PracticeBuilderForm(data, domains=exam.domains.all(), topics=topics)


def builder_context(request: HttpRequest, *, exam: Exam, form: PracticeBuilderForm, profile: Profile | None = None) -> dict:
    """What the builder shows, here or on the dashboard: the form, how many match, what is running.
    `profile`: the learner's, when the caller has read it already."""
    if not form.is_bound:
        form = PracticeBuilderForm(_initial_data(form), domains=form.domain_list, topics=form.topic_list)
    running = list(
        Attempt.objects.in_progress().filter(user=request.user, exam=exam, mode__in=[AttemptMode.MOCK, AttemptMode.PRACTICE])
    )
    running_mock = next((a for a in running if a.mode == AttemptMode.MOCK), None)
    matched = None
    # The key rule: while a mock runs the count is refused as the start is, since a count
    # leaving its questions out would differ by one for each topic it holds.
    if form.is_valid() and running_mock is None:
        plan = form.plan()
        # From all questions, with no mock running, the count is the bank's own (cached).
        if plan.source == PracticeSource.ALL:
            matched = bank_count(exam=exam, plan=plan)
        else:
            matched = practice_count(user=request.user, exam=exam, plan=plan)
    factor = (profile or Profile.objects.for_user(request.user)).accommodation_factor
    return {
        "exam": exam,
        "builder": form,
        "matched": matched,
        "count_held": running_mock is not None,
        "asked": form.cleaned_data.get("count") if form.is_valid() else None,
        "running_mock": running_mock,
        "running_practice": next((a for a in running if a.mode == AttemptMode.PRACTICE), None),
        "factor": factor if factor != 1 else None,
    }


def _initial_data(form: PracticeBuilderForm):
    """The form's initial values as posted data, so an unchanged page counts too."""
    from django.http import QueryDict

    data = QueryDict(mutable=True)
    for name, field in form.fields.items():
        if field.initial is not None:
            data[name] = str(field.initial)
    return data


@login_required
@require_http_methods(["GET", "POST"])
def builder(request: HttpRequest, code: str) -> HttpResponse:
    """GET shows the builder; POST counts (preview, and every change through htmx) or starts."""
    exam = get_object_or_404(Exam, code=code, is_published=True)
    services.finalize_expired(user=request.user)
    form = builder_form(exam=exam, data=request.POST if request.method == "POST" else None)
    if request.method == "POST" and "start" in request.POST and form.is_valid():
        return _start(request, exam, form)
    context = builder_context(request, exam=exam, form=form)
    if request.htmx:
        return render(request, "exams/practice_builder.html#match-count", context)
    return render(request, "exams/practice_builder.html", context)


def _start(request: HttpRequest, exam: Exam, form: PracticeBuilderForm) -> HttpResponse:
    running = Attempt.objects.in_progress().filter(user=request.user, exam=exam, mode=AttemptMode.PRACTICE).first()
    if running is not None:
        if request.POST.get("abandon") != str(running.pk):
            messages.info(request, "You have a practice session in progress: finish it, or end it to start this one.")
            return render(request, "exams/practice_builder.html", builder_context(request, exam=exam, form=form))
    try:
        # Ending the running practice and starting this one stand or fall together: a start
        # that is refused (a mock running, nothing matching) leaves that practice as it was.
        with transaction.atomic():
            if running is not None:
                services.attempt_abandon(user=request.user, attempt_id=running.pk)
            started = practice_build(user=request.user, exam=exam, plan=form.plan())
    except services.StartRefused as refused:
        messages.error(request, str(refused))
        return render(request, "exams/practice_builder.html", builder_context(request, exam=exam, form=form))
    attempt = started.attempt
    if started.asked:
        total = attempt.responses.count()
        messages.info(request, f"Only {total} question{'s match' if total != 1 else ' matches'} your choices, so this session has {total} instead of {started.asked}.")
    return redirect("exams:question", attempt_id=attempt.pk, position=1)


@login_required
@require_POST
def another_like_this(request: HttpRequest, attempt_id: int, position: int) -> HttpResponse:
    """Add one unseen question of the same topic to this practice, after its last slot, and show it."""
    with transaction.atomic():
        attempt = owned_attempt(request.user, attempt_id, for_update=True, with_clock=True)
        response = attempt.responses.select_related("question").filter(position=position).first()
        if response is None:
            raise Http404("No such question in this attempt.")
        back = redirect("exams:question", attempt_id=attempt.pk, position=position)
        if attempt.has_ended or attempt.is_past_grace():
            messages.error(request, "This session has ended: start a new one from the practice builder.")
            return redirect("exams:results", attempt_id=attempt.pk)
        if attempt.mode not in (AttemptMode.PRACTICE, AttemptMode.DRILL) or response.checked_at is None:
            messages.error(request, "Check this answer first: then you can try another like it.")
            return back
        if in_running_mock(request.user, response.question_id):
            # Its topic, named by the question added, belongs to the running mock (the key rule).
            messages.info(request, "This question is also in your running mock: try another like it once the mock ends.")
            return back
        try:
            added = attempt_add_like(attempt=attempt, response=response)
        except NothingLikeIt as none_left:
            messages.info(request, str(none_left))
            return back
        Attempt.objects.filter(pk=attempt.pk).update(last_position=added.position)
    messages.success(request, f"Added question {added.position}, another on “{response.question.topic}”.")
    return redirect("exams:question", attempt_id=attempt.pk, position=added.position)
