"""FSRS scheduling: answers to ratings, the exam-date cap, and due dates equal to the fsrs package's."""
import random
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import fsrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accounts.models import Profile
from exams.models import ReviewCard
from exams.study import scheduling
from exams.study.reviews import Review, reviews_record
from tests.factories import exam_with_bank

Rating = fsrs.Rating


@pytest.mark.parametrize(
    "answered, right, struck, rating",
    [
        (True, True, False, Rating.Good),
        (True, True, True, Rating.Hard),
        (True, False, False, Rating.Again),
        (True, False, True, Rating.Again),
        (False, False, False, None),  # unanswered: not a review (a mock grades it wrong)
        (False, None, True, None),
        (True, None, False, None),  # voided: no key to recall
    ],
)
def test_answers_map_to_ratings(answered, right, struck, rating):
    assert scheduling.rating_for(answered=answered, right=right, struck=struck) == rating


@pytest.mark.parametrize(
    "right, struck, guessed, rating",
    [
        (True, False, True, Rating.Hard),  # right but "guessing": not a sure recall
        (True, True, True, Rating.Hard),
        (False, False, True, Rating.Again),
        (True, False, False, Rating.Good),  # "fairly sure" or "sure" and right
        (False, False, False, Rating.Again),  # "sure" and wrong: Again (and first in review)
    ],
)
def test_certainty_shapes_the_rating_and_never_rescues_a_wrong_answer(right, struck, guessed, rating):
    assert scheduling.rating_for(answered=True, right=right, struck=struck, guessed=guessed) == rating


@pytest.mark.parametrize(
    "exam_date, today, days",
    [
        (None, date(2026, 3, 1), 36500),
        (date(2026, 3, 1), date(2026, 3, 1), 36500),  # the exam is today: no longer ahead
        (date(2026, 2, 1), date(2026, 3, 1), 36500),  # passed
        (date(2026, 3, 2), date(2026, 3, 1), 1),  # tomorrow: the day before it is today, at least 1
        (date(2026, 3, 3), date(2026, 3, 1), 1),
        (date(2026, 3, 11), date(2026, 3, 1), 9),
    ],
)
def test_an_exam_date_ahead_caps_intervals_at_the_day_before_it(exam_date, today, days):
    assert scheduling.maximum_interval(exam_date=exam_date, today=today) == days


TEN_MINUTES = timedelta(minutes=10)


def package_scheduler(*, retention: float, maximum_interval: int) -> fsrs.Scheduler:
    """The package's scheduler with the settings issue 26 names: one ten-minute step each."""
    return fsrs.Scheduler(
        desired_retention=retention, learning_steps=(TEN_MINUTES,), relearning_steps=(TEN_MINUTES,),
        enable_fuzzing=False, maximum_interval=maximum_interval,
    )


def package_rating(card: fsrs.Card, rating: Rating) -> Rating:
    """Issue 26: Hard applies to cards in Review; in Learning and Relearning a right answer is Good."""
    return Rating.Good if rating == Rating.Hard and card.state != fsrs.State.Review else rating


def package_card(history, *, retention: float, maximum_interval: int) -> fsrs.Card:
    """Computed with the package alone."""
    scheduler = package_scheduler(retention=retention, maximum_interval=maximum_interval)
    card = fsrs.Card(card_id=1)
    for rating, at in history:
        card, _ = scheduler.review_card(card, package_rating(card, rating), review_datetime=at)
    return card


# Gaps from a minute (inside the ten-minute step) to two months.
histories = st.lists(
    st.tuples(st.sampled_from(list(Rating)[:3]), st.floats(min_value=0.0007, max_value=60)), min_size=1, max_size=12,
)


@settings(max_examples=60)
@given(history=histories, retention=st.sampled_from([0.8, 0.85, 0.9, 0.97]))
# Always tried: a lapse, then a struck-out right answer inside and after the step (Hard → Good
# in Learning, so it graduates), then Hard in Review; and a new card right with a strike-out.
@example(history=[(Rating.Again, 0.001), (Rating.Hard, 0.0069), (Rating.Hard, 3.0), (Rating.Again, 9.0), (Rating.Hard, 0.01)],
         retention=0.9)
