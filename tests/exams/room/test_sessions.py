"""Practice, drills and reviews: start, check answer, review cards, reports."""
from datetime import UTC, date, datetime, timedelta

import fsrs
import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from exams.bank.errata.disputes import dispute_report
from exams.models import (
    Attempt,
    AttemptMode,
    AttemptStatus,
    Dispute,
    Erratum,
    ErratumPolicy,
    ErratumSource,
    ErratumStatus,
    Question,
    ReviewCard,
)
from exams.room import services
from exams.room.services import attempt_start
from exams.study.reviews import Review, reviews_record
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def start_session(client, exam, **data):
    return client.post(reverse("exams:start_session", args=[exam.code]), data, follow=True)


def question_url(attempt, position):
    return reverse("exams:question", args=[attempt.pk, position])


def positions(response, *, right: bool) -> list[str]:
    keys = set(response.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    chosen = [str(i) for i, pk in enumerate(response.choice_order, start=1) if (pk in keys) == right]
    return chosen if right else chosen[:1]


class TestStarting:
    def test_practice_takes_ten_questions_untimed_preferring_unseen(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40), per_domain=10)
        start_session(learner_client, exam, mode="practice")
        attempt = Attempt.objects.get(user=learner, mode=AttemptMode.PRACTICE)
        assert attempt.responses.count() == 10 and attempt.deadline is None

    def test_practice_can_be_filtered_by_domain(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40), per_domain=10)
        domain = exam.domains.get(weight=40)
        start_session(learner_client, exam, mode="practice", domain=domain.pk, count=5)
        attempt = Attempt.objects.get(user=learner)
        assert set(attempt.responses.values_list("question__domain", flat=True)) == {domain.pk}

    def test_a_drill_takes_min_of_n_and_available_and_says_so(self, learner_client, learner):
        exam = exam_with_bank(weights=(90, 10), per_domain=6)
        domain = exam.domains.get(weight=10)
        page = start_session(learner_client, exam, mode="drill", domain=domain.pk).content.decode()
        attempt = Attempt.objects.get(user=learner, mode=AttemptMode.DRILL)
        assert attempt.responses.count() == 6 and attempt.domain == domain
        assert "Only 6 questions are available" in page and "instead of 10" in page

    def test_a_drill_needs_a_domain_of_this_exam(self, learner_client):
        exam = exam_with_bank()
        other = exam_with_bank()
        assert "A drill needs a domain" in start_session(learner_client, exam, mode="drill").content.decode()
        page = start_session(learner_client, exam, mode="drill", domain=other.domains.first().pk).content.decode()
        assert "not one of" in page
        assert not Attempt.objects.exists()

    def test_nothing_due_for_review_is_said_plainly(self, learner_client):
        exam = exam_with_bank()
        page = start_session(learner_client, exam, mode="review").content.decode()
        assert "Nothing is due for review now" in page

    def test_a_review_session_holds_the_due_questions(self, learner_client, learner):
        exam = exam_with_bank()
        questions = list(exam.questions.all()[:3])
        now = timezone.now()
        ReviewCard.objects.create(user=learner, question=questions[0], due=now - timedelta(hours=2))
        ReviewCard.objects.create(user=learner, question=questions[1], due=now - timedelta(days=3))
        ReviewCard.objects.create(user=learner, question=questions[2], due=now + timedelta(minutes=1))
        start_session(learner_client, exam, mode="review")
        attempt = Attempt.objects.get(user=learner, mode=AttemptMode.REVIEW)
        # Due now or before, the most overdue first.
        assert list(attempt.responses.order_by("position").values_list("question", flat=True)) == [questions[1].pk, questions[0].pk]


