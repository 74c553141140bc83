"""A request after the deadline and grace ends the attempt and says so; one that can no longer change it gets 409."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from exams.models import Attempt
from exams.room import services

TIME_UP = (
    "Time is up: this attempt has ended and was graded with the answers saved before the deadline."
)


def time_up(request: HttpRequest, attempt: Attempt) -> HttpResponse:
    """A save or page after the deadline and grace: end the attempt (under its lock) and say so."""
    services.attempt_expire(attempt_id=attempt.pk)
    results = reverse("exams:results", args=[attempt.pk])
    if request.method == "POST":
        return conflict(TIME_UP, results)
    messages.warning(request, TIME_UP)
    return redirect(results)


def conflict(message: str, results_url: str) -> HttpResponse:
    response = HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")
    response["X-Results-Url"] = results_url
    return response
