"""Learner pages: the catalogue and each exam's page."""
from django.db.models import Count, Max, OuterRef, Prefetch, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from exams.models import Attempt, AttemptMode, Domain, Exam


def _published_exams(user):
    exams = (
        Exam.objects.filter(is_published=True)
        .annotate(active_questions=Count("questions", filter=Q(questions__is_active=True)))
        .prefetch_related(
            Prefetch(
                "domains",
                queryset=Domain.objects.annotate(
                    active_questions=Count("questions", filter=Q(questions__is_active=True))
                ),
            )
        )
    )
    if user.is_authenticated:
        mocks = Attempt.objects.finished().filter(user=user, mode=AttemptMode.MOCK, exam=OuterRef("pk"))
        exams = exams.annotate(
            last_score=Subquery(mocks.order_by("-finished_at", "-id").values("score")[:1]),
            best_score=Subquery(
                mocks.order_by().values("exam").annotate(best=Max("score")).values("best")[:1]
            ),
        )
    return exams


def catalogue(request: HttpRequest) -> HttpResponse:
    return render(request, "exams/catalogue.html", {"exams": _published_exams(request.user)})


def exam_detail(request: HttpRequest, code: str) -> HttpResponse:
    exam = get_object_or_404(_published_exams(request.user), code=code)
    return render(request, "exams/exam_detail.html", {"exam": exam})
