"""The catalogue and each exam's start page."""
from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, Domain, Exam, Response, learner_questions
from exams.room import services
from exams.room.access import running_mock_question_ids


def _published_exams(user):
    exams = (
        Exam.objects.filter(is_published=True)
        .annotate(active_questions=Count("questions", filter=learner_questions("questions__")))
        .prefetch_related(
            Prefetch(
                "domains",
                queryset=Domain.objects.annotate(
                    active_questions=Count("questions", filter=learner_questions("questions__"))
                ),
            )
        )
    )
    if user.is_authenticated:
        mocks = Attempt.objects.finished().filter(user=user, mode=AttemptMode.MOCK, exam=OuterRef("pk"))
        # The key rule for totals: a score counting a question the running mock holds is held.
        holds = Exists(Response.objects.filter(attempt_id=OuterRef("pk"), question_id__in=running_mock_question_ids(user)))
        latest = mocks.order_by("-finished_at", "-id")
        exams = exams.annotate(
            last_score=Subquery(latest.values("score")[:1]),
            last_held=Subquery(latest.annotate(held=holds).values("held")[:1]),
            best_score=Subquery(
                mocks.order_by().values("exam").annotate(best=Max("score")).values("best")[:1]
            ),
            best_held=Exists(mocks.filter(holds)),
        )
    return exams


def catalogue(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        services.finalize_expired(user=request.user)
    return render(request, "exams/catalogue.html", {"exams": _published_exams(request.user)})


def exam_detail(request: HttpRequest, code: str) -> HttpResponse:
    """The start page: the rules, stated before the clock starts."""
    exam = get_object_or_404(_published_exams(request.user), code=code)
    running, factor = None, None
    if request.user.is_authenticated:
        services.finalize_expired(user=request.user)
        running = (
            Attempt.objects.in_progress().with_clock()
            .filter(user=request.user, exam=exam, mode=AttemptMode.MOCK).first()
        )
        factor = Profile.objects.for_user(request.user).accommodation_factor
    minutes = exam.time_limit_minutes * (factor or 1)
    return render(
        request,
        "exams/exam_detail.html",
        {"exam": exam, "running": running, "minutes": minutes, "extra_time": factor and factor != 1},
    )