@example(history=[(Rating.Hard, 0.5)], retention=0.97)
def test_the_scheduler_gives_the_packages_card_for_any_history(history, retention):
    at = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
    timed = []
    for rating, gap_days in history:
        at += timedelta(days=gap_days)
        timed.append((rating, at))
    card = None
    for rating, at in timed:
        scheduler = scheduling.scheduler_for(desired_retention=Decimal(str(retention)), exam_date=None, today=at.date())
        card = scheduling.review(card=card, rating=scheduling.rating_on(card, rating), at=at, scheduler=scheduler)
    expected = package_card(timed, retention=retention, maximum_interval=36500)
    assert (card.due, card.stability, card.difficulty, card.state) == (
        expected.due, expected.stability, expected.difficulty, expected.state,
    )
    # A right answer never leaves a card on its step: FSRS's Hard would repeat it.
    if timed[-1][0] != Rating.Again:
        assert card.state == fsrs.State.Review


@pytest.mark.django_db
def test_stored_cards_follow_the_packages_schedule_over_a_history(learner):
    """Reviews recorded one grading at a time, each card read back from the database."""
    exam = exam_with_bank(weights=(100,), per_domain=4, question_count=4)
    questions = list(exam.questions.order_by("pk"))
    exam_date = date(2026, 4, 20)
    Profile.objects.filter(user=learner).update(desired_retention=Decimal("0.85"), exam_date=exam_date, time_zone="America/New_York")
    rng = random.Random(15)
    at = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
    history: dict[int, list] = {q.pk: [] for q in questions}
    for _ in range(30):
        at += timedelta(minutes=rng.choice([1, 9, 10, 11, 60])) if rng.random() < 0.4 else timedelta(hours=rng.uniform(2, 120))
        question = rng.choice(questions)
        rating = rng.choice([Rating.Again, Rating.Hard, Rating.Good])
        history[question.pk].append((rating, at))
        reviews_record(user=learner, reviews=[Review(question_id=question.pk, rating=rating, at=at)])
    zone = ZoneInfo("America/New_York")
    for question in questions:
        card = fsrs.Card(card_id=1)
        for rating, reviewed in history[question.pk]:
            # Each review's cap recomputed: the learner's day in New York, to the day before the exam.
            today = reviewed.astimezone(zone).date()
            cap = max(1, (exam_date - today).days - 1) if exam_date > today else 36500
            scheduler = package_scheduler(retention=0.85, maximum_interval=cap)
            card, _ = scheduler.review_card(card, package_rating(card, rating), review_datetime=reviewed)
        stored = ReviewCard.objects.filter(user=learner, question=question).first()
        if not history[question.pk]:
            assert stored is None
            continue
        assert (stored.due, stored.last_review, stored.stability, stored.difficulty, stored.state, stored.step) == (
            card.due, card.last_review, pytest.approx(card.stability), pytest.approx(card.difficulty), int(card.state), card.step,
        )
        if stored.last_review.astimezone(zone).date() <= exam_date - timedelta(days=2):
            assert stored.due.astimezone(zone).date() < exam_date


@pytest.mark.django_db
def test_one_grading_with_many_reviews_takes_three_queries(learner, django_assert_num_queries):
    exam = exam_with_bank(weights=(100,), per_domain=20, question_count=20)
    at = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
    reviews = [Review(question_id=q.pk, rating=Rating.Good, at=at) for q in exam.questions.all()]
    Profile.objects.for_user(learner)
    with django_assert_num_queries(3):
        reviews_record(user=learner, reviews=reviews)
    assert ReviewCard.objects.filter(user=learner).count() == 20


