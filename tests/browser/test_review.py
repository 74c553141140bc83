"""Review due cards: weeks of demo history, the due cards recomputed with the fsrs package, reviewed through the pages."""
from datetime import UTC, timedelta

import fsrs
import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import Profile
from exams.models import Attempt, AttemptMode, Response, ReviewCard
from exams.room.services import attempt_start
from tests.browser.conftest import assert_accessible, log_in_as
from tests.factories import UserFactory, exam_with_bank

SCHEDULER = fsrs.Scheduler(
    desired_retention=0.9, learning_steps=(timedelta(minutes=10),), relearning_steps=(timedelta(minutes=10),),
    enable_fuzzing=False, maximum_interval=36500,
)


def is_save(response) -> bool:
    return response.request.method == "POST" and "/q/" in response.url


def cards_from_history(user) -> dict[int, fsrs.Card]:
    """Each question's card, replayed with the package alone from the learner's graded slots."""
    slots = (
        Response.objects.filter(attempt__user=user, attempt__status__in=Attempt.FINISHED_STATUSES, answered_at__isnull=False)
        .exclude(is_correct=None)
        .select_related("attempt")
        .prefetch_related("strikes")
    )
    history = sorted(
        ((slot.checked_at or slot.attempt.finished_at, slot.question_id, slot) for slot in slots),
        key=lambda row: (row[0], row[1]),
    )
    cards: dict[int, fsrs.Card] = {}
    for at, question_id, slot in history:
        rating = fsrs.Rating.Again if not slot.is_correct else fsrs.Rating.Hard if slot.strikes.all() else fsrs.Rating.Good
        card = cards.get(question_id, fsrs.Card(card_id=question_id))
        if rating == fsrs.Rating.Hard and card.state != fsrs.State.Review:
            rating = fsrs.Rating.Good  # issue 26: Hard applies to cards in Review only
        cards[question_id], _ = SCHEDULER.review_card(card, rating, review_datetime=at.astimezone(UTC))
    return cards


@pytest.fixture
def demo_learner(transactional_db):
    call_command("load_bank", verbosity=0)
    learner = UserFactory(username="learner")
    call_command("create_demo_history", username="learner")
    return learner


def test_review_due_cards(page, live_server, demo_learner):
    expected = cards_from_history(demo_learner)
    now = timezone.now()
    due = sorted((card.due, question_id) for question_id, card in expected.items() if card.due <= now)
    assert 50 < len(due) < len(expected)  # weeks of history: much is due, not all

    log_in_as(page, live_server, demo_learner)
    page.goto(f"{live_server.url}/dashboard/")
    # Issue 26: the card says what is due now and next; the learner sizes the session (20 by default).
    expect(page.get_by_text(f"{len(due)} due now.")).to_be_visible()
    expect(page.locator("#review-size")).to_have_value("20")
    page.locator("#review-size").select_option("50")
    page.get_by_role("button", name=f"Review due ({len(due)})").click()
    expect(page.get_by_text(f"This review takes 50 of the {len(due)} questions due")).to_be_visible()
    expect(page.get_by_role("heading", name="Question 1 of 50")).to_be_visible()
    assert_accessible(page)

    review = Attempt.objects.get(user=demo_learner, mode=AttemptMode.REVIEW)
    slots = list(review.responses.order_by("position").select_related("question"))
    # The most overdue first.
    assert [slot.question_id for slot in slots] == [question_id for _, question_id in due[:50]]

    for slot, want_right in ((slots[0], False), (slots[1], True)):
        keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
        # As many picks as the question asks for (a short check is refused, issue 26); a wrong
        # answer leads with the wrong choices.
        indexes = sorted(range(len(slot.choice_order)), key=lambda i: (slot.choice_order[i] in keys) != want_right)
        for index in indexes[: slot.question.choose]:
            with page.expect_response(is_save):
                page.locator("label.choice").nth(index).click()
        with page.expect_response(is_save):
            page.get_by_role("button", name="Check answer").click()
        expect(page.get_by_role("heading", name="Right" if want_right else "Wrong", exact=True)).to_be_visible()
        if not want_right:
            # Issue 26: a lapse comes back ten minutes later, and the page says so.
            expect(page.get_by_text("This question comes back for review again in 10 minutes.")).to_be_visible()
        if slot.position == 1:
            with page.expect_response(is_save):
                page.get_by_role("button", name="Next", exact=True).click()
            expect(page.get_by_role("heading", name="Question 2 of 50")).to_be_visible()
            page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")

    # Both reviews are on their cards as the package schedules them: Again, then Good
    # (Good whatever the state: a right answer in Learning or Relearning is never Hard).
    for slot, rating in ((slots[0], fsrs.Rating.Again), (slots[1], fsrs.Rating.Good)):
        slot.refresh_from_db()
        card, _ = SCHEDULER.review_card(expected[slot.question_id], rating, review_datetime=slot.checked_at.astimezone(UTC))
        stored = ReviewCard.objects.get(user=demo_learner, question=slot.question)
        assert (stored.due, stored.last_review) == (card.due, card.last_review)
        assert stored.stability == pytest.approx(card.stability) and stored.due > timezone.now()
    lapse = ReviewCard.objects.get(user=demo_learner, question=slots[0].question)
    assert lapse.due == slots[0].checked_at + timedelta(minutes=10)

    page.goto(f"{live_server.url}/dashboard/")
    expect(page.get_by_role("button", name=f"Review due ({len(due) - 2})")).to_be_visible()


