"""Bookmarks and private notes on answered questions: add, list, edit the note, remove."""
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, Prefetch, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from exams.models import NOTE_MAX_LENGTH, Attempt, Bookmark, Choice, Response
from exams.room.access import owned_attempt, owned_bookmark, running_mock_question_ids
from exams.study import bookmarks

PAGE_SIZE = 20


class NoteField(forms.CharField):
    def to_python(self, value):
        # A browser counts a line break as one character and sends two (CR LF): count it as one.
        return super().to_python(value).replace("\r\n", "\n")


class NoteForm(forms.Form):
    note = NoteField(
        widget=forms.Textarea(attrs={"rows": 6}), max_length=NOTE_MAX_LENGTH, required=False, strip=True,
        label="Your note", help_text="Private: only you see it. Markdown (emphasis, lists, code, links). Up to 2,000 characters.",
    )


@login_required
@require_POST
def bookmark_add(request: HttpRequest, attempt_id: int, position: int) -> HttpResponse:
    """Bookmark the question of an answered slot, once its key is shown (a checked answer or a finished attempt)."""
    attempt = owned_attempt(request.user, attempt_id)
    response = attempt.responses.filter(position=position).first()
    if response is None:
        raise Http404("No such question in this attempt.")
    if attempt.is_finished:
        back = reverse("exams:results", args=[attempt.pk]) + f"#item-{position}"
    else:
        back = reverse("exams:question", args=[attempt.pk, position])
    if not (attempt.is_finished or response.checked_at):
        messages.error(request, "You can bookmark a question once you have checked your answer or finished the attempt.")
        return redirect(back)
    if response.answered_at is None:
        messages.error(request, "You left this question unanswered: answer it in a session before bookmarking it.")
        return redirect(back)
    bookmark, created = bookmarks.bookmark_add(user=request.user, response=response)
    if created:
        messages.success(request, "Bookmarked. Add a private note to it from your bookmarks.")
    else:
        messages.info(request, "This question was already in your bookmarks.")
    return redirect(back)


def running_mock_questions(user) -> set[int]:
    """The questions of the learner's running mocks: their notes, keys and explanations stay hidden."""
    return set(running_mock_question_ids(user))


@login_required
def bookmark_list(request: HttpRequest) -> HttpResponse:
    """The learner's bookmarks, newest first, with notes, keys and explanations (never a running mock's)."""
    last_seen = (
        Response.objects.filter(attempt__user=request.user, question=OuterRef("question_id"), attempt__status__in=Attempt.FINISHED_STATUSES)
        .order_by("-attempt__finished_at", "-attempt_id").values("attempt_id")[:1]
    )
    bookmarks = (
        Bookmark.objects.for_user(request.user)
        .select_related("question__domain", "question__exam")
        .prefetch_related(Prefetch("question__choices", queryset=Choice.objects.filter(is_correct=True).order_by("order", "pk"), to_attr="keys"))
        .annotate(last_attempt=Subquery(last_seen))
        .order_by("-updated_at", "-pk")
    )
    page = Paginator(bookmarks, PAGE_SIZE).get_page(request.GET.get("page"))
    hidden = running_mock_questions(request.user)
    return render(request, "exams/bookmarks.html", {"page": page, "hidden": hidden})


@login_required
@require_http_methods(["GET", "POST"])
def bookmark_edit(request: HttpRequest, bookmark_id: int) -> HttpResponse:
    """A bookmark's note: its own page without JavaScript; with htmx, the note's region on the
    bookmarks page turns into the form and back (`?show=note` cancels)."""
    bookmark = owned_bookmark(request.user, bookmark_id)
    if bookmark.question_id in running_mock_questions(request.user):
        messages.info(request, "This question is in your timed mock, which is still running: its note opens again when the mock ends.")
        return HttpResponseClientRedirect(reverse("exams:bookmarks")) if request.htmx else redirect("exams:bookmarks")
    if request.htmx and request.method == "GET" and request.GET.get("show") == "note":
        return render(request, "exams/bookmarks.html#note", {"bookmark": bookmark})
    # Ids of their own: several notes may be open on one page.
    form = NoteForm(request.POST or None, initial={"note": bookmark.note}, auto_id=f"note-{bookmark.pk}-%s")
    if request.method == "POST" and form.is_valid():
        bookmarks.bookmark_note(bookmark=bookmark, note=form.cleaned_data["note"])
        if request.htmx:
            return render(request, "exams/bookmarks.html#note", {"bookmark": bookmark, "saved": True})
        messages.success(request, "Your note is saved.")
        return redirect("exams:bookmarks")
    if request.htmx:
        form.fields["note"].widget.attrs["autofocus"] = True
        return render(request, "exams/bookmarks.html#note", {"bookmark": bookmark, "form": form})
    return render(request, "exams/bookmark_edit.html", {"bookmark": bookmark, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def bookmark_delete(request: HttpRequest, bookmark_id: int) -> HttpResponse:
    """Remove a bookmark and its note, after a confirmation (its own page, so it works without JavaScript)."""
    bookmark = owned_bookmark(request.user, bookmark_id)
    if request.method == "POST":
        bookmark.delete()
        messages.success(request, "Bookmark and note removed.")
        return redirect("exams:bookmarks")
    return render(request, "exams/bookmark_delete.html", {"bookmark": bookmark})