@pytest.mark.parametrize(
    "state, rating, rated",
    [
        (None, Rating.Hard, Rating.Good),  # a new card is in Learning
        (fsrs.State.Learning, Rating.Hard, Rating.Good),
        (fsrs.State.Relearning, Rating.Hard, Rating.Good),
        (fsrs.State.Review, Rating.Hard, Rating.Hard),
        (fsrs.State.Learning, Rating.Again, Rating.Again),
        (fsrs.State.Review, Rating.Good, Rating.Good),
    ],
)
def test_hard_applies_to_cards_in_review_only(state, rating, rated):
    card = None if state is None else fsrs.Card(card_id=1, state=state, step=0 if state != fsrs.State.Review else None)
    assert scheduling.rating_on(card, rating) == rated


@pytest.mark.parametrize(
    "left, words",
    [
        (timedelta(minutes=10), "again in 10 minutes"),
        (timedelta(minutes=9, seconds=1), "again in 10 minutes"),
        (timedelta(seconds=30), "again in 1 minute"),
        (timedelta(hours=3, minutes=10), "again in 3 hours"),
        (timedelta(days=4), "in 4 days"),
        (timedelta(days=1), "in 1 day"),
        (timedelta(days=1) - timedelta(seconds=2), "in 1 day"),
        (timedelta(hours=23, minutes=20), "again in 23 hours"),
        (timedelta(0), "now"),
        (-timedelta(hours=1), "now"),
    ],
)
def test_when_a_question_comes_back_reads_as_a_learner_says_it(left, words):
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert scheduling.comes_back(due=now + left, now=now) == words


@pytest.mark.django_db
def test_a_struck_out_right_answer_in_learning_graduates(learner):
    """Wrong, then right ten minutes later with a choice struck out: Good, not Hard, so the card
    leaves the step for days instead of looping on it (FSRS repeats the step on Hard)."""
    question = exam_with_bank(weights=(100,), per_domain=1, question_count=1).questions.get()
    wrong_at = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
    reviews_record(user=learner, reviews=[Review(question_id=question.pk, rating=Rating.Again, at=wrong_at)])
    card = ReviewCard.objects.get(user=learner, question=question)
    assert (card.state, card.step, card.due) == (fsrs.State.Learning, 0, wrong_at + TEN_MINUTES)
    right_at = wrong_at + TEN_MINUTES
    reviews_record(user=learner, reviews=[Review(question_id=question.pk, rating=Rating.Hard, at=right_at)])
    card.refresh_from_db()
    expected = package_card([(Rating.Again, wrong_at), (Rating.Good, right_at)], retention=0.9, maximum_interval=36500)
    assert (card.state, card.step, card.due) == (fsrs.State.Review, None, expected.due)
    assert card.due - right_at >= timedelta(days=1)
    # With the package's Hard instead, it would have stayed on the step: the loop the rule avoids.
    looped, _ = package_scheduler(retention=0.9, maximum_interval=36500).review_card(
        package_card([(Rating.Again, wrong_at)], retention=0.9, maximum_interval=36500), Rating.Hard, review_datetime=right_at,
    )
    assert looped.state == fsrs.State.Learning


@pytest.mark.django_db
def test_a_card_from_before_the_steps_keeps_its_state_and_lapses_into_a_ten_minute_step(learner):
    """A card scheduled without steps (issue 15) is in Review; it continues under the new scheduler."""
    question = exam_with_bank(weights=(100,), per_domain=1, question_count=1).questions.get()
    first = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
    old = fsrs.Scheduler(desired_retention=0.9, learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    before, _ = old.review_card(fsrs.Card(card_id=1), Rating.Good, review_datetime=first)
    row = ReviewCard(user=learner, question=question)
    row.take(before)
    row.save()
    assert row.state == fsrs.State.Review
    lapse = before.due + timedelta(hours=1)
    reviews_record(user=learner, reviews=[Review(question_id=question.pk, rating=Rating.Again, at=lapse)])
    row.refresh_from_db()
    expected, _ = package_scheduler(retention=0.9, maximum_interval=36500).review_card(before, Rating.Again, review_datetime=lapse)
    assert (row.state, row.step, row.due) == (fsrs.State.Relearning, 0, lapse + TEN_MINUTES) == (expected.state, expected.step, expected.due)
