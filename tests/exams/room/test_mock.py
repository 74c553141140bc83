"""The timed mock: draw, answer, flag, review, submit, deadline, results — through the views."""
import re
from collections import Counter
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.models import Attempt, AttemptStatus, Erratum, ErratumPolicy, ErratumStatus, Question, QuestionKind, Response
from exams.room import services
from exams.room.services import attempt_start
from exams.study import progress
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def start(client, exam) -> Attempt:
    response = client.post(reverse("exams:start_mock", args=[exam.code]))
    assert response.status_code == 302, response
    return Attempt.objects.latest("pk")


def question_url(attempt, position) -> str:
    return reverse("exams:question", args=[attempt.pk, position])


def key_positions(response: Response) -> list[str]:
    keys = set(response.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return [str(index) for index, pk in enumerate(response.choice_order, start=1) if pk in keys]


def wrong_position(response: Response) -> str:
    keys = set(response.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return next(str(index) for index, pk in enumerate(response.choice_order, start=1) if pk not in keys)


def expire(attempt: Attempt, *, seconds_past: int) -> None:
    now = timezone.now()
    Attempt.objects.filter(pk=attempt.pk).update(
        started_at=now - timedelta(hours=2), deadline=now - timedelta(seconds=seconds_past)
    )


class TestStart:
    def test_the_start_page_states_the_rules_before_the_clock_starts(self, learner_client):
        exam = exam_with_bank()
        page = learner_client.get(reverse("exams:exam", args=[exam.code])).content.decode()
        assert "Start mock" in page
        assert "10 minutes" in page and "keeps running" in page
        assert not Attempt.objects.exists()

    def test_start_draws_one_response_per_slot_stratified_by_weight(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40), per_domain=10, question_count=10)
        attempt = start(learner_client, exam)
        responses = list(attempt.responses.select_related("question"))
        assert [r.position for r in responses] == list(range(1, 11))
        assert len({r.question_id for r in responses}) == 10
        by_domain = Counter(r.question.domain.weight for r in responses)
        assert by_domain == {60: 6, 40: 4}
        assert attempt.deadline - attempt.started_at == timedelta(minutes=10)
        assert all(sorted(r.choice_order) == sorted(r.question.choices.values_list("pk", flat=True)) for r in responses)

    def test_the_accommodation_factor_stretches_the_deadline(self, learner_client, learner):
        Profile.objects.filter(user=learner).update(accommodation_factor="1.50")
        attempt = start(learner_client, exam_with_bank())
        assert attempt.deadline - attempt.started_at == timedelta(minutes=15)

    def test_start_mock_again_resumes_the_running_one(self, learner_client):
        exam = exam_with_bank()
        first = start(learner_client, exam)
        page = learner_client.get(reverse("exams:exam", args=[exam.code])).content.decode()
        assert "Resume mock" in page and "in progress" in page
        response = learner_client.post(reverse("exams:start_mock", args=[exam.code]), follow=True)
        assert Attempt.objects.count() == 1
        assert response.redirect_chain[-1][0] == question_url(first, 1)
        assert "already have a mock" in response.content.decode()

    def test_a_bank_too_small_for_a_domain_is_refused_with_a_clear_message(self, learner_client):
        exam = exam_with_bank(weights=(50, 50), per_domain=3, question_count=10)
        response = learner_client.post(reverse("exams:start_mock", args=[exam.code]), follow=True)
        page = response.content.decode()
        assert "question bank is too small" in page and "needs 5, has 3" in page
        assert not Attempt.objects.exists()

    def test_questions_seen_in_earlier_mocks_are_drawn_last(self, learner):
        exam = exam_with_bank(weights=(100,), per_domain=20, question_count=10)
        first = attempt_start(user=learner, exam=exam, seed=1).attempt
        Attempt.objects.filter(pk=first.pk).update(status=AttemptStatus.SUBMITTED, finished_at=timezone.now())
        second = attempt_start(user=learner, exam=exam, seed=2).attempt
        assert not set(first.responses.values_list("question_id", flat=True)) & set(
            second.responses.values_list("question_id", flat=True)
        )


class TestQuestionPage:
    def test_it_shows_one_question_with_choices_named_by_position(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        page = learner_client.get(question_url(attempt, 1)).content.decode()
        assert "Question 1 of 10" in page
        # The inputs carry positions 1–4, never choice ids (read from the inputs alone: the
        # navigator's buttons carry question numbers that an id can equal).
        assert re.findall(r'name="choice"\s+value="(\d+)"', page) == ["1", "2", "3", "4"]

    def test_the_htmx_partial_is_the_form_only(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        page = learner_client.get(question_url(attempt, 2), headers=HTMX).content.decode()
        assert page.lstrip().startswith("<form")
        assert "Question 2 of 10" in page and "<html" not in page

    def test_resume_opens_the_last_question_viewed(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.get(question_url(attempt, 7))
        response = learner_client.get(reverse("exams:attempt", args=[attempt.pk]))
        assert response["Location"] == question_url(attempt, 7)

    def test_multiple_select_says_choose_n(self, learner_client):
        exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
        QuestionFactory(domain=exam.domains.get(), kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "C"])
        attempt = start(learner_client, exam)
        page = learner_client.get(question_url(attempt, 1)).content.decode()
        assert "Choose 2" in page and 'type="checkbox"' in page


class TestNavigator:
    def test_each_button_says_its_state_and_only_the_current_one_is_marked(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "1", "flag": "on"}, headers=HTMX)
        learner_client.post(question_url(attempt, 2), {"flag": "on"}, headers=HTMX)
        page = learner_client.get(question_url(attempt, 2)).content.decode()
        buttons = re.findall(r'<button type="submit" name="go" value="\d+" id="nav-\d+"[^>]*>\d+</button>', page)
        assert len(buttons) == attempt.responses.count()
        assert buttons[0] == (
            '<button type="submit" name="go" value="1" id="nav-1" class="nav-item answered flagged" '
            'aria-label="Question 1, answered, flagged">1</button>'
        )
        assert buttons[1] == (
            '<button type="submit" name="go" value="2" id="nav-2" class="nav-item flagged current" aria-current="step" '
            'aria-label="Question 2, unanswered, flagged">2</button>'
        )
        assert buttons[2] == '<button type="submit" name="go" value="3" id="nav-3" class="nav-item" aria-label="Question 3, unanswered">3</button>'
        assert sum('aria-current="step"' in button for button in buttons) == 1
        assert "hx-swap-oob" not in page


class TestChoiceRows:
    """The rows are printed in Python (exams.room.views.question._choice_row): the markup the page's
    script, its styles and screen readers rely on, pinned."""

    def rows(self, page: str) -> list[str]:
        return re.findall(r'<div class="choice-row.*?</div>', page)

    def test_a_picked_a_struck_and_a_plain_choice(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "1", "struck_sent": "1", "struck": "2"}, headers=HTMX)
        slot = attempt.responses.select_related("version").get(position=1)
        text = [slot.version.choice_text(pk) for pk in slot.choice_order]
        rows = self.rows(learner_client.get(question_url(attempt, 1)).content.decode())
        assert len(rows) == 4
        assert rows[0] == (
            '<div class="choice-row" data-position="1"><label class="choice is-selected">'
            '<input type="radio" name="choice" value="1" data-letter="A" data-keys="1 a" checked>'
            '<span class="letter" aria-hidden="true">A</span>'
            f'<span class="choice-text"><span class="visually-hidden">A. </span>{text[0]}</span></label>'
            '<button type="submit" name="strike" value="1" class="strike-button" aria-pressed="false" title="Strike out A">'
            '<span aria-hidden="true">✕</span><span class="visually-hidden">Strike out A</span></button></div>'
        )
        assert rows[1] == (
            '<div class="choice-row is-struck" data-position="2"><label class="choice">'
            '<input type="radio" name="choice" value="2" data-letter="B" data-keys="2 b" disabled>'
            '<span class="letter" aria-hidden="true">B</span>'
            f'<span class="choice-text"><span class="visually-hidden">B. </span>{text[1]}'
            '<span class="visually-hidden"> (struck out)</span></span></label>'
            '<button type="submit" name="strike" value="2" class="strike-button" aria-pressed="true" title="Restore B">'
            '<span aria-hidden="true">↺</span><span class="visually-hidden">Restore B</span></button></div>'
        )
        assert 'class="choice"><input type="radio" name="choice" value="3" data-letter="C" data-keys="3 c">' in rows[2]

    def test_a_choose_two_question_has_checkboxes_and_a_checked_answer_no_strike_buttons(self, learner_client, learner):
        exam = exam_with_bank()
        Question.objects.filter(domain__exam=exam).update(kind="multiple", choose=2)
        learner_client.post(reverse("exams:start_session", args=[exam.code]), {"mode": "practice", "count": "3"})
        attempt = Attempt.objects.get(user=learner, mode="practice")
        page = learner_client.get(question_url(attempt, 1)).content.decode()
        assert all('type="checkbox"' in row for row in self.rows(page))
        learner_client.post(question_url(attempt, 1), {"choice": ["1", "2"], "check": "1"})
        rows = self.rows(learner_client.get(question_url(attempt, 1)).content.decode())
        assert len(rows) == 4 and not any("strike-button" in row for row in rows)
        assert all(" disabled>" in row for row in rows)


class TestAnswering:
    def test_an_htmx_save_is_stored_and_confirmed(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(question_url(attempt, 3), {"choice": "2"}, headers=HTMX)
        assert response.status_code == 200
        page = response.content.decode()
        assert ">Saved</p>" in page
        assert 'id="nav-3"' in page and 'hx-swap-oob="true"' in page and "answered" in page
        assert "clock-sync" in response["HX-Trigger"]
        slot = attempt.responses.get(position=3)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]
        assert slot.answered_at is not None

    def test_without_javascript_a_post_saves_and_goes_on(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(question_url(attempt, 1), {"choice": "1", "go": "next"})
        assert response["Location"] == question_url(attempt, 2)
        assert attempt.responses.get(position=1).picks.count() == 1
        response = learner_client.post(question_url(attempt, 2), {"go": "review"})
        assert response["Location"] == reverse("exams:review", args=[attempt.pk])

    def test_changing_and_clearing_an_answer(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX)
        learner_client.post(question_url(attempt, 1), {"choice": "3"}, headers=HTMX)
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[2]]
        # A post without the answer (a flag, a move) leaves it as it is...
        learner_client.post(question_url(attempt, 1), {}, headers=HTMX)
        learner_client.post(question_url(attempt, 1), {"flag": "on"}, headers=HTMX)
        assert slot.picks.count() == 1
        # ...and answer=1 with no choice is the explicit "clear my answer".
        learner_client.post(question_url(attempt, 1), {"answer": "1"}, headers=HTMX)
        slot.refresh_from_db()
        assert slot.picks.count() == 0 and slot.answered_at is None

    @pytest.mark.parametrize(
        ("body", "content_type"),
        [
            ('{"choice": []}', "application/json"),
            ("choice=", "text/plain"),
            ("--x\r\ngarbage without headers", "multipart/form-data; boundary=x"),
            ("--broken", "multipart/form-data"),
            # Django's parser reads each of these as a form with fewer fields (or none), which
            # the fast path confirmed "Saved" (issue 28): the outside check's attack.
            ('--x\r\nContent-Disposition: form-data; name="answer"\r\n\r\n1', "multipart/form-data; boundary=x"),
            ('--y\r\nContent-Disposition: form-data; name="choice"\r\n\r\n3\r\n--y--\r\n',
             "multipart/form-data; boundary=x"),
            ('--x\r\nContent-Disposition: form-data\r\n\r\n3\r\n--x--\r\n', "multipart/form-data; boundary=x"),
            ('--x\r\nContent-Type: text/plain\r\n\r\n3\r\n--x--\r\n', "multipart/form-data; boundary=x"),
            ('--x\r\nnot a header\r\n\r\n3\r\n--x--\r\n', "multipart/form-data; boundary=x"),
        ],
        ids=["json", "text", "garbled-multipart", "no-boundary", "truncated", "other-boundary", "nameless-part",
             "no-disposition", "bad-header-line"],
    )
    @pytest.mark.parametrize("headers", [HTMX, {}], ids=["htmx", "plain"])
    def test_a_save_that_is_not_a_well_formed_form_is_400_and_changes_nothing(
        self, learner_client, body, content_type, headers
    ):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "2", "flag": "on"}, headers=HTMX)
        before = attempt.responses.get(position=1)
        response = learner_client.post(question_url(attempt, 1), body, content_type=content_type, headers=headers)
        assert response.status_code == 400
        assert "X-Answer-Saved" not in response
        if content_type.startswith("multipart/"):
            assert response.content.decode().startswith("Not saved")
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]
        assert (slot.answered_at, slot.flagged) == (before.answered_at, True)
        attempt.refresh_from_db()
        assert attempt.last_position == 1

    def test_a_multipart_save_too_large_for_the_gate_to_read_is_refused(self, learner_client, settings):
        """A body over Django's in-memory cap is not checked by the gate: a save refuses it unread."""
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "2"}, headers=HTMX)
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200
        padding = SimpleUploadedFile("padding.txt", b"x" * 400)
        for headers in (HTMX, {}):
            response = learner_client.post(question_url(attempt, 1), {"choice": "3", "file": padding}, headers=headers)
            assert response.status_code == 400 and response.content.decode().startswith("Not saved")
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]

    def test_a_well_formed_multipart_save_still_saves(self, learner_client):
        """The test client posts multipart by default, as a browser's FormData does: it stays "Saved"."""
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(question_url(attempt, 1), {"choice": "3"}, headers=HTMX)
        assert response["X-Answer-Saved"] == "1"
        response = learner_client.post(question_url(attempt, 1), {"choice": "2"})
        assert response.status_code == 302
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]

    def test_flag_saves_in_place_and_navigation_returns_the_next_question(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(question_url(attempt, 4), {"flag": "on"}, headers=HTMX)
        # The question on screen is not redrawn: only the status and its navigator item.
        assert "HX-Retarget" not in response and response["X-Answer-Saved"] == "1"
        assert 'id="nav-4"' in response.content.decode() and "flagged" in response.content.decode()
        assert attempt.responses.get(position=4).flagged
        learner_client.post(question_url(attempt, 4), {"flag": "on"}, headers=HTMX)
        assert attempt.responses.get(position=4).flagged, "on is a state, not a toggle: a retry keeps it"
        learner_client.post(question_url(attempt, 4), {"flag": "off"}, headers=HTMX)
        assert not attempt.responses.get(position=4).flagged
        learner_client.post(question_url(attempt, 4), {"flag": "toggle"}, headers=HTMX)
        assert attempt.responses.get(position=4).flagged
        response = learner_client.post(question_url(attempt, 4), {"go": "next"}, headers=HTMX)
        assert "Question 5 of 10" in response.content.decode()
        assert response["HX-Push-Url"] == question_url(attempt, 5)

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"choice": "9"}, "not one of this question"),
            ({"choice": "0"}, "not one of this question"),
            ({"choice": "x"}, "not one of this question"),
            ({"go": "99"}, "no question"),
            ({"flag": "maybe"}, "Select a valid choice"),
        ],
    )
    def test_bad_input_is_400_with_a_message_and_changes_nothing(self, learner_client, data, message):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "2"}, headers=HTMX)
        response = learner_client.post(question_url(attempt, 1), data, headers=HTMX)
        assert response.status_code == 400
        assert message in response.content.decode()
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]
        assert not slot.flagged

    def test_a_slot_not_in_the_attempt_is_400(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(question_url(attempt, 11), {"choice": "1"})
        assert response.status_code == 400

    def test_more_picks_than_choose_are_refused_with_422_and_the_reason_in_the_page(self, learner_client):
        exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
        QuestionFactory(domain=exam.domains.get(), kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "C"])
        attempt = start(learner_client, exam)
        response = learner_client.post(question_url(attempt, 1), {"choice": ["1", "2", "3"]}, headers=HTMX)
        assert response.status_code == 422 and "takes 2 choices; 3 were sent" in response.content.decode()
        assert 'id="pick-limit"' in response.content.decode() and "<html" not in response.content.decode()
        # Without JavaScript: the whole question page, the message in it, nothing stored.
        response = learner_client.post(question_url(attempt, 1), {"choice": ["1", "2", "3"], "go": "next"})
        page = response.content.decode()
        assert response.status_code == 422 and "<html" in page and "takes 2 choices; 3 were sent" in page
        assert attempt.responses.get().picks.count() == 0
        assert learner_client.post(question_url(attempt, 1), {"choice": ["1", "2"]}, headers=HTMX).status_code == 200

    def test_a_single_answer_question_refuses_two_picks_with_422(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "2"}, headers=HTMX)
        response = learner_client.post(question_url(attempt, 1), {"choice": ["1", "2"]}, headers=HTMX)
        assert response.status_code == 422 and "takes 1 choice" in response.content.decode()
        slot = attempt.responses.get(position=1)
        assert list(slot.picks.values_list("choice_id", flat=True)) == [slot.choice_order[1]]


