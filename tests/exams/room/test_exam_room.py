"""The exam room on the server: checks grade the picks sent with them, strike-outs, walks
through flagged or unanswered slots, refusals as 422, exhibits and inline Markdown."""
import pytest
from django.test import Client
from django.urls import reverse

from exams.models import AttemptMode, Choice, ExhibitImage, ReviewCard
from exams.room.services import attempt_start
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def question_url(attempt, position):
    return reverse("exams:question", args=[attempt.pk, position])


def key_position(slot) -> str:
    keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return next(str(i) for i, pk in enumerate(slot.choice_order, start=1) if pk in keys)


def wrong_position(slot) -> str:
    keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    return next(str(i) for i, pk in enumerate(slot.choice_order, start=1) if pk not in keys)


class TestCheckGradesWhatWasPicked:
    @pytest.mark.parametrize("headers", [{}, HTMX], ids=["no-js", "js"])
    def test_picking_the_key_and_checking_in_one_post_is_right(self, learner_client, learner, headers):
        attempt = attempt_start(user=learner, exam=exam_with_bank(), mode=AttemptMode.PRACTICE).attempt
        slot = attempt.responses.get(position=1)
        learner_client.post(question_url(attempt, 1), {"choice": wrong_position(slot)}, headers=headers)
        response = learner_client.post(question_url(attempt, 1), {"choice": key_position(slot), "check": "1"}, headers=headers)
        assert response.status_code in (200, 302)
        slot.refresh_from_db()
        assert slot.is_correct is True
        assert ReviewCard.objects.get(user=learner, question=slot.question).last_review == slot.checked_at
        page = learner_client.get(question_url(attempt, 1)).content.decode()
        assert ">\n            Right\n" in page or "Right" in page.split('id="checked-heading"')[1][:200]

    def test_a_retried_check_with_the_same_picks_changes_nothing(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank(), mode=AttemptMode.PRACTICE).attempt
        slot = attempt.responses.get(position=1)
        data = {"choice": key_position(slot), "check": "1"}
        assert learner_client.post(question_url(attempt, 1), data, headers=HTMX).status_code == 200
        again = learner_client.post(question_url(attempt, 1), data, headers=HTMX)
        assert again.status_code == 200 and again["X-Answer-Saved"] == "1"
        changed = learner_client.post(question_url(attempt, 1), {"choice": wrong_position(slot)}, headers=HTMX)
        assert changed.status_code == 422 and "already checked" in changed.content.decode()
        slot.refresh_from_db()
        assert slot.is_correct is True


