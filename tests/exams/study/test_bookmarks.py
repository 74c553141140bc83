"""Bookmarks and private notes, and "Try another like this": pages, ownership, the key rule, exports."""
import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from exams.models import NOTE_MAX_LENGTH, Attempt, AttemptMode, Bookmark, Question, Response
from exams.room.services import attempt_check, attempt_start, attempt_submit
from exams.study.practice import NothingLikeIt, attempt_add_like
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


HTMX = {"HX-Request": "true"}


def question_url(attempt, position):
    return reverse("exams:question", args=[attempt.pk, position])


def checked_practice(user, exam, *, count=3, checked=1) -> Attempt:
    """A practice whose first `checked` slots are answered and checked."""
    practice = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=count).attempt
    for slot in practice.responses.order_by("position")[:checked]:
        practice.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        attempt_check(attempt=practice, response=slot)
    return practice


@pytest.fixture
def exam():
    exam = exam_with_bank(weights=(60, 40), per_domain=10)
    exam.questions.update(topic="Diffusion")
    return exam


class TestBookmarking:
    def test_a_checked_question_is_bookmarked_from_its_page(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam)
        page = learner_client.get(question_url(practice, 1)).content.decode()
        assert ">Bookmark</button>" in page and 'form="slot-actions"' in page
        response = learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]))
        assert response["Location"] == question_url(practice, 1)
        slot = practice.responses.get(position=1)
        assert Bookmark.objects.filter(user=learner, question_id=slot.question_id).count() == 1
        assert "Bookmarked" in learner_client.get(question_url(practice, 1)).content.decode()
        # A second click (or a replay) keeps one bookmark.
        learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]))
        assert Bookmark.objects.filter(user=learner).count() == 1

    def test_an_unchecked_question_cannot_be_bookmarked_yet(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, checked=0)
        slot = practice.responses.get(position=1)
        practice.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        assert ">Bookmark</button>" not in learner_client.get(question_url(practice, 1)).content.decode()
        page = learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]), follow=True).content.decode()
        assert "once you have checked your answer" in page
        assert not Bookmark.objects.exists()

    def test_from_results_an_answered_question_is_bookmarked_and_an_unanswered_one_is_not(self, learner_client, learner, exam):
        mock = attempt_start(user=learner, exam=exam).attempt
        first = mock.responses.get(position=1)
        mock.record_answer(response=first, choice_ids=[first.choice_order[0]])
        attempt_submit(user=learner, attempt_id=mock.pk)
        results = reverse("exams:results", args=[mock.pk])
        page = learner_client.get(results).content.decode()
        assert page.count(">Bookmark</button>") == 1
        assert learner_client.post(reverse("exams:bookmark_add", args=[mock.pk, 1]))["Location"] == results + "#item-1"
        page = learner_client.post(reverse("exams:bookmark_add", args=[mock.pk, 2]), follow=True).content.decode()
        assert "You left this question unanswered" in page
        assert list(Bookmark.objects.values_list("question_id", flat=True)) == [first.question_id]
        assert ">Bookmark</button>" not in learner_client.get(results).content.decode()

    def test_a_running_mock_cannot_bookmark(self, learner_client, learner, exam):
        mock = attempt_start(user=learner, exam=exam).attempt
        slot = mock.responses.get(position=1)
        mock.record_answer(response=slot, choice_ids=[slot.choice_order[0]])
        learner_client.post(reverse("exams:bookmark_add", args=[mock.pk, 1]))
        assert not Bookmark.objects.exists()