class TestDeadline:
    def test_a_save_within_the_grace_is_accepted(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        expire(attempt, seconds_past=10)
        assert learner_client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX).status_code == 200

    def test_a_save_after_deadline_and_grace_is_409_and_the_attempt_expires(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX)
        expire(attempt, seconds_past=31)
        response = learner_client.post(question_url(attempt, 2), {"choice": "1"}, headers=HTMX)
        assert response.status_code == 409
        assert "Time is up" in response.content.decode()
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.EXPIRED
        assert attempt.responses.get(position=1).picks.count() == 1
        assert attempt.responses.get(position=2).picks.count() == 0

    def test_opening_an_expired_attempt_finalizes_it(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        expire(attempt, seconds_past=60)
        response = learner_client.get(question_url(attempt, 1))
        assert response["Location"] == reverse("exams:results", args=[attempt.pk])
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.EXPIRED and attempt.score is not None

    def test_the_catalogue_finalizes_the_learners_expired_attempts(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        expire(attempt, seconds_past=60)
        learner_client.get(reverse("exams:catalogue"))
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.EXPIRED

    def test_the_cron_command_finalizes_everyone_past_grace_only(self, learner, other_learner):
        exam = exam_with_bank()
        late = attempt_start(user=learner, exam=exam).attempt
        on_time = attempt_start(user=other_learner, exam=exam).attempt
        expire(late, seconds_past=45)
        call_command("finalize_expired_attempts")
        late.refresh_from_db()
        on_time.refresh_from_db()
        assert late.status == AttemptStatus.EXPIRED
        assert late.finished_at == late.deadline
        assert on_time.status == AttemptStatus.IN_PROGRESS


class TestSubmit:
    def test_review_counts_and_lists_unanswered_and_flagged(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        learner_client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX)
        learner_client.post(question_url(attempt, 2), {"flag": "on"}, headers=HTMX)
        page = learner_client.get(reverse("exams:review", args=[attempt.pk])).content.decode()
        assert "9 unanswered, 0 incomplete, 1 flagged" in page
        assert f'href="{question_url(attempt, 2)}"' in page

    def test_submit_without_confirmation_asks_first(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.post(reverse("exams:submit", args=[attempt.pk]))
        assert response.status_code == 200 and "Submit your answers?" in response.content.decode()
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.IN_PROGRESS

    def test_submitting_grades_once_and_a_second_submit_changes_nothing(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        right_slot = attempt.responses.get(position=1)
        learner_client.post(question_url(attempt, 1), {"choice": key_positions(right_slot)}, headers=HTMX)
        learner_client.post(question_url(attempt, 2), {"choice": wrong_position(attempt.responses.get(position=2))}, headers=HTMX)
        url = reverse("exams:submit", args=[attempt.pk])
        assert learner_client.post(url, {"confirmed": "1"})["Location"] == reverse("exams:results", args=[attempt.pk])
        attempt.refresh_from_db()
        first = (attempt.status, attempt.score, attempt.finished_at)
        assert attempt.status == AttemptStatus.SUBMITTED
        assert (attempt.right_count, attempt.total_count, attempt.score) == (1, 10, 10)
        assert attempt.published_score == attempt.score and attempt.passed is False
        learner_client.post(url, {"confirmed": "1"})
        attempt.refresh_from_db()
        assert (attempt.status, attempt.score, attempt.finished_at) == first
        assert learner_client.post(question_url(attempt, 3), {"choice": "1"}, headers=HTMX).status_code == 409

    def test_a_submit_after_the_deadline_records_the_attempt_as_expired(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        expire(attempt, seconds_past=2)
        learner_client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.EXPIRED


class TestResults:
    def finished(self, client, exam, *, right_positions=()) -> Attempt:
        attempt = start(client, exam)
        for position in right_positions:
            slot = attempt.responses.get(position=position)
            client.post(question_url(attempt, position), {"choice": key_positions(slot)}, headers=HTMX)
        client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        attempt.refresh_from_db()
        return attempt

    def test_results_show_score_domains_and_every_question_with_key_and_explanation(self, learner_client):
        exam = exam_with_bank(weights=(60, 40))
        attempt = self.finished(learner_client, exam, right_positions=[1, 2, 3])
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert "3 of 10 right" in page and "not passed" in page
        for domain in exam.domains.all():
            assert domain.name in page
        assert "<svg" in page and "chart-pass-line" in page
        assert page.count('class="result-item') == 10
        assert "Because the key is right." in page and "Feedback on A." in page

    def test_filters_show_wrong_or_flagged_only(self, learner_client):
        exam = exam_with_bank()
        attempt = start(learner_client, exam)
        slot = attempt.responses.get(position=1)
        learner_client.post(question_url(attempt, 1), {"choice": key_positions(slot), "flag": "on"}, headers=HTMX)
        learner_client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        url = reverse("exams:results", args=[attempt.pk])
        assert learner_client.get(url, {"show": "wrong"}).content.decode().count('class="result-item') == 9
        flagged = learner_client.get(url, {"show": "flagged"}).content.decode()
        assert flagged.count('class="result-item') == 1 and "Question 1:" in flagged

    def test_change_since_the_previous_mock(self, learner_client):
        exam = exam_with_bank(weights=(100,), per_domain=30)
        self.finished(learner_client, exam, right_positions=[])
        second = self.finished(learner_client, exam, right_positions=[1, 2, 3, 4, 5])
        page = learner_client.get(reverse("exams:results", args=[second.pk])).content.decode()
        assert ">+50.0</td>" in page

    def test_a_confirmed_erratum_shows_published_and_corrected_keys_with_this_attempts_letters(self, learner_client):
        exam = exam_with_bank(weights=(100,), per_domain=10)
        attempt = self.finished(learner_client, exam)
        slot = attempt.responses.get(position=1)
        wrong_choice = slot.question.choices.get(label="B")
        erratum = Erratum.objects.create(
            question=slot.question, note="The published key named the wrong statement.",
            status=ErratumStatus.CONFIRMED, policy=ErratumPolicy.CREDIT_CORRECTED, decided_at=timezone.now(),
        )
        erratum.published_key.set([wrong_choice])
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        letter = "ABCD"[slot.choice_order.index(wrong_choice.pk)]
        assert re.search(rf"The published key named\s+<strong>{letter}</strong>", page)
        assert "The published key named the wrong statement." in page

    def test_moving_a_question_to_another_domain_leaves_past_results_alone(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40))
        attempt = self.finished(learner_client, exam, right_positions=[1, 2, 3])
        url = reverse("exams:results", args=[attempt.pk])
        before_page = learner_client.get(url).content.decode()
        before = services.domain_results(attempts=[attempt])
        before_mastery = progress.domain_standings(user=learner, exam=exam)
        first, second = exam.domains.order_by("order")
        moved = attempt.responses.filter(domain=first).values_list("question_id", flat=True)
        assert Question.objects.filter(pk__in=list(moved)).update(domain=second) > 0

        assert services.domain_results(attempts=[attempt]) == before
        assert progress.domain_standings(user=learner, exam=exam) == before_mastery
        table = re.compile(r'<table class="domain-results">.*?</table>', re.S)
        assert table.search(learner_client.get(url).content.decode()).group() == table.search(before_page).group()

    def test_results_of_an_unfinished_attempt_send_the_learner_back(self, learner_client):
        attempt = start(learner_client, exam_with_bank())
        response = learner_client.get(reverse("exams:results", args=[attempt.pk]))
        assert response["Location"] == question_url(attempt, 1)


class TestSecrets:
    def test_no_key_explanation_or_feedback_reaches_the_browser_before_the_end(self, learner_client):
        exam = exam_with_bank(weights=(100,), per_domain=10)
        for question in exam.questions.all():
            question.explanation = f"SECRET-EXPLANATION-{question.pk}"
            question.save()
            for choice in question.choices.all():
                choice.feedback = f"SECRET-FEEDBACK-{choice.pk}"
                choice.save()
        attempt = start(learner_client, exam)
        bodies = [learner_client.get(reverse("exams:exam", args=[exam.code])).content.decode()]
        for position in range(1, 11):
            url = question_url(attempt, position)
            bodies.append(learner_client.get(url).content.decode())
            bodies.append(learner_client.get(url, headers=HTMX).content.decode())
            bodies.append(learner_client.post(url, {"choice": "1"}, headers=HTMX).content.decode())
            bodies.append(learner_client.post(url, {"flag": "toggle"}, headers=HTMX).content.decode())
            bodies.append(learner_client.post(url, {"go": "next"}, headers=HTMX).content.decode())
        bodies.append(learner_client.get(reverse("exams:review", args=[attempt.pk])).content.decode())
        bodies.append(learner_client.post(reverse("exams:submit", args=[attempt.pk])).content.decode())
        for body in bodies:
            assert "SECRET-" not in body
            assert "is_correct" not in body and "is-key" not in body
        learner_client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        results = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert "SECRET-EXPLANATION-" in results and "SECRET-FEEDBACK-" in results


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("exams:attempt", "get"), ("exams:question", "get"), ("exams:question", "post"),
        ("exams:review", "get"), ("exams:submit", "post"), ("exams:results", "get"),
    ],
)
def test_another_learner_gets_404_on_every_attempt_url(client, learner, other_learner, name, method):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    client.force_login(other_learner)
    args = [attempt.pk, 1] if name == "exams:question" else [attempt.pk]
    response = getattr(client, method)(reverse(name, args=args), {"choice": "1", "confirmed": "1"} if method == "post" else {})
    assert response.status_code == 404
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.IN_PROGRESS
    assert not attempt.responses.filter(answered_at__isnull=False).exists()


def test_attempt_pages_need_a_login(client, learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    response = client.get(question_url(attempt, 1))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def page_query_counts(client, size: int) -> dict[str, int]:
    exam = exam_with_bank(weights=(50, 30, 20), per_domain=size, question_count=size)
    attempt = start(client, exam)
    slots = {response.position: response for response in attempt.responses.prefetch_related("question__choices")}
    # One right and two wrong answers whatever the shuffle: grading then files review
    # items in both runs (answering all right by chance would save a query and fail this).
    client.post(question_url(attempt, 1), {"choice": key_positions(slots[1])[0], "flag": "on"}, headers=HTMX)
    client.post(question_url(attempt, 2), {"choice": wrong_position(slots[2]), "flag": "on"}, headers=HTMX)
    client.get(question_url(attempt, 3))
    pages = {
        "question": lambda: client.get(question_url(attempt, 3)),
        "save": lambda: client.post(question_url(attempt, 3), {"choice": wrong_position(slots[3])}, headers=HTMX),
        "review": lambda: client.get(reverse("exams:review", args=[attempt.pk])),
        "submit": lambda: client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"}),
        "results": lambda: client.get(reverse("exams:results", args=[attempt.pk])),
    }
    counts = {}
    for label, request in pages.items():
        with CaptureQueriesContext(connection) as queries:
            assert request().status_code in (200, 302), label
        counts[label] = len(queries.captured_queries)
    return counts


def test_page_query_counts_are_the_same_for_10_and_60_questions(learner_client):
    small = page_query_counts(learner_client, 10)
    large = page_query_counts(learner_client, 60)
    assert small == large, (small, large)
    assert small["question"] <= 10 and small["save"] <= 14 and small["results"] <= 18


def test_an_htmx_save_after_the_session_ended_is_401_not_a_login_page(client, learner):
    attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
    response = client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX)
    assert response.status_code == 401 and "not saved" in response.content.decode()
    assert "X-Answer-Saved" not in response
    assert client.get(question_url(attempt, 1)).status_code == 302


def test_saves_carry_the_servers_confirmation(learner_client):
    attempt = start(learner_client, exam_with_bank())
    assert learner_client.post(question_url(attempt, 1), {"choice": "1"}, headers=HTMX)["X-Answer-Saved"] == "1"
    assert learner_client.post(question_url(attempt, 1), {"go": "next"}, headers=HTMX)["X-Answer-Saved"] == "1"


def test_an_attempt_expiring_unseen_is_graded_as_finished_at_its_deadline(learner, instructor):
    """Credit-either applies to it if the deadline came before the confirmation, now and on regrade."""
    from exams.bank.errata.regrade import erratum_confirm, regrade_question

    exam = exam_with_bank(weights=(100,), per_domain=10)
    attempt = attempt_start(user=learner, exam=exam).attempt
    slot = attempt.responses.select_related("question").get(position=1)
    published = slot.question.choices.get(is_correct=True)
    attempt.record_answer(response=slot, choice_ids=[published.pk])
    expire(attempt, seconds_past=3600)
    erratum = Erratum.objects.create(question=slot.question)
    erratum.published_key.set([published])
    erratum_confirm(
        erratum=erratum, policy=ErratumPolicy.CREDIT_EITHER,
        corrected_choice_ids=[slot.question.choices.exclude(pk=published.pk).first().pk], user=instructor,
    )
    from exams.room.services import finalize_expired

    finalize_expired()
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.EXPIRED and attempt.right_count == 1
    event = regrade_question(question=slot.question)
    attempt.refresh_from_db()
    assert attempt.right_count == 1 and event.scores_changed == 0