class TestStrikeOut:
    def test_the_whole_set_is_stored_and_shown_after_a_reload(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        response = learner_client.post(question_url(attempt, 2), {"struck_sent": "1", "struck": ["1", "3"]}, headers=HTMX)
        assert response.status_code == 200 and response["X-Answer-Saved"] == "1"
        slot = attempt.responses.get(position=2)
        assert set(slot.strikes.values_list("choice_id", flat=True)) == {slot.choice_order[0], slot.choice_order[2]}
        page = learner_client.get(question_url(attempt, 2)).content.decode()
        assert page.count('class="choice-row is-struck"') == 2
        assert "Restore A" in page and "Restore C" in page and "Strike out B" in page
        # Another device (a new session) sees the same.
        other = Client()
        other.force_login(learner)
        assert other.get(question_url(attempt, 2)).content.decode().count("is-struck") == 2
        learner_client.post(question_url(attempt, 2), {"struck_sent": "1"}, headers=HTMX)
        assert not slot.strikes.exists()

    def test_striking_out_the_picked_choice_removes_the_pick(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        learner_client.post(question_url(attempt, 1), {"choice": "2"}, headers=HTMX)
        learner_client.post(question_url(attempt, 1), {"choice": "2", "struck_sent": "1", "struck": "2"}, headers=HTMX)
        slot = attempt.responses.get(position=1)
        assert slot.picks.count() == 0 and slot.answered_at is None
        assert slot.strikes.count() == 1

    def test_a_struck_choice_cannot_be_picked_until_restored(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        learner_client.post(question_url(attempt, 1), {"struck_sent": "1", "struck": "3"}, headers=HTMX)
        response = learner_client.post(question_url(attempt, 1), {"choice": "3", "struck_sent": "1", "struck": "3"}, headers=HTMX)
        assert response.status_code == 422 and "restore it before picking it" in response.content.decode()
        slot = attempt.responses.get(position=1)
        assert slot.picks.count() == 0
        learner_client.post(question_url(attempt, 1), {"choice": "3", "struck_sent": "1"}, headers=HTMX)
        assert slot.picks.count() == 1 and slot.strikes.count() == 0

    def test_without_javascript_a_strike_button_toggles_one_choice(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        response = learner_client.post(question_url(attempt, 1), {"strike": "4"})
        assert response.status_code == 302 and response["Location"] == question_url(attempt, 1)
        slot = attempt.responses.get(position=1)
        assert list(slot.strikes.values_list("choice_id", flat=True)) == [slot.choice_order[3]]
        learner_client.post(question_url(attempt, 1), {"strike": "4"})
        assert not slot.strikes.exists()

    def test_strike_outs_are_never_graded(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        slot = attempt.responses.get(position=1)
        key = key_position(slot)
        others = [str(i) for i in range(1, 5) if str(i) != key]
        learner_client.post(question_url(attempt, 1), {"choice": key, "struck_sent": "1", "struck": others[:2]}, headers=HTMX)
        learner_client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        slot.refresh_from_db()
        attempt.refresh_from_db()
        assert slot.is_correct is True and attempt.right_count == 1

    def test_a_strike_of_a_position_the_question_does_not_have_is_400(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        response = learner_client.post(question_url(attempt, 1), {"struck_sent": "1", "struck": "7"}, headers=HTMX)
        assert response.status_code == 400
        assert not attempt.responses.get(position=1).strikes.exists()


class TestWalks:
    def test_next_steps_through_only_the_flagged_slots_then_back_to_review(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        for position in (3, 7):
            learner_client.post(question_url(attempt, position), {"flag": "on"}, headers=HTMX)
        page = learner_client.get(question_url(attempt, 3) + "?walk=flagged").content.decode()
        assert "reviewing flagged (2)" in page and "Next flagged" in page
        response = learner_client.post(question_url(attempt, 3), {"go": "next", "walk": "flagged"})
        assert response["Location"] == question_url(attempt, 7) + "?walk=flagged"
        response = learner_client.post(question_url(attempt, 7), {"go": "next", "walk": "flagged"})
        assert response["Location"] == reverse("exams:review", args=[attempt.pk])
        response = learner_client.post(question_url(attempt, 7), {"go": "prev", "walk": "flagged"}, headers=HTMX)
        assert "Question 3 of 10" in response.content.decode()

    def test_the_unanswered_walk_skips_answered_slots(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        for position in (1, 2, 4):
            learner_client.post(question_url(attempt, position), {"choice": "1"}, headers=HTMX)
        response = learner_client.post(question_url(attempt, 1), {"go": "next", "walk": "unanswered"})
        assert response["Location"] == question_url(attempt, 3) + "?walk=unanswered"
        response = learner_client.post(question_url(attempt, 3), {"go": "next", "walk": "unanswered"})
        assert response["Location"] == question_url(attempt, 5) + "?walk=unanswered"

    def test_the_review_page_offers_both_walks(self, learner_client, learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        learner_client.post(question_url(attempt, 5), {"flag": "on"}, headers=HTMX)
        page = learner_client.get(reverse("exams:review", args=[attempt.pk])).content.decode()
        assert f'href="{question_url(attempt, 5)}?walk=flagged"' in page
        assert f'href="{question_url(attempt, 1)}?walk=unanswered"' in page


class TestExhibits:
    def make(self, exam):
        ExhibitImage.objects.create(name="05-curve.png", content_type="image/png", data=PNG, digest="x")
        question = exam.questions.order_by("pk").first()
        question.exhibit = "![A validation loss curve](exhibit:05-curve.png)"
        question.save()
        return question

    def test_a_learner_holding_the_question_sees_the_image_and_nobody_else_does(self, client, learner, other_learner, instructor):
        exam = exam_with_bank(weights=(100,), per_domain=10)
        question = self.make(exam)
        attempt = attempt_start(user=learner, exam=exam).attempt
        position = attempt.responses.get(question=question).position
        url = reverse("exams:exhibit", args=[question.pk, "05-curve.png"])
        client.force_login(learner)
        page = client.get(question_url(attempt, position)).content.decode()
        assert f'<img src="{url}" alt="A validation loss curve"' in page
        image = client.get(url)
        assert image.status_code == 200 and image["Content-Type"] == "image/png" and image.content == PNG
        assert image["X-Content-Type-Options"] == "nosniff"
        client.force_login(other_learner)
        assert client.get(url).status_code == 404
        client.force_login(instructor)
        assert client.get(url).status_code == 200
        client.logout()
        assert client.get(url).status_code == 302
        client.force_login(learner)
        assert client.get(reverse("exams:exhibit", args=[question.pk, "other.png"])).status_code == 404


def test_choices_and_feedback_render_inline_markdown_through_the_sanitizer(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
    question = QuestionFactory(domain=exam.domains.get())
    Choice.objects.filter(question=question, label="B").update(
        text="Set `max_batch_size: 0` <script>alert(1)</script>", feedback="Use **`dynamic_batching`** instead."
    )
    attempt = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE).attempt
    page = learner_client.get(question_url(attempt, 1)).content.decode()
    assert "<code>max_batch_size: 0</code>" in page and "<script>alert" not in page
    slot = attempt.responses.get()
    # The only question checked ends the session: its results show the feedback.
    page = learner_client.post(question_url(attempt, 1), {"choice": key_position(slot), "check": "1"}, follow=True).content.decode()
    assert "<strong><code>dynamic_batching</code></strong>" in page and "<code>max_batch_size: 0</code>" in page


class TestResults:
    def finished_mock(self, client, learner, *, right: set[int]):
        attempt = attempt_start(user=learner, exam=exam_with_bank(weights=(60, 40), per_domain=10)).attempt
        for slot in attempt.responses.all():
            choice = key_position(slot) if slot.position in right else wrong_position(slot)
            client.post(question_url(attempt, slot.position), {"choice": choice}, headers=HTMX)
        client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        attempt.refresh_from_db()
        return attempt

    def test_filters_by_domain_as_well_as_wrong_and_explanations_start_collapsed(self, learner_client, learner):
        attempt = self.finished_mock(learner_client, learner, right={1, 2, 3})
        domain = attempt.exam.domains.order_by("order").last()
        url = reverse("exams:results", args=[attempt.pk])
        page = learner_client.get(url, {"show": "wrong", "domain": domain.pk}).content.decode()
        expected = attempt.responses.exclude(is_correct=True).filter(domain=domain).count()
        assert page.count('class="result-item') == expected
        assert '<details class="explanation">' in page and '<details class="explanation" open>' not in page
        assert "bogus" not in learner_client.get(url, {"domain": "bogus"}).content.decode()

    def test_practise_the_ones_i_got_wrong_takes_exactly_those(self, learner_client, learner):
        attempt = self.finished_mock(learner_client, learner, right={1, 2, 3})
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert "Practise the 7 I got wrong" in page
        response = learner_client.post(reverse("exams:practise_wrong", args=[attempt.pk]))
        practice = learner.attempts.get(mode=AttemptMode.PRACTICE)
        assert response["Location"] == question_url(practice, 1)
        assert set(practice.responses.values_list("question_id", flat=True)) == set(
            attempt.responses.exclude(is_correct=True).values_list("question_id", flat=True)
        )

    def test_with_a_practice_in_progress_it_offers_to_finish_or_abandon_it_first(self, learner_client, learner):
        attempt = self.finished_mock(learner_client, learner, right=set())
        running = attempt_start(user=learner, exam=attempt.exam, mode=AttemptMode.PRACTICE).attempt
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert "You have a practice session in progress" in page and f'value="{running.pk}"' in page
        learner_client.post(reverse("exams:practise_wrong", args=[attempt.pk]))
        running.refresh_from_db()
        assert not running.is_finished
        learner_client.post(reverse("exams:practise_wrong", args=[attempt.pk]), {"abandon": running.pk})
        running.refresh_from_db()
        assert running.status == "abandoned" and running.score is None
        assert learner.attempts.filter(mode=AttemptMode.PRACTICE, status="in_progress").get().responses.count() == 10

    def test_it_is_hidden_when_nothing_was_wrong_and_refuses_other_learners(self, learner_client, learner, client, other_learner):
        attempt = self.finished_mock(learner_client, learner, right=set(range(1, 11)))
        assert "I got wrong" not in learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        client.force_login(other_learner)
        assert client.post(reverse("exams:practise_wrong", args=[attempt.pk])).status_code == 404

    def test_scores_show_one_decimal_half_up_with_right_over_total(self, learner_client, learner):
        attempt = self.finished_mock(learner_client, learner, right={1, 2})
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert f'<strong class="score">{attempt.score:.1f}%</strong> (2/10)' in page


@pytest.mark.parametrize("mode", [AttemptMode.PRACTICE, AttemptMode.DRILL, AttemptMode.REVIEW, AttemptMode.MOCK])
def test_every_draw_takes_at_most_one_question_of_an_exclusion_group(learner, mode):
    from django.utils import timezone

    exam = exam_with_bank(weights=(100,), per_domain=12, question_count=6)
    questions = list(exam.questions.order_by("pk"))
    # Three groups of three; three questions stand alone.
    for index, question in enumerate(questions[:9]):
        question.exclusion_group = f"group-{index // 3}"
        question.save()
    for question in questions:
        ReviewCard.objects.create(user=learner, question=question, due=timezone.now())
    for seed in range(10):
        started = attempt_start(user=learner, exam=exam, mode=mode, domain=exam.domains.get(), count=12, seed=seed).attempt
        drawn = list(started.responses.values_list("question__exclusion_group", flat=True))
        groups = [group for group in drawn if group]
        assert len(groups) == len(set(groups)) == 3, (mode, drawn)
        assert len(drawn) == 6
        started.delete()


def test_a_stored_question_past_the_bounds_never_breaks_a_learners_pages(learner_client, learner):
    """27 choices (stored before the bounds existed): the pages letter them A…Z, AA and work."""
    exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
    question = QuestionFactory(domain=exam.domains.get())
    for n in range(5, 28):
        Choice.objects.create(question=question, label=f"{chr(65 + n // 10)}{n % 10}", order=n, text=f"Extra choice {n}", feedback="No.")
    attempt = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE).attempt
    page = learner_client.get(question_url(attempt, 1))
    assert page.status_code == 200 and "Strike out AA" in page.content.decode()
    assert learner_client.post(question_url(attempt, 1), {"choice": "27"}, headers=HTMX).status_code == 200
    response = learner_client.post(question_url(attempt, 1), {"choice": "27", "check": "1"}, follow=True)
    assert response.status_code == 200
    assert learner_client.get(reverse("exams:export_csv")).status_code == 200


def test_the_admin_refuses_an_eleventh_choice():
    from django.forms import inlineformset_factory

    from exams.bank.admin import ChoiceInline, ChoiceInlineFormSet
    from exams.models import Question

    exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
    question = Question(exam=exam, domain=exam.domains.get(), title="T", stem="S", kind="single", choose=1)
    # The formset's own rule, past the inline's max_num (which only limits the forms shown).
    formset_class = inlineformset_factory(Question, Choice, formset=ChoiceInlineFormSet, fields=ChoiceInline.fields, extra=0, max_num=50)

    def data(count: int) -> dict:
        rows = {"choices-TOTAL_FORMS": str(count), "choices-INITIAL_FORMS": "0"}
        for n in range(count):
            rows |= {f"choices-{n}-order": str(n + 1), f"choices-{n}-label": f"{chr(65 + n)}", f"choices-{n}-text": f"Choice {n}",
                     f"choices-{n}-is_correct": "on" if n == 0 else "", f"choices-{n}-feedback": ""}
        return rows

    eleven = formset_class(data(11), instance=question, prefix="choices")
    assert not eleven.is_valid() and "at most 10 choices; this one has 11" in str(eleven.non_form_errors())
    assert formset_class(data(10), instance=question, prefix="choices").is_valid()
    assert ChoiceInline.max_num == 10


def test_a_practice_started_before_a_mock_cannot_check_the_mocks_questions(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=20, question_count=10)
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, count=20).attempt
    mock = attempt_start(user=learner, exam=exam, mode=AttemptMode.MOCK).attempt
    in_mock = set(mock.responses.values_list("question_id", flat=True))
    shared = practice.responses.filter(question_id__in=in_mock).first()
    apart = practice.responses.exclude(question_id__in=in_mock).first()
    response = learner_client.post(question_url(practice, shared.position), {"choice": "1", "check": "1"}, headers=HTMX)
    assert response.status_code == 422 and "also in your timed mock" in response.content.decode()
    shared.refresh_from_db()
    assert shared.checked_at is None and "Because the key is right." not in response.content.decode()
    response = learner_client.post(question_url(practice, apart.position), {"choice": "1", "check": "1"}, headers=HTMX)
    assert response.status_code == 200 and "Because the key is right." in response.content.decode()
    learner_client.post(reverse("exams:submit", args=[mock.pk]), {"confirmed": "1"})
    response = learner_client.post(question_url(practice, shared.position), {"choice": "1", "check": "1"}, headers=HTMX)
    assert response.status_code == 200, "once the mock ends the check goes ahead"