def test_practise_my_mistakes_now(page, live_server, transactional_db):
    """A practice answered wrong; nothing due ten minutes on; the mistakes come back at once, as reviews."""
    exam = exam_with_bank(weights=(100,), per_domain=3, question_count=3)
    learner = UserFactory(username="learner")
    practice = attempt_start(user=learner, exam=exam, mode=AttemptMode.PRACTICE, question_ids=[
        q.pk for q in exam.questions.order_by("pk")[:1]
    ]).attempt
    slot = practice.responses.select_related("question").get()
    keys = set(slot.question.choices.filter(is_correct=True).values_list("pk", flat=True))
    log_in_as(page, live_server, learner)
    page.goto(f"{live_server.url}/attempts/{practice.pk}/q/1/")
    wrong = next(i for i, pk in enumerate(slot.choice_order) if pk not in keys)
    with page.expect_response(is_save):
        page.locator("label.choice").nth(wrong).click()
    with page.expect_response(is_save):
        page.get_by_role("button", name="Check answer").click()
    expect(page.get_by_text("This question comes back for review again in 10 minutes.")).to_be_visible()

    page.goto(f"{live_server.url}/dashboard/")
    expect(page.get_by_text("Nothing due now. Next review:")).to_be_visible()
    expect(page.get_by_text("1 question to offer")).to_be_visible()
    assert_accessible(page)
    page.locator("#mistakes-size").select_option("10")
    page.get_by_role("button", name="Practise my mistakes now").click()
    expect(page.get_by_text("Your mistakes, 1 question")).to_be_visible()
    expect(page.get_by_role("heading", name="Question 1 of 1")).to_be_visible()
    review = Attempt.objects.get(user=learner, mode=AttemptMode.REVIEW)
    again = review.responses.select_related("question").get()
    with page.expect_response(is_save):
        page.locator("label.choice").nth(next(i for i, pk in enumerate(again.choice_order) if pk in keys)).click()
    with page.expect_response(is_save):
        page.get_by_role("button", name="Check answer").click()
    expect(page.get_by_role("heading", name="Right", exact=True)).to_be_visible()
    assert_accessible(page)
    # Its answer is a review: right in Learning rates Good, which graduates the card to days.
    card = ReviewCard.objects.get(user=learner, question=slot.question)
    assert card.state == fsrs.State.Review and card.due - card.last_review >= timedelta(days=1)
    assert Profile.objects.get(user=learner).review_session_size == 10
