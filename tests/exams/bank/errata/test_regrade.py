"""Errata confirmation and the set-based regrade: policies, records, review, idempotence, locking."""
import threading
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exams.bank.errata.regrade import (
    PreviewOutdated,
    erratum_confirm,
    erratum_reject,
    passed_sql,
    regrade_question,
    score_changes_for,
    score_sql,
)
from exams.models import (
    Attempt,
    AttemptMode,
    AttemptStatus,
    Choice,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    Question,
    QuestionKind,
    QuestionVersion,
    RegradeChange,
    RegradeEvent,
    Response,
    ResponseChoice,
    ReviewCard,
)
from exams.room import grading
from exams.room.services import attempt_finish, confirmed_keys, domain_results
from tests.factories import DomainFactory, ExamFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


# --- building blocks ----------------------------------------------------------------


def make_bank(*, questions: int = 4, passing_score: int = 70, domains: int = 1):
    """An exam with `questions` single-answer questions keyed A, spread over `domains` domains."""
    exam = ExamFactory(question_count=questions, passing_score=passing_score)
    areas = [DomainFactory(exam=exam, weight=100 // domains, order=order) for order in range(domains)]
    bank = [QuestionFactory(domain=areas[index % domains], exam=exam, keys=["A"]) for index in range(questions)]
    return exam, bank


def choice_ids(question: Question, labels: str) -> set[int]:
    return set(question.choices.filter(label__in=list(labels)).values_list("pk", flat=True))


def start_attempt(*, user, exam, answers: dict[Question, str], mode: str = AttemptMode.MOCK) -> Attempt:
    """An in-progress attempt holding `answers` (question → picked labels, "" unanswered)."""
    questions = list(answers)
    versions = QuestionVersion.objects.current_for(questions)
    attempt = Attempt.objects.create(user=user, exam=exam, mode=mode)
    for position, question in enumerate(questions, start=1):
        response = Response.objects.create(
            attempt=attempt, position=position, question=question, domain_id=question.domain_id,
            version=versions[question.pk],
            choice_order=sorted(question.choices.values_list("pk", flat=True)),
        )
        ResponseChoice.objects.bulk_create(
            ResponseChoice(response=response, choice_id=pk) for pk in choice_ids(question, answers[question])
        )
    return attempt


def finish(attempt: Attempt, *, expired: bool = False) -> Attempt:
    with transaction.atomic():
        locked = Attempt.objects.select_for_update().select_related("exam").get(pk=attempt.pk)
        attempt_finish(attempt=locked, expired=expired)
    return Attempt.objects.get(pk=attempt.pk)


def finished_attempt(*, user, exam, answers: dict[Question, str], **kwargs) -> Attempt:
    return finish(start_attempt(user=user, exam=exam, answers=answers, **kwargs))


def report(question: Question) -> Erratum:
    """An open erratum whose published key is the question's current key."""
    erratum = Erratum.objects.create(question=question, note="The published key is wrong.")
    erratum.published_key.set(question.choices.filter(is_correct=True))
    return erratum


def backdate(*attempts: Attempt, by: timedelta = timedelta(hours=1)) -> None:
    # Finishing and confirming inside one test can share a millisecond on SQLite's clock;
    # an hour apart, "finished before the confirmation" is unambiguous on both databases.
    Attempt.objects.filter(pk__in=[a.pk for a in attempts]).update(finished_at=timezone.now() - by)


def result(attempt: Attempt) -> tuple:
    attempt = Attempt.objects.get(pk=attempt.pk)
    return attempt.right_count, attempt.total_count, attempt.score, attempt.passed, attempt.published_score


def is_correct(attempt: Attempt, question: Question) -> bool | None:
    return Response.objects.get(attempt=attempt, question=question).is_correct


@pytest.fixture
def learners(db):
    return [UserFactory(username=name) for name in ("alice", "bob", "carol", "dave")]


# --- credit the corrected key -------------------------------------------------------


class TestCreditCorrected:
    def test_right_turns_wrong_and_wrong_turns_right(self, learners, instructor):
        alice, bob, carol, _ = learners
        exam, (q, q2, q3, q4) = make_bank()
        # Alice picked the published key (A) and had 3/4; Bob picked B, the real answer.
        a = finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A", q3: "A", q4: "B"})
        b = finished_attempt(user=bob, exam=exam, answers={q: "B", q2: "A", q3: "A", q4: "B"})
        c = finished_attempt(user=carol, exam=exam, answers={q: "C", q2: "B", q3: "A", q4: "B"})
        backdate(a, b, c)
        assert result(a) == (3, 4, Decimal("75.00"), True, Decimal("75.00"))
        assert result(b) == (2, 4, Decimal("50.00"), False, Decimal("50.00"))

        erratum = report(q)
        event = erratum_confirm(
            erratum=erratum, policy=ErratumPolicy.CREDIT_CORRECTED, corrected_choice_ids=choice_ids(q, "B"),
            user=instructor, note="B is right: the published key confused the two.",
        ).event

        assert set(q.choices.filter(is_correct=True).values_list("label", flat=True)) == {"B"}
        erratum.refresh_from_db()
        assert erratum.status == ErratumStatus.CONFIRMED and erratum.policy == ErratumPolicy.CREDIT_CORRECTED
        assert erratum.decided_by == instructor and erratum.decided_at is not None
        assert erratum.note == "B is right: the published key confused the two."
        # published_score keeps the score as first graded.
        assert result(a) == (2, 4, Decimal("50.00"), False, Decimal("75.00"))
        assert result(b) == (3, 4, Decimal("75.00"), True, Decimal("50.00"))
        assert result(c) == (1, 4, Decimal("25.00"), False, Decimal("25.00"))
        assert (is_correct(a, q), is_correct(b, q), is_correct(c, q)) == (False, True, False)
        assert (event.erratum, event.policy, event.created_by) == (erratum, ErratumPolicy.CREDIT_CORRECTED, instructor)
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (3, 2, 2)
        changes = {
            (ch.attempt_id, ch.old_score, ch.new_score, ch.old_passed, ch.new_passed) for ch in event.changes.all()
        }
        assert changes == {
            (a.pk, Decimal("75.00"), Decimal("50.00"), True, False),
            (b.pk, Decimal("50.00"), Decimal("75.00"), False, True),
        }

    def test_a_score_change_without_a_pass_flip_is_counted_as_such(self, learners):
        alice, *_ = learners
        exam, (q, q2, q3, q4) = make_bank(passing_score=50)
        a = finished_attempt(user=alice, exam=exam, answers={q: "B", q2: "A", q3: "A", q4: "A"})
        event = erratum_confirm(erratum=report(q), policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B")).event
        assert result(a)[:4] == (4, 4, Decimal("100.00"), True)
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (1, 1, 0)

    def test_only_finished_attempts_are_regraded_and_expired_ones_count(self, learners):
        alice, bob, *_ = learners
        exam, (q, q2, *_) = make_bank(questions=2)
        expired = finish(start_attempt(user=alice, exam=exam, answers={q: "B", q2: "A"}), expired=True)
        running = start_attempt(user=bob, exam=exam, answers={q: "B", q2: "A"})
        event = erratum_confirm(erratum=report(q), policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B")).event
        assert Attempt.objects.get(pk=expired.pk).status == AttemptStatus.EXPIRED
        assert result(expired)[:4] == (2, 2, Decimal("100.00"), True)
        assert event.attempts_touched == 1
        running.refresh_from_db()
        assert running.score is None and is_correct(running, q) is None
        # The running attempt is graded at submit by the corrected key.
        assert result(finish(running))[:4] == (2, 2, Decimal("100.00"), True)

    def test_multiple_answer_keys_are_compared_as_sets(self, learners):
        alice, bob, carol, _ = learners
        exam, (q2,) = make_bank(questions=1)
        q = QuestionFactory(domain=q2.domain, exam=exam, kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "B"])
        a = finished_attempt(user=alice, exam=exam, answers={q: "AB", q2: "A"})
        b = finished_attempt(user=bob, exam=exam, answers={q: "AC", q2: "A"})
        c = finished_attempt(user=carol, exam=exam, answers={q: "A", q2: "A"})
        erratum_confirm(erratum=report(q), policy="credit_corrected", corrected_choice_ids=choice_ids(q, "AC"))
        assert (is_correct(a, q), is_correct(b, q), is_correct(c, q)) == (False, True, False)


# --- credit either key --------------------------------------------------------------


class TestCreditEither:
    def test_both_keys_earn_credit_for_attempts_finished_before_the_confirmation(self, learners):
        alice, bob, carol, dave = learners
        exam, (q, q2) = make_bank(questions=2)
        a = finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A"})
        b = finished_attempt(user=bob, exam=exam, answers={q: "B", q2: "A"})
        c = finished_attempt(user=carol, exam=exam, answers={q: "C", q2: "A"})
        backdate(a, b, c)
        event = erratum_confirm(erratum=report(q), policy="credit_either", corrected_choice_ids=choice_ids(q, "B")).event
        assert (is_correct(a, q), is_correct(b, q), is_correct(c, q)) == (True, True, False)
        assert result(a)[:4] == (2, 2, Decimal("100.00"), True)
        assert result(b)[:4] == (2, 2, Decimal("100.00"), True)
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (3, 1, 1)
        assert list(event.changes.values_list("attempt_id", flat=True)) == [b.pk]

    def test_attempts_finished_after_the_confirmation_need_the_corrected_key(self, learners):
        alice, bob, *_ = learners
        exam, (q, q2) = make_bank(questions=2)
        erratum = report(q)
        late = start_attempt(user=alice, exam=exam, answers={q: "A", q2: "A"})
        erratum_confirm(erratum=erratum, policy="credit_either", corrected_choice_ids=choice_ids(q, "B"))
        late = finish(late)
        erratum.refresh_from_db()
        assert late.finished_at > erratum.decided_at
        assert is_correct(late, q) is False and result(late)[:4] == (1, 2, Decimal("50.00"), False)

        # An attempt graded with the old key's credit but finished after the confirmation
        # (stale, as if graded elsewhere) loses that credit when regraded.
        stale = finished_attempt(user=bob, exam=exam, answers={q: "A", q2: "A"})
        Response.objects.filter(attempt=stale, question=q).update(is_correct=True)
        Attempt.objects.filter(pk=stale.pk).update(right_count=2, score=Decimal("100.00"), passed=True)
        event = regrade_question(question=q)
        assert is_correct(stale, q) is False and result(stale)[:4] == (1, 2, Decimal("50.00"), False)
        assert is_correct(late, q) is False
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (2, 1, 1)


# --- void the item ------------------------------------------------------------------


class TestVoid:
    def test_void_removes_the_item_from_totals_and_its_domain_and_retires_it(self, learners):
        alice, bob, *_ = learners
        exam, (q, q2, q3, q4) = make_bank(domains=2)  # q, q3 in the first domain; q2, q4 in the second
        a = finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A", q3: "B", q4: "A"})
        b = finished_attempt(user=bob, exam=exam, answers={q: "C", q2: "A", q3: "A", q4: "B"})
        before = domain_results(attempts=[a, b])
        assert before[a.pk][q.domain_id] == (1, 2) and before[b.pk][q.domain_id] == (1, 2)

        event = erratum_confirm(erratum=report(q), policy="void", corrected_choice_ids=[]).event

        q.refresh_from_db()
        assert not q.is_active
        assert set(q.choices.filter(is_correct=True).values_list("label", flat=True)) == {"A"}
        assert is_correct(a, q) is None and is_correct(b, q) is None
        assert result(a) == (2, 3, Decimal("66.67"), False, Decimal("75.00"))
        assert result(b) == (2, 3, Decimal("66.67"), False, Decimal("50.00"))
        after = domain_results(attempts=[a, b])
        assert after[a.pk][q.domain_id] == (0, 1) and after[b.pk][q.domain_id] == (1, 1)
        assert after[a.pk][q2.domain_id] == before[a.pk][q2.domain_id]
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (2, 2, 1)

    def test_voiding_the_only_item_leaves_an_empty_attempt_failed_at_zero(self, learners):
        alice, *_ = learners
        exam, (q,) = make_bank(questions=1)
        a = finished_attempt(user=alice, exam=exam, answers={q: "A"})
        erratum_confirm(erratum=report(q), policy="void", corrected_choice_ids=None)
        assert result(a) == (0, 0, Decimal("0.00"), False, Decimal("100.00"))

    def test_void_may_also_correct_the_key(self, learners):
        alice, *_ = learners
        exam, (q, q2) = make_bank(questions=2)
        erratum_confirm(erratum=report(q), policy="void", corrected_choice_ids=choice_ids(q, "D"))
        assert set(q.choices.filter(is_correct=True).values_list("label", flat=True)) == {"D"}


# --- review, records, idempotence ---------------------------------------------------


class TestReviewAfterCorrection:
    def test_learners_who_picked_the_old_key_get_the_question_due_in_review(self, learners):
        alice, bob, carol, dave = learners
        exam, (q, q2) = make_bank(questions=2)
        finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A"})
        finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A"}, mode=AttemptMode.PRACTICE)
        finished_attempt(user=bob, exam=exam, answers={q: "B", q2: "A"})
        start_attempt(user=carol, exam=exam, answers={q: "A", q2: "A"})  # not finished
        finished_attempt(user=dave, exam=exam, answers={q: "A", q2: "A"})
        later = timezone.now() + timedelta(days=400)
        kept = {"state": 2, "step": None, "stability": 30.0, "difficulty": 4.2, "last_review": timezone.now() - timedelta(days=3)}
        ReviewCard.objects.create(user=dave, question=q, due=later, **kept)
        ReviewCard.objects.create(user=dave, question=q2, due=later, **kept)

        erratum = report(q)
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"))

        erratum.refresh_from_db()
        cards = {(card.user.username, card.question_id): card for card in ReviewCard.objects.select_related("user")}
        assert set(cards) == {("alice", q.pk), ("dave", q.pk), ("dave", q2.pk)}
        # Due at the confirmation; dave's card keeps what FSRS knows of his memory of it.
        assert cards["alice", q.pk].due == cards["dave", q.pk].due == erratum.decided_at
        assert {f: getattr(cards["dave", q.pk], f) for f in kept} == kept
        assert cards["alice", q.pk].stability is None and cards["alice", q.pk].state == 1  # a new card
        assert cards["dave", q2.pk].due == later
        assert set(ReviewCard.objects.due(user=dave, exam=exam).values_list("question_id", flat=True)) == {q.pk}

    def test_credit_either_also_sends_the_old_key_to_review_and_void_does_not(self, learners):
        alice, *_ = learners
        exam, (q, q2) = make_bank(questions=2)
        finished_attempt(user=alice, exam=exam, answers={q: "A", q2: "A"})
        erratum_confirm(erratum=report(q), policy="credit_either", corrected_choice_ids=choice_ids(q, "C"))
        assert ReviewCard.objects.due(user=alice, exam=exam).filter(question=q).exists()
        # A void item is retired: there is no right answer left to learn from it.
        erratum_confirm(erratum=report(q2), policy="void", corrected_choice_ids=choice_ids(q2, "B"))
        assert not ReviewCard.objects.filter(question=q2).exists()


class TestRegradeAgain:
    @pytest.mark.parametrize("policy", ErratumPolicy.values)
    def test_a_second_regrade_changes_nothing(self, learners, policy):
        exam, (q, q2, q3) = make_bank(questions=3)
        attempts = [
            finished_attempt(user=learner, exam=exam, answers={q: picks, q2: "A", q3: "B"})
            for learner, picks in zip(learners, ["A", "B", "C", ""], strict=True)
        ]
        backdate(*attempts)
        first = erratum_confirm(erratum=report(q), policy=policy, corrected_choice_ids=choice_ids(q, "B")).event
        after_first = [result(a) for a in attempts]
        picks_first = list(Response.objects.order_by("pk").values_list("pk", "is_correct"))

        second = regrade_question(question=q)

        assert first.scores_changed > 0
        assert (second.attempts_touched, second.scores_changed, second.pass_flips) == (4, 0, 0)
        assert not second.changes.exists()
        assert [result(a) for a in attempts] == after_first
        assert list(Response.objects.order_by("pk").values_list("pk", "is_correct")) == picks_first
        assert RegradeEvent.objects.count() == 2

    def test_regrade_needs_a_confirmed_erratum(self):
        exam, (q,) = make_bank(questions=1)
        report(q)
        with pytest.raises(ValueError, match="no confirmed erratum"):
            regrade_question(question=q)


# --- successive errata compose ------------------------------------------------------


def shift_decision(erratum: Erratum, *, hours_ago: float) -> None:
    Erratum.objects.filter(pk=erratum.pk).update(decided_at=timezone.now() - timedelta(hours=hours_ago))


def backdate_to(attempts, *, hours_ago: float) -> None:
    Attempt.objects.filter(pk__in=[a.pk for a in attempts]).update(finished_at=timezone.now() - timedelta(hours=hours_ago))


class TestSuccessiveErrata:
    """Three credit-either confirmations in a row on one question, with attempts finished
    before, between and after them; every score against a recount written out by hand."""

    # What earns credit on the question for an attempt finished in each phase, by the rule
    # itself (not by the code under test): the current key C; each credit-either erratum's
    # published key for attempts finished before it (e1: A, before 3 h ago; e2 and e3: B,
    # before 2 h and 1 h ago).
    ACCEPTED = {0: {"A", "B", "C"}, 1: {"B", "C"}, 2: {"B", "C"}, 3: {"C"}}

    def test_three_confirmations_in_a_row_never_take_back_credit(self, learners):
        exam, (q, q2, q3) = make_bank(questions=3)
        phases: dict[int, list[tuple[Attempt, str]]] = {}
        scores: dict[int, Decimal] = {}

        def take(phase: int, *, hours_ago: float | None) -> None:
            taken = []
            for learner, pick in zip(learners, "ABCD", strict=True):
                taken.append((finished_attempt(user=learner, exam=exam, answers={q: pick, q2: "A", q3: "B"}), pick))
            if hours_ago is not None:
                backdate_to([a for a, _ in taken], hours_ago=hours_ago)
            phases[phase] = taken

        def confirm(corrected: str, *, hours_ago: float) -> RegradeEvent:
            before = {a.pk: a.score for a in Attempt.objects.all()}
            erratum = report(q)
            event = erratum_confirm(erratum=erratum, policy="credit_either", corrected_choice_ids=choice_ids(q, corrected)).event
            shift_decision(erratum, hours_ago=hours_ago)
            after = {a.pk: a.score for a in Attempt.objects.all()}
            assert all(after[pk] >= score for pk, score in before.items()), "a credit-either erratum lowered a score"
            return event

        take(0, hours_ago=4)
        first = confirm("B", hours_ago=3)  # A → B
        take(1, hours_ago=2.5)
        # The same key again: before the fold this one erratum was all grading read, and
        # as its published key is already B, A's credit from the first was taken back.
        second = confirm("B", hours_ago=2)
        take(2, hours_ago=1.5)
        third = confirm("C", hours_ago=1)  # B → C
        take(3, hours_ago=None)

        assert (first.scores_changed, second.scores_changed) == (1, 0)
        assert third.scores_changed == 3  # C gains in phases 0–2; B keeps its credit in all three
        everyone = []
        for phase, taken in phases.items():
            for attempt, pick in taken:
                right_on_q = pick in self.ACCEPTED[phase]
                # q2 "A" is right, q3 "B" is wrong: the rest of the attempt holds 1 of 2.
                expected = (1 + right_on_q, 3, grading.score_percent(right=1 + right_on_q, total=3))
                assert result(attempt)[:3] == expected, (phase, pick)
                assert is_correct(attempt, q) is right_on_q
                everyone.append(attempt)
        assert_graded_from_scratch(everyone)

    def test_the_refold_command_puts_right_grades_the_latest_erratum_alone_got_wrong(self, learners):
        exam, (q, q2) = make_bank(questions=2)
        early = finished_attempt(user=learners[0], exam=exam, answers={q: "A", q2: "A"})
        backdate_to([early], hours_ago=4)
        first = report(q)
        erratum_confirm(erratum=first, policy="credit_either", corrected_choice_ids=choice_ids(q, "B"))
        shift_decision(first, hours_ago=3)
        erratum_confirm(erratum=report(q), policy="credit_either", corrected_choice_ids=choice_ids(q, "B"))
        single = QuestionFactory(domain=q.domain, exam=exam, keys=["A"])
        erratum_confirm(erratum=report(single), policy="credit_corrected", corrected_choice_ids=choice_ids(single, "B"))
        assert result(early)[:3] == (2, 2, Decimal("100.00"))
        # As the latest-erratum-only regrade left it: A's credit taken back.
        Response.objects.filter(attempt=early, question=q).update(is_correct=False)
        Attempt.objects.filter(pk=early.pk).update(right_count=1, score=Decimal("50.00"), passed=False)
        events = RegradeEvent.objects.count()

        out = StringIO()
        call_command("refold_errata", stdout=out)

        assert result(early)[:4] == (2, 2, Decimal("100.00"), True)
        assert RegradeEvent.objects.count() == events + 1  # one question has two errata
        assert "1 score(s) changed" in out.getvalue() and "Re-folded 1 question " in out.getvalue()
        call_command("refold_errata", stdout=out)
        assert RegradeEvent.objects.latest("pk").scores_changed == 0


# --- the dry run --------------------------------------------------------------------


def everything_stored() -> tuple:
    """What a confirmation may write, to compare before and after a dry run."""
    return (
        list(Attempt.objects.order_by("pk").values_list("pk", "right_count", "total_count", "score", "passed")),
        list(Response.objects.order_by("pk").values_list("pk", "is_correct")),
        list(Choice.objects.order_by("pk").values_list("pk", "is_correct", "feedback")),
        list(Question.objects.order_by("pk").values_list("pk", "is_active", "explanation")),
        list(Erratum.objects.order_by("pk").values_list("pk", "status", "policy", "decided_at", "corrected_version")),
        list(QuestionVersion.objects.order_by("pk").values_list("pk", "content")),
        list(ReviewCard.objects.order_by("pk").values_list("pk", "stability", "difficulty", "due")),
        RegradeEvent.objects.count(), RegradeChange.objects.count(),
    )


def generated_attempts(*, seed: int, count: int = 24):
    """An exam of three questions and `count` finished attempts picking at random, half before the confirmation."""
    import random

    rng = random.Random(seed)
    exam, bank = make_bank(questions=3, passing_score=60)
    attempts = []
    for index in range(count):
        answers = {question: rng.choice(["A", "B", "C", "D", ""]) for question in bank}
        attempts.append(finished_attempt(user=UserFactory(username=f"gen{seed}-{index}"), exam=exam, answers=answers))
    backdate(*attempts[: count // 2])
    return exam, bank, attempts


@pytest.mark.parametrize("policy", ErratumPolicy.values)
def test_the_dry_run_shows_what_the_committed_regrade_then_does(policy):
    exam, (q, *_), attempts = generated_attempts(seed=len(policy))
    erratum = report(q)
    Attempt.objects.filter(pk__in=[a.pk for a in attempts[::5]]).update(score=None)  # a few never graded
    before = everything_stored()
    arguments = {"erratum": erratum, "policy": policy, "corrected_choice_ids": choice_ids(q, "B"),
                 "explanation": "Corrected.", "feedback": {min(choice_ids(q, "A")): "Not this one."}}

    dry = erratum_confirm(**arguments, dry_run=True)

    assert dry.event is None
    assert everything_stored() == before
    assert dry.summary.attempts_touched == len(attempts) and dry.summary.scores_changed > 0
    committed = erratum_confirm(**arguments, expected=dry.summary.digest())
    assert committed.summary == dry.summary
    event = committed.event
    assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (
        dry.summary.attempts_touched, dry.summary.scores_changed, dry.summary.pass_flips,
    )
    # The distribution and the learners, recounted from the records the regrade kept.
    changes = list(event.changes.select_related("attempt"))
    moved = [c for c in changes if c.old_score != c.new_score]
    assert dict(dry.summary.distribution) == dict(Counter(c.new_score - c.old_score for c in moved))
    assert dry.summary.learners_affected == len({c.attempt.user_id for c in moved})
    assert (dry.summary.to_pass, dry.summary.to_fail) == (
        sum(not c.old_passed and c.new_passed for c in changes), sum(c.old_passed and not c.new_passed for c in changes),
    )
    assert dry.summary.raised + dry.summary.lowered == dry.summary.scores_changed


def test_a_confirm_whose_numbers_moved_since_the_preview_keeps_nothing_and_says_the_new_ones(learners):
    exam, (q, q2) = make_bank(questions=2)
    finished_attempt(user=learners[0], exam=exam, answers={q: "B", q2: "A"})
    erratum = report(q)
    arguments = {"erratum": erratum, "policy": "credit_corrected", "corrected_choice_ids": choice_ids(q, "B")}
    dry = erratum_confirm(**arguments, dry_run=True)
    finished_attempt(user=learners[1], exam=exam, answers={q: "B", q2: "A"})
    before = everything_stored()
    with pytest.raises(PreviewOutdated) as outdated:
        erratum_confirm(**arguments, expected=dry.summary.digest())
    assert everything_stored() == before
    assert (dry.summary.scores_changed, outdated.value.summary.scores_changed) == (1, 2)
    assert erratum_confirm(**arguments, expected=outdated.value.summary.digest()).event.scores_changed == 2


def test_corrected_text_is_a_new_version_and_too_long_text_changes_nothing(learners):
    exam, (q, q2) = make_bank(questions=2)
    attempt = finished_attempt(user=learners[0], exam=exam, answers={q: "A", q2: "A"})
    shown = Response.objects.get(attempt=attempt, question=q).version
    erratum = report(q)
    a = min(choice_ids(q, "A"))
    with pytest.raises(ValueError, match="at most 2,000"):
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"), feedback={a: "x" * 2001})
    with pytest.raises(ValueError, match="not choices of question"):
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"), feedback={min(choice_ids(q2, "A")): "x"})
    assert Erratum.objects.get(pk=erratum.pk).status == ErratumStatus.REPORTED
    erratum_confirm(
        erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"),
        explanation="B is right because …", feedback={a: "Not A: that was the published key's mistake."},
    )
    erratum.refresh_from_db()
    corrected = erratum.corrected_version
    assert corrected.number == shown.number + 1
    assert corrected.content["explanation"] == "B is right because …"
    assert corrected.choice_feedback(a) == "Not A: that was the published key's mistake."
    assert shown.content["explanation"] == "Because the key is right."  # the attempt's own text is kept
    # The corrected version stays frozen: a later edit makes another version.
    Question.objects.filter(pk=q.pk).update(explanation="Edited again.")
    assert QuestionVersion.objects.current_for([Question.objects.get(pk=q.pk)])[q.pk].pk != corrected.pk


# --- validation and rejection -------------------------------------------------------


class TestDecisions:
    @pytest.mark.parametrize(
        ("labels", "message"),
        [("", "exactly 1"), ("BC", "exactly 1")],
    )
    def test_a_single_answer_question_needs_exactly_one_key(self, labels, message, learners):
        exam, (q, q2) = make_bank(questions=2)
        a = finished_attempt(user=learners[0], exam=exam, answers={q: "A", q2: "A"})
        erratum = report(q)
        with pytest.raises(ValueError, match=message):
            erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, labels))
        erratum.refresh_from_db()
        assert erratum.status == ErratumStatus.REPORTED and erratum.decided_at is None
        assert set(q.choices.filter(is_correct=True).values_list("label", flat=True)) == {"A"}
        assert result(a)[:4] == (2, 2, Decimal("100.00"), True)
        assert not RegradeEvent.objects.exists()

    def test_a_multiple_answer_question_needs_choose_keys(self):
        exam, _ = make_bank(questions=1)
        q = QuestionFactory(exam=exam, domain=exam.domains.get(), kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "B"])
        with pytest.raises(ValueError, match="exactly 2 correct"):
            erratum_confirm(erratum=report(q), policy="credit_corrected", corrected_choice_ids=choice_ids(q, "ABC"))

    def test_choices_of_another_question_and_unknown_policies_are_refused(self):
        exam, (q, q2) = make_bank(questions=2)
        erratum = report(q)
        with pytest.raises(ValueError, match="not choices of question"):
            erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q2, "B"))
        with pytest.raises(ValueError, match="unknown erratum policy"):
            erratum_confirm(erratum=erratum, policy="forgive", corrected_choice_ids=choice_ids(q, "B"))
        with pytest.raises(ValueError, match="exactly 1"):
            erratum_confirm(erratum=erratum, policy="credit_either", corrected_choice_ids=[])

    def test_an_erratum_is_decided_once(self):
        exam, (q,) = make_bank(questions=1)
        erratum = report(q)
        erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"))
        with pytest.raises(ValueError, match="already confirmed"):
            erratum_confirm(erratum=erratum, policy="void", corrected_choice_ids=[])
        with pytest.raises(ValueError, match="already confirmed"):
            erratum_reject(erratum=erratum, note="No.")

    def test_reject_records_the_decision_and_regrades_nothing(self, learners, instructor):
        exam, (q, q2) = make_bank(questions=2)
        a = finished_attempt(user=learners[0], exam=exam, answers={q: "A", q2: "B"})
        erratum = report(q)
        rejected = erratum_reject(erratum=erratum, user=instructor, note="The key is right; see the docs.")
        assert rejected.status == ErratumStatus.REJECTED
        assert rejected.decision_note == "The key is right; see the docs."
        assert rejected.decided_by == instructor and rejected.decided_at is not None and rejected.policy == ""
        assert set(q.choices.filter(is_correct=True).values_list("label", flat=True)) == {"A"}
        assert result(a)[:4] == (1, 2, Decimal("50.00"), False)
        assert not RegradeEvent.objects.exists() and not ReviewCard.objects.exists()
        # The question can be reported again: the rejected erratum is no longer open.
        report(q)

    def test_a_rejection_needs_a_note(self):
        exam, (q,) = make_bank(questions=1)
        erratum = report(q)
        with pytest.raises(ValueError, match="needs a note"):
            erratum_reject(erratum=erratum, note="  ")
        erratum.refresh_from_db()
        assert erratum.status == ErratumStatus.REPORTED