class TestNotesInPlace:
    """With htmx the note's region on the bookmarks page becomes the form and back; the plain page stays for no JavaScript."""

    def test_a_note_is_written_saved_and_cancelled_in_place(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam)
        learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]))
        bookmark = Bookmark.objects.get()
        edit = reverse("exams:bookmark_edit", args=[bookmark.pk])
        listing = learner_client.get(reverse("exams:bookmarks")).content.decode()
        assert f'href="{edit}" hx-get="{edit}" hx-target="#note-{bookmark.pk}" hx-swap="outerHTML">Write a note' in listing
        form = learner_client.get(edit, headers=HTMX).content.decode()
        assert form.lstrip().startswith(f'<section class="bookmark-note" id="note-{bookmark.pk}"')
        assert f'hx-post="{edit}"' in form and f'id="note-{bookmark.pk}-note"' in form and "autofocus" in form
        assert "<html" not in form
        saved = learner_client.post(edit, {"note": "**Guidance** trades diversity for fidelity."}, headers=HTMX).content.decode()
        assert "<strong>Guidance</strong>" in saved and "Your note is saved." in saved and "Edit note" in saved
        assert Bookmark.objects.get().note.startswith("**Guidance**")
        too_long = learner_client.post(edit, {"note": "x" * (NOTE_MAX_LENGTH + 1)}, headers=HTMX)
        assert too_long.status_code == 200 and "at most 2000 characters" in too_long.content.decode()
        assert Bookmark.objects.get().note.startswith("**Guidance**")
        cancelled = learner_client.get(edit + "?show=note", headers=HTMX).content.decode()
        assert "<strong>Guidance</strong>" in cancelled and "<form" not in cancelled

    def test_another_learners_note_is_404_in_place_too(self, learner_client, learner, other_learner, exam, client):
        practice = checked_practice(learner, exam)
        learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]))
        bookmark = Bookmark.objects.get()
        client.force_login(other_learner)
        edit = reverse("exams:bookmark_edit", args=[bookmark.pk])
        assert client.get(edit, headers=HTMX).status_code == 404
        assert client.post(edit, {"note": "mine now"}, headers=HTMX).status_code == 404
        assert Bookmark.objects.get().note == ""


