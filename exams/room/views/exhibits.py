"""Exhibit images, served only to staff and to learners who hold the question in an attempt."""
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_safe

from exams.bank.formats import exhibit_images
from exams.models import ExhibitImage, Question, QuestionVersion


@login_required
@require_safe
def exhibit(request: HttpRequest, question_id: int, name: str) -> HttpResponse:
    question = get_object_or_404(Question, pk=question_id)
    if request.user.is_staff:
        shown = [question.exhibit, *QuestionVersion.objects.filter(question=question).values_list("content__exhibit", flat=True)]
    else:
        # The versions this learner's attempts showed: an image later removed from the
        # question still shows on their old results.
        shown = list(
            QuestionVersion.objects.filter(question=question, responses__attempt__user=request.user)
            .distinct()
            .values_list("content__exhibit", flat=True)
        )
    if not any(name in exhibit_images(text or "") for text in shown):
        raise Http404("No such exhibit.")
    image = get_object_or_404(ExhibitImage, name=name)
    response = HttpResponse(bytes(image.data), content_type=image.content_type)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["ETag"] = f'"{image.digest}"'
    return response