class TestCheckAnswer:
    def test_check_shows_right_or_wrong_key_explanation_and_feedback_and_locks(self, learner_client, learner):
        exam = exam_with_bank()
        start_session(learner_client, exam, mode="practice", count=2)
        attempt = Attempt.objects.get(user=learner)
        slot = attempt.responses.get(position=1)
        page = learner_client.post(
            question_url(attempt, 1), {"choice": positions(slot, right=False), "check": "1"}, headers=HTMX
        ).content.decode()
        assert "Wrong" in page and "Key:" in page and "Because the key is right." in page and "Feedback on A." in page
        assert "disabled" in page and "Check answer" not in page
        slot.refresh_from_db()
        assert slot.is_correct is False and slot.checked_at is not None
        # Locked: another pick is refused and changes nothing.
        response = learner_client.post(question_url(attempt, 1), {"choice": positions(slot, right=True), "check": "1"}, headers=HTMX)
        assert response.status_code == 422 and "already checked" in response.content.decode()
        assert slot.picks.count() == 1

    def test_checking_needs_a_pick(self, learner_client, learner):
        exam = exam_with_bank()
        start_session(learner_client, exam, mode="practice")
        attempt = Attempt.objects.get(user=learner)
        response = learner_client.post(question_url(attempt, 1), {"check": "1"}, headers=HTMX)
        assert response.status_code == 422 and "Pick an answer" in response.content.decode()
        response = learner_client.post(question_url(attempt, 1), {"check": "1"})
        assert response.status_code == 422 and "<html" in response.content.decode() and "Pick an answer" in response.content.decode()
        assert attempt.responses.get(position=1).checked_at is None

    def test_a_choose_two_check_with_one_pick_is_refused_not_graded(self, learner_client, learner):
        exam = exam_with_bank()
        Question.objects.filter(exam=exam).update(kind="multiple", choose=2)
        start_session(learner_client, exam, mode="practice", count=2)
        attempt = Attempt.objects.get(user=learner)
        for headers in (HTMX, {}):
            response = learner_client.post(question_url(attempt, 1), {"choice": ["1"], "check": "1"}, headers=headers)
            assert response.status_code == 422
            assert "This question asks you to choose 2: pick 1 more before checking it." in response.content.decode()
        slot = attempt.responses.get(position=1)
        assert (slot.checked_at, slot.is_correct, slot.picks.count()) == (None, None, 0), "refused: nothing changed"
        assert not ReviewCard.objects.exists()
        response = learner_client.post(question_url(attempt, 1), {"choice": ["1", "2"], "check": "1"}, headers=HTMX)
        assert response.status_code == 200 and attempt.responses.get(position=1).checked_at is not None

    def test_a_mock_cannot_be_checked_one_by_one(self, learner_client, learner):
        exam = exam_with_bank()
        learner_client.post(reverse("exams:start_mock", args=[exam.code]))
        attempt = Attempt.objects.get(user=learner)
        response = learner_client.post(question_url(attempt, 1), {"choice": "1", "check": "1"}, headers=HTMX)
        assert response.status_code == 400

    def test_the_session_ends_when_every_answer_is_checked(self, learner_client, learner):
        exam = exam_with_bank()
        start_session(learner_client, exam, mode="practice", count=2)
        attempt = Attempt.objects.get(user=learner)
        for position in (1, 2):
            slot = attempt.responses.get(position=position)
            learner_client.post(question_url(attempt, position), {"choice": positions(slot, right=True), "check": "1"}, headers=HTMX)
        attempt.refresh_from_db()
        assert attempt.status == AttemptStatus.SUBMITTED and attempt.score == 100

    def test_a_confirmed_erratum_is_noticed_when_checking(self, learner_client, learner):
        exam = exam_with_bank(weights=(100,), per_domain=1, question_count=1)
        question = exam.questions.get()
        erratum = Erratum.objects.create(
            question=question, status=ErratumStatus.CONFIRMED, policy=ErratumPolicy.CREDIT_CORRECTED,
            note="Corrected after review.", decided_at=timezone.now(),
        )
        erratum.published_key.set([question.choices.get(label="B")])
        start_session(learner_client, exam, mode="practice")
        attempt = Attempt.objects.get(user=learner)
        page = learner_client.post(question_url(attempt, 1), {"choice": "1", "check": "1"}, headers=HTMX).content.decode()
        assert "Corrected key" in page and "Corrected after review." in page