class TestTheList:
    def test_empty_state(self, learner_client):
        assert "No bookmarks yet" in learner_client.get(reverse("exams:bookmarks")).content.decode()

    def test_notes_are_markdown_sanitized_and_kept_to_2000_characters(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam)
        learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, 1]))
        bookmark = Bookmark.objects.get()
        edit = reverse("exams:bookmark_edit", args=[bookmark.pk])
        assert "Your note" in learner_client.get(edit).content.decode()
        learner_client.post(edit, {"note": "**Remember** the *guidance scale*.\r\n\r\n<script>alert(1)</script><img src=x onerror=alert(1)>"})
        page = learner_client.get(reverse("exams:bookmarks")).content.decode()
        assert "<strong>Remember</strong>" in page and "<em>guidance scale</em>" in page
        assert "<script>alert" not in page and "onerror" not in page
        before = Bookmark.objects.get().note
        page = learner_client.post(edit, {"note": "x" * (NOTE_MAX_LENGTH + 1)}).content.decode()
        assert "at most 2000 characters" in page
        assert Bookmark.objects.get().note == before
        # Line breaks count once, as the browser counts them.
        learner_client.post(edit, {"note": "ab\r\n" * 500})
        assert len(Bookmark.objects.get().note) <= NOTE_MAX_LENGTH and Bookmark.objects.get().note.startswith("ab\nab")

    def test_the_list_shows_key_explanation_and_a_retired_question_says_so(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, checked=2)
        for position in (1, 2):
            learner_client.post(reverse("exams:bookmark_add", args=[practice.pk, position]))
        retired = practice.responses.get(position=2).question
        Question.objects.filter(pk=retired.pk).update(is_active=False)
        page = learner_client.get(reverse("exams:bookmarks")).content.decode()
        key = retired.choices.get(is_correct=True)
        assert key.text in page and "Because the key is right." in page
        assert page.count("has been retired from the bank") == 1

    def test_the_list_is_paginated_in_a_fixed_number_of_queries(self, learner_client, learner, exam):
        def count_queries(url):
            learner_client.get(url)  # the first visit of a session reads more (the session, the profile)
            with CaptureQueriesContext(connection) as captured:
                assert learner_client.get(url).status_code == 200
            return len(captured.captured_queries)

        questions = list(exam.questions.order_by("pk"))
        Bookmark.objects.bulk_create(Bookmark(user=learner, question=q, note=f"Note {i}") for i, q in enumerate(questions[:2]))
        few = count_queries(reverse("exams:bookmarks"))
        Bookmark.objects.bulk_create(Bookmark(user=learner, question=q, note=f"Note {i}") for i, q in enumerate(questions[2:]))
        assert count_queries(reverse("exams:bookmarks")) == few
        page = learner_client.get(reverse("exams:bookmarks")).content.decode()
        assert page.count('class="card bookmark"') == 20 and "Bookmark pages" not in page
        extra = exam_with_bank(weights=(100,), per_domain=1).questions.get()
        Bookmark.objects.create(user=learner, question=extra)
        page = learner_client.get(reverse("exams:bookmarks")).content.decode()
        assert "Page 1 of 2" in page and "Older" in page and page.count('class="card bookmark"') == 20
        second = learner_client.get(reverse("exams:bookmarks") + "?page=2").content.decode()
        assert second.count('class="card bookmark"') == 1 and "Newer" in second

    def test_a_running_mocks_questions_show_no_key_explanation_or_note(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, count=20, checked=20)
        for slot in practice.responses.all():
            Bookmark.objects.create(user=learner, question_id=slot.question_id, note=f"secret note {slot.question_id}.")
        mock = attempt_start(user=learner, exam=exam).attempt
        in_mock = set(mock.responses.values_list("question_id", flat=True))
        page = learner_client.get(reverse("exams:bookmarks")).content.decode()
        for question in Question.objects.filter(pk__in=in_mock):
            assert f"secret note {question.pk}." not in page
        assert page.count("stay hidden until the mock ends") == len(in_mock)
        assert page.count("Because the key is right.") == 20 - len(in_mock)
        hidden = Bookmark.objects.filter(question_id__in=in_mock).first()
        page = learner_client.get(reverse("exams:bookmark_edit", args=[hidden.pk]), follow=True).content.decode()
        assert "its note opens again when the mock ends" in page and f"secret note {hidden.question_id}." not in page
        rows = list(csv.DictReader(io.StringIO(b"".join(learner_client.get(reverse("exams:export_csv")).streaming_content).decode())))
        assert rows and not any(row["note"] for row in rows if int(row["question_id"]) in in_mock)
        body = json.loads(learner_client.get(reverse("exams:export_json")).content)
        assert all(b["note"] == "" for b in body["bookmarks"] if b["question_id"] in in_mock)

    def test_the_history_download_carries_bookmarks_and_notes(self, learner_client, learner, exam):
        mock = attempt_start(user=learner, exam=exam).attempt
        first = mock.responses.get(position=1)
        mock.record_answer(response=first, choice_ids=[first.choice_order[0]])
        attempt_submit(user=learner, attempt_id=mock.pk)
        Bookmark.objects.create(user=learner, question_id=first.question_id, note="Check the *units*.")
        rows = list(csv.DictReader(io.StringIO(b"".join(learner_client.get(reverse("exams:export_csv")).streaming_content).decode())))
        row = next(r for r in rows if int(r["question_id"]) == first.question_id)
        assert row["bookmarked"] == "True" and row["note"] == "Check the *units*."
        assert all(r["bookmarked"] == "False" for r in rows if r is not row)
        body = json.loads(learner_client.get(reverse("exams:export_json")).content)
        [exported] = body["bookmarks"]
        assert exported["question_id"] == first.question_id and exported["note"] == "Check the *units*."
        assert exported["question_title"] == first.question.title