# --- learners' notices --------------------------------------------------------------


class TestScoreChanges:
    def test_a_learner_sees_only_their_own_changes_newest_first_in_one_query(self, learners):
        alice, bob, *_ = learners
        exam, (q, q2, q3) = make_bank(questions=3)
        a = finished_attempt(user=alice, exam=exam, answers={q: "B", q2: "B", q3: "A"})
        b = finished_attempt(user=bob, exam=exam, answers={q: "B", q2: "A", q3: "A"})
        erratum_confirm(erratum=report(q), policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B"))
        erratum_confirm(erratum=report(q2), policy="credit_corrected", corrected_choice_ids=choice_ids(q2, "B"))

        with CaptureQueriesContext(connection) as queries:
            changes = score_changes_for(user=alice)
            lines = [
                f"your score on {change.attempt.exam.code} changed from {change.old_score} to {change.new_score} "
                f"after a correction to {change.event.erratum.question.title}"
                for change in changes
            ]
        assert len(queries) == 1
        assert lines == [
            f"your score on {exam.code} changed from 66.67 to 100.00 after a correction to {q2.title}",
            f"your score on {exam.code} changed from 33.33 to 66.67 after a correction to {q.title}",
        ]
        assert [(c.attempt_id, c.new_score) for c in score_changes_for(user=bob)] == [
            (b.pk, Decimal("66.67")), (b.pk, Decimal("100.00")),
        ]
        assert score_changes_for(user=alice, attempt=b) == []
        assert len(score_changes_for(user=alice, attempt=a, limit=1)) == 1


# --- SQL formulas and query counts --------------------------------------------------


def test_the_sql_score_and_pass_agree_with_exams_grading_for_every_count_up_to_40(learners):
    exam = ExamFactory(passing_score=70)
    now = timezone.now()
    pairs = [(right, total) for total in range(0, 41) for right in range(0, total + 1)]
    Attempt.objects.bulk_create(
        Attempt(
            user=learners[0], exam=exam, status=AttemptStatus.SUBMITTED, finished_at=now,
            right_count=right, total_count=total,
        )
        for right, total in pairs
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT right_count, total_count, {score_sql('right_count', 'total_count')}, "
            f"{passed_sql('right_count', 'total_count', '70')} FROM exams_attempt WHERE exam_id = %s",
            [exam.pk],
        )
        # Read back through the model's field, as the regrade's scores are stored and read.
        field = Attempt._meta.get_field("score")
        computed = {
            (right, total): (field.to_python(field.get_db_prep_value(score, connection)), bool(passed))
            for right, total, score, passed in cursor.fetchall()
        }
    expected = {
        (right, total): (
            grading.score_percent(right=right, total=total),
            grading.is_passed(right=right, total=total, passing_score=70),
        )
        for right, total in pairs
    }
    assert computed == expected
    assert computed[(1, 32)][0] == Decimal("3.13")  # a half rounds up


def confirm_with_queries(*, attempts: int) -> tuple[int, RegradeEvent]:
    exam, (q, q2) = make_bank(questions=2)
    for index in range(attempts):
        user = UserFactory()
        finished_attempt(user=user, exam=exam, answers={q: "ABC"[index % 3], q2: "A"})
    erratum = report(q)
    with CaptureQueriesContext(connection) as queries:
        event = erratum_confirm(erratum=erratum, policy="credit_either", corrected_choice_ids=choice_ids(q, "B")).event
    return len(queries), event


def test_the_number_of_queries_of_a_regrade_does_not_grow_with_attempts(db):
    few, small = confirm_with_queries(attempts=5)
    many, large = confirm_with_queries(attempts=50)
    assert (small.attempts_touched, large.attempts_touched) == (5, 50)
    assert large.scores_changed == 17  # those who picked B (index 1, 4, …, 49)
    assert few == many, (few, many)


# --- a regrade equals grading from scratch ------------------------------------------


LABELS = "ABCD"


@st.composite
def questions(draw):
    kind = draw(st.sampled_from([QuestionKind.SINGLE, QuestionKind.MULTIPLE]))
    choose = 1 if kind == QuestionKind.SINGLE else draw(st.integers(2, 3))
    key = draw(st.lists(st.sampled_from(LABELS), min_size=choose, max_size=choose, unique=True))
    return {"kind": kind, "choose": choose, "key": "".join(key), "domain": draw(st.integers(0, 1))}


@st.composite
def scenarios(draw):
    bank = draw(st.lists(questions(), min_size=2, max_size=4))
    target = bank[0]
    corrected = draw(st.lists(st.sampled_from(LABELS), min_size=target["choose"], max_size=target["choose"], unique=True))
    picks = st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map("".join)
    # Picking the published or the corrected key is what the policies are about, so
    # those selections come up far more often than chance would have them.
    target_picks = st.one_of(st.sampled_from([target["key"], "".join(corrected)]), picks)
    attempts = draw(
        st.lists(
            st.fixed_dictionaries({
                "learner": st.integers(0, 2),
                "answers": st.tuples(target_picks, st.lists(picks, min_size=len(bank) - 1, max_size=len(bank) - 1)).map(
                    lambda answers: [answers[0], *answers[1]]
                ),
                "expired": st.booleans(),
                "after": st.booleans(),
            }),
            min_size=1, max_size=6,
        )
    )
    return {
        "bank": bank,
        "corrected": "".join(corrected),
        "policy": draw(st.sampled_from(ErratumPolicy.values)),
        "passing_score": draw(st.sampled_from([50, 60, 70, 75])),
        "attempts": attempts,
    }


def assert_graded_from_scratch(attempts: list[Attempt]) -> None:
    """Every stored grade equals exams.room.grading over confirmed_keys, as a fresh submit would."""
    for attempt in Attempt.objects.filter(pk__in=[a.pk for a in attempts]).select_related("exam"):
        responses = list(
            attempt.responses.select_related("question").prefetch_related("picks").order_by("position")
        )
        keys = confirmed_keys(attempt=attempt, question_ids={r.question_id for r in responses})
        grade = grading.grade_attempt(
            slots=[
                grading.Slot(
                    domain_id=r.domain_id,
                    selected=frozenset(p.choice_id for p in r.picks.all()),
                    key=keys[r.question_id],
                )
                for r in responses
            ],
            passing_score=attempt.exam.passing_score,
        )
        assert [r.is_correct for r in responses] == list(grade.item_results)
        assert (attempt.right_count, attempt.total_count, attempt.score, attempt.passed) == (
            grade.right, grade.total, grade.score, grade.passed,
        )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_a_regrade_equals_grading_from_scratch(learners, scenario):
    with transaction.atomic():
        exam = ExamFactory(question_count=len(scenario["bank"]), passing_score=scenario["passing_score"])
        domains = [DomainFactory(exam=exam, weight=50, order=order) for order in range(2)]
        bank = [
            QuestionFactory(exam=exam, domain=domains[spec["domain"]], kind=spec["kind"], choose=spec["choose"], keys=list(spec["key"]))
            for spec in scenario["bank"]
        ]
        attempts = []
        for spec in scenario["attempts"]:
            attempt = start_attempt(
                user=learners[spec["learner"]], exam=exam, answers=dict(zip(bank, spec["answers"], strict=True))
            )
            attempts.append(finish(attempt, expired=spec["expired"]))
        backdate(*attempts)
        published = [(a.pk, a.published_score) for a in attempts]

        erratum = report(bank[0])
        erratum_confirm(erratum=erratum, policy=scenario["policy"], corrected_choice_ids=choice_ids(bank[0], scenario["corrected"]))
        assert_graded_from_scratch(attempts)

        # Some attempts finished after the confirmation: a regrade must drop the old key's
        # credit for them exactly as grading at submit would.
        erratum.refresh_from_db()
        later = [a.pk for a, spec in zip(attempts, scenario["attempts"], strict=True) if spec["after"]]
        Attempt.objects.filter(pk__in=later).update(finished_at=erratum.decided_at + timedelta(minutes=1))
        regrade_question(question=bank[0])
        assert_graded_from_scratch(attempts)

        again = regrade_question(question=bank[0])
        assert (again.scores_changed, again.pass_flips) == (0, 0)
        assert list(Attempt.objects.filter(pk__in=[a.pk for a in attempts]).order_by("pk").values_list("pk", "published_score")) == sorted(published)
        transaction.set_rollback(True)


# --- not interleaving with finalization (PostgreSQL row locks) ----------------------


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("keys_read", [True, False], ids=["grading-under-way", "grading-not-started"])
def test_an_attempt_finalized_during_a_confirmation_ends_graded_by_the_new_key(keys_read):
    """Another request holds the attempt while it grades. If it has read the keys (and so
    share-locked the questions), the confirmation waits for it and then regrades it; if
    not, the confirmation goes ahead and the grading, waiting for it, reads the new key."""
    learner = UserFactory(username="racer")
    exam, (q, q2) = make_bank(questions=2)
    attempt = start_attempt(user=learner, exam=exam, answers={q: "A", q2: "A"})
    erratum = report(q)
    locked, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def finalize() -> None:
        try:
            with transaction.atomic():
                row = Attempt.objects.select_for_update().select_related("exam").get(pk=attempt.pk)
                if keys_read:
                    confirmed_keys(attempt=row, question_ids=[q.pk, q2.pk])
                locked.set()
                release.wait(timeout=20)
                attempt_finish(attempt=row, expired=False)
        except Exception as exc:  # reported to the test below
            outcome["finalize"] = exc
        finally:
            connection.close()

    def confirm() -> None:
        try:
            outcome["event"] = erratum_confirm(
                erratum=erratum, policy="credit_corrected", corrected_choice_ids=choice_ids(q, "B")
            ).event
        except Exception as exc:
            outcome["confirm"] = exc
        finally:
            connection.close()

    finalizer = threading.Thread(target=finalize)
    finalizer.start()
    assert locked.wait(timeout=10)
    confirmer = threading.Thread(target=confirm)
    confirmer.start()
    confirmer.join(timeout=1.5)
    try:
        if keys_read:
            assert confirmer.is_alive(), outcome
            assert Erratum.objects.get(pk=erratum.pk).status == ErratumStatus.REPORTED
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                assert cursor.fetchone()[0] >= 1
        else:
            assert not confirmer.is_alive() and "confirm" not in outcome, outcome
            assert Erratum.objects.get(pk=erratum.pk).status == ErratumStatus.CONFIRMED
    finally:
        release.set()
        finalizer.join(timeout=20)
        confirmer.join(timeout=20)
    assert not finalizer.is_alive() and not confirmer.is_alive()
    assert "finalize" not in outcome and "confirm" not in outcome, outcome

    # By the corrected key either way: A is now wrong, so 1 of 2.
    assert result(attempt) == (1, 2, Decimal("50.00"), False, Decimal("50.00" if not keys_read else "100.00"))
    event = outcome["event"]
    if keys_read:
        # Graded first by the published key, then regraded by the corrected one.
        assert (event.attempts_touched, event.scores_changed, event.pass_flips) == (1, 1, 1)
        assert RegradeChange.objects.get(event=event).attempt_id == attempt.pk
    else:
        # Not finished when the confirmation ran: nothing to regrade, graded right the first time.
        assert (event.attempts_touched, event.scores_changed) == (0, 0)
    assert Choice.objects.get(question=q, is_correct=True).label == "B"