class TestReviewCards:
    """Every graded slot is a review of the learner's card (exams.study.scheduling); see also test_scheduling."""

    def test_a_checked_wrong_answer_is_an_again_review_at_the_check(self, learner):
        exam = exam_with_bank()
        attempt = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE).attempt
        slot = attempt.responses.get(position=1)
        wrong = slot.question.choices.filter(is_correct=False).first()
        attempt.record_answer(response=slot, choice_ids=[wrong.pk])
        assert not ReviewCard.objects.exists()  # a plain save is not a review
        services.attempt_check(attempt=attempt, response=slot)
        slot.refresh_from_db()
        card = ReviewCard.objects.get(user=learner, question=slot.question)
        expected = expected_card([(fsrs.Rating.Again, slot.checked_at)])
        assert (card.last_review, card.due, card.stability, card.difficulty) == (
            slot.checked_at, expected.due, expected.stability, expected.difficulty,
        )

    def test_a_mock_reviews_its_answered_slots_at_submit_and_not_the_unanswered(self, learner):
        exam = exam_with_bank()
        attempt = attempt_start(user=learner, exam=exam).attempt
        first, second, third = attempt.responses.order_by("position")[:3]
        attempt.record_answer(response=first, choice_ids=[first.question.choices.filter(is_correct=False).first().pk])
        attempt.record_answer(response=second, choice_ids=list(second.question.choices.filter(is_correct=True).values_list("pk", flat=True)))
        attempt.record_answer(response=third, choice_ids=list(third.question.choices.filter(is_correct=True).values_list("pk", flat=True)))
        attempt.record_strikes(response=third, choice_ids={third.question.choices.filter(is_correct=False).first().pk})
        assert not ReviewCard.objects.exists()
        finished = services.attempt_submit(user=learner, attempt_id=attempt.pk)
        cards = {card.question_id: card for card in ReviewCard.objects.filter(user=learner)}
        assert set(cards) == {first.question_id, second.question_id, third.question_id}
        for slot, rating in ((first, fsrs.Rating.Again), (second, fsrs.Rating.Good), (third, fsrs.Rating.Hard)):
            expected = expected_card([(rating, finished.finished_at)])
            assert (cards[slot.question_id].due, cards[slot.question_id].stability) == (expected.due, expected.stability), rating

    def test_the_exam_date_cap_reads_the_day_in_the_learners_time_zone(self, learner):
        """23:30 UTC on 8 March is already 9 March in Tokyo: two days before an exam on the
        11th there, so the cap is one day; in New York and UTC it is two."""
        exam = exam_with_bank()
        question = exam.questions.first()
        at = datetime(2026, 3, 8, 23, 30, tzinfo=UTC)
        dues = {}
        for zone, cap in (("Asia/Tokyo", 1), ("America/New_York", 2), ("UTC", 2)):
            Profile.objects.filter(user=learner).update(time_zone=zone, exam_date=date(2026, 3, 11))
            ReviewCard.objects.filter(user=learner).delete()
            reviews_record(user=learner, reviews=[Review(question_id=question.pk, rating=fsrs.Rating.Good, at=at)])
            dues[zone] = ReviewCard.objects.get(user=learner).due
            assert dues[zone] == expected_card([(fsrs.Rating.Good, at)], maximum_interval=cap).due, zone
        assert dues["Asia/Tokyo"] == at + timedelta(days=1) and dues["UTC"] == at + timedelta(days=2)


def expected_card(history, *, retention=0.9, maximum_interval=36500) -> fsrs.Card:
    """The card the fsrs package itself makes of this history, with the scheduler issue 26 names."""
    scheduler = fsrs.Scheduler(
        desired_retention=retention, learning_steps=(timedelta(minutes=10),), relearning_steps=(timedelta(minutes=10),),
        enable_fuzzing=False, maximum_interval=maximum_interval,
    )
    card = fsrs.Card(card_id=1)
    for rating, at in history:
        # Issue 26: Hard applies in Review; in Learning and Relearning a right answer is Good.
        rating = fsrs.Rating.Good if rating == fsrs.Rating.Hard and card.state != fsrs.State.Review else rating
        card, _ = scheduler.review_card(card, rating, review_datetime=at.astimezone(UTC))
    return card


class TestReports:
    def finished_attempt(self, client, exam):
        client.post(reverse("exams:start_mock", args=[exam.code]))
        attempt = Attempt.objects.latest("pk")
        client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        return attempt

    def test_a_learner_reports_a_problem_and_edits_the_same_report(self, learner_client, learner):
        exam = exam_with_bank()
        attempt = self.finished_attempt(learner_client, exam)
        url = reverse("exams:report", args=[attempt.pk, 1])
        assert "Report a problem" in learner_client.get(url).content.decode()
        learner_client.post(url, {"choice": "2", "reason": "B looks right to me."})
        learner_client.post(url, {"choice": "3", "reason": "On reflection, C."})
        dispute = Dispute.objects.get()
        slot = attempt.responses.get(position=1)
        assert list(dispute.choices.values_list("pk", flat=True)) == [slot.choice_order[2]]
        assert dispute.reason == "On reflection, C."
        erratum = dispute.erratum
        assert (erratum.status, erratum.source, erratum.question_id) == (ErratumStatus.REPORTED, ErratumSource.LEARNERS, slot.question_id)

    def test_reports_of_several_learners_gather_on_one_open_erratum(self, client, learner, other_learner):
        exam = exam_with_bank(weights=(100,), per_domain=10, question_count=10)
        question = QuestionFactory(domain=exam.domains.get(), exam=exam)
        for user in (learner, other_learner):
            attempt = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, count=11).attempt
            slot = attempt.responses.get(question=question)
            attempt.record_answer(response=slot, choice_ids=[question.choices.get(label="A").pk])
            services.attempt_check(attempt=attempt, response=slot)
            dispute_report(user=user, response=slot, choice_ids=[question.choices.get(label="B").pk], reason="B")
        erratum = Erratum.objects.get(question=question)
        assert erratum.disputes.count() == 2

    def test_reporting_before_the_answer_is_seen_is_refused(self, learner_client, learner):
        exam = exam_with_bank()
        learner_client.post(reverse("exams:start_mock", args=[exam.code]))
        attempt = Attempt.objects.get(user=learner)
        response = learner_client.post(reverse("exams:report", args=[attempt.pk, 1]), {"reason": "x"}, follow=True)
        assert "once you have checked this answer or finished" in response.content.decode()
        assert not Dispute.objects.exists()

    def test_a_report_needs_a_reason_and_a_real_choice(self, learner_client):
        attempt = self.finished_attempt(learner_client, exam_with_bank())
        url = reverse("exams:report", args=[attempt.pk, 1])
        page = learner_client.post(url, {"choice": "9", "reason": ""}).content.decode()
        assert "This field is required" in page and "Select a valid choice" in page
        assert not Dispute.objects.exists()

    def test_another_learner_cannot_report_on_my_attempt(self, client, learner, other_learner):
        attempt = attempt_start(user=learner, exam=exam_with_bank()).attempt
        services.attempt_submit(user=learner, attempt_id=attempt.pk)
        client.force_login(other_learner)
        assert client.post(reverse("exams:report", args=[attempt.pk, 1]), {"reason": "x"}).status_code == 404
        assert not Dispute.objects.exists()