class TestOwnership:
    def test_another_learners_bookmark_is_404_and_unchanged(self, client, learner, other_learner, exam):
        question = exam.questions.first()
        bookmark = Bookmark.objects.create(user=learner, question=question, note="mine")
        client.force_login(other_learner)
        for url in (reverse("exams:bookmark_edit", args=[bookmark.pk]), reverse("exams:bookmark_delete", args=[bookmark.pk])):
            assert client.get(url).status_code == 404
            assert client.post(url, {"note": "theirs"}).status_code == 404
        assert Bookmark.objects.get().note == "mine"
        assert "mine" not in client.get(reverse("exams:bookmarks")).content.decode()

    def test_delete_asks_first(self, learner_client, learner, exam):
        bookmark = Bookmark.objects.create(user=learner, question=exam.questions.first(), note="mine")
        url = reverse("exams:bookmark_delete", args=[bookmark.pk])
        page = learner_client.get(url).content.decode()
        assert "Remove this bookmark?" in page and "cannot be undone" in page
        assert Bookmark.objects.exists()
        assert learner_client.post(url)["Location"] == reverse("exams:bookmarks")
        assert not Bookmark.objects.exists()

    def test_posts_need_the_csrf_token(self, learner, exam):
        from django.test import Client

        client = Client(enforce_csrf_checks=True)
        client.force_login(learner)
        bookmark = Bookmark.objects.create(user=learner, question=exam.questions.first(), note="mine")
        assert client.post(reverse("exams:bookmark_edit", args=[bookmark.pk]), {"note": "x"}).status_code == 403
        assert client.post(reverse("exams:bookmark_delete", args=[bookmark.pk])).status_code == 403
        assert Bookmark.objects.get().note == "mine"

    def test_notes_never_reach_the_admin(self, instructor_client, learner, exam):
        from django.contrib import admin

        assert Bookmark not in admin.site._registry
        Bookmark.objects.create(user=learner, question=exam.questions.first(), note="private thoughts")
        assert instructor_client.get("/admin/exams/bookmark/").status_code == 404
        question = exam.questions.first()
        page = instructor_client.get(reverse("admin:exams_question_change", args=[question.pk])).content.decode()
        assert "private thoughts" not in page


class TestTryAnother:
    def test_a_checked_question_adds_an_unseen_one_of_its_topic(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, count=3)
        first = practice.responses.get(position=1)
        seen = set(Response.objects.filter(attempt__user=learner).values_list("question_id", flat=True))
        assert "Try another like this" in learner_client.get(question_url(practice, 1)).content.decode()
        response = learner_client.post(reverse("exams:another_like_this", args=[practice.pk, 1]))
        assert response["Location"] == question_url(practice, 4)
        added = practice.responses.get(position=4)
        assert added.question.topic == first.question.topic and added.question_id not in seen
        assert added.domain_id == first.question.domain_id
        page = learner_client.get(question_url(practice, 4)).content.decode()
        assert "Question 4 of 4" in page
        practice.refresh_from_db()
        assert not practice.is_finished and practice.last_position == 4

    def test_none_left_says_so_and_adds_nothing(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, count=3)
        topic_domain = practice.responses.get(position=1).question.domain_id
        Question.objects.filter(domain_id=topic_domain).exclude(responses__attempt=practice).update(topic="Something else")
        page = learner_client.post(reverse("exams:another_like_this", args=[practice.pk, 1]), follow=True).content.decode()
        assert "You have already seen every question on “Diffusion”" in page
        assert practice.responses.count() == 3

    def test_only_after_checking_and_never_in_a_mock(self, learner_client, learner, exam):
        practice = checked_practice(learner, exam, count=3, checked=0)
        page = learner_client.post(reverse("exams:another_like_this", args=[practice.pk, 1]), follow=True).content.decode()
        assert "Check this answer first" in page and practice.responses.count() == 3
        attempt_submit(user=learner, attempt_id=practice.pk)
        mock = attempt_start(user=learner, exam=exam).attempt
        learner_client.post(reverse("exams:another_like_this", args=[mock.pk, 1]))
        assert mock.responses.count() == exam.question_count

    def test_a_running_mocks_questions_are_never_added(self, learner, exam):
        practice = checked_practice(learner, exam, count=3)
        mock = attempt_start(user=learner, exam=exam).attempt
        in_mock = set(mock.responses.values_list("question_id", flat=True))
        slot = practice.responses.select_related("question").get(position=1)
        added = []
        while True:
            try:
                added.append(attempt_add_like(attempt=practice, response=slot).question_id)
            except NothingLikeIt:
                break
        assert added and not in_mock & set(added)
        domain = Question.objects.filter(domain_id=slot.question.domain_id).values_list("pk", flat=True)
        in_practice = set(practice.responses.values_list("question_id", flat=True)) - set(added)
        assert set(added) == set(domain) - in_practice - in_mock