def test_no_practice_while_a_mock_of_the_exam_is_running(learner_client, learner):
    exam = exam_with_bank()
    learner_client.post(reverse("exams:start_mock", args=[exam.code]))
    page = start_session(learner_client, exam, mode="practice").content.decode()
    assert "timed mock of" in page and "running" in page
    assert not Attempt.objects.filter(mode=AttemptMode.PRACTICE).exists()


def test_a_capped_review_says_how_many_of_the_due_questions_it_takes(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=62, question_count=10)
    now = timezone.now()
    questions = list(exam.questions.order_by("pk"))
    ReviewCard.objects.bulk_create(
        ReviewCard(user=learner, question=question, due=now - timedelta(hours=index)) for index, question in enumerate(questions)
    )
    # Issue 26: the learner sizes it (10 / 20 / 50); 50 is the largest.
    page = start_session(learner_client, exam, mode="review", size="50").content.decode()
    assert "This review takes 50 of the 62 questions due" in page
    # The 50 most overdue.
    taken = set(Attempt.objects.get(user=learner, mode=AttemptMode.REVIEW).responses.values_list("question", flat=True))
    assert taken == {question.pk for question in questions[12:]}


class TestPracticeResults:
    def finished_practice(self, client, user, exam, domain) -> Attempt:
        """A practice of two questions of one domain, both checked (the last check ends it)."""
        questions = list(domain.questions.order_by("pk").values_list("pk", flat=True)[:2])
        attempt = attempt_start(user=user, exam=exam, mode=AttemptMode.PRACTICE, question_ids=questions).attempt
        for slot in attempt.responses.order_by("position"):
            client.post(question_url(attempt, slot.position), {"choice": positions(slot, right=True), "check": "1"}, headers=HTMX)
        attempt.refresh_from_db()
        assert attempt.is_finished
        return attempt

    def test_they_list_only_the_domains_the_session_held_and_no_column_of_dashes(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40))
        first, second = exam.domains.order_by("order")
        earlier = self.finished_practice(learner_client, learner, exam, second)
        attempt = self.finished_practice(learner_client, learner, exam, first)
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert f'<th scope="row">{first.name}</th>' in page and second.name not in page
        # The previous practice held another domain: no change to show, so no Change column.
        assert ">Change</th>" not in page
        again = self.finished_practice(learner_client, learner, exam, first)
        page = learner_client.get(reverse("exams:results", args=[again.pk])).content.decode()
        assert ">Change</th>" in page and f'<th scope="row">{second.name}</th>' not in page
        assert earlier.pk != again.pk

    def test_a_mock_lists_every_domain(self, learner_client, learner):
        exam = exam_with_bank(weights=(60, 40))
        learner_client.post(reverse("exams:start_mock", args=[exam.code]))
        attempt = Attempt.objects.get(user=learner, mode=AttemptMode.MOCK)
        learner_client.post(reverse("exams:submit", args=[attempt.pk]), {"confirmed": "1"})
        page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
        assert all(f'<th scope="row">{domain.name}</th>' in page for domain in exam.domains.all())
