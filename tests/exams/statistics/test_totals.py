"""Item statistics through the database: hand-computed cases, a planted wrong key, the command."""
import csv
import io
import math
import random
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from exams.models import (
    Attempt,
    AttemptMode,
    AttemptStatus,
    Choice,
    Question,
    QuestionVersion,
    Response,
    ResponseChoice,
)
from exams.room.grading import score_percent
from exams.statistics.formulas import ItemObservation, item_statistics
from exams.statistics.totals import likely_miskeyed_ids, statistics_for_exam, statistics_for_question
from tests.factories import DomainFactory, ExamFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def make_bank(*, questions: int, keys: list[str] | None = None):
    exam = ExamFactory(question_count=questions)
    domain = DomainFactory(exam=exam, name="Core ML and AI Knowledge")
    keys = keys or ["A"] * questions
    return exam, [QuestionFactory(exam=exam, domain=domain, keys=[key]) for key in keys]


def record(
    *, user, exam, sheets: list[dict[Question, str]], mode: str = AttemptMode.MOCK,
    status: str = AttemptStatus.SUBMITTED,
) -> list[Attempt]:
    """Attempts graded by the current keys, one per answer sheet (question → picked labels)."""
    questions = list({question.pk: question for sheet in sheets for question in sheet}.values())
    versions = QuestionVersion.objects.current_for(questions)
    choices = {(c.question_id, c.label): c for c in Choice.objects.filter(question__in=questions)}
    keys = {q.pk: {c.label for c in choices.values() if c.question_id == q.pk and c.is_correct} for q in questions}
    finished = status != AttemptStatus.IN_PROGRESS
    rights = [sum(set(labels) == keys[q.pk] for q, labels in sheet.items()) for sheet in sheets]
    attempts = Attempt.objects.bulk_create(
        Attempt(
            user=user, exam=exam, mode=mode, status=status,
            finished_at=timezone.now() if finished else None,
            right_count=right if finished else None, total_count=len(sheet) if finished else None,
            score=score_percent(right=right, total=len(sheet)) if finished else None,
        )
        for sheet, right in zip(sheets, rights, strict=True)
    )
    responses = Response.objects.bulk_create(
        Response(
            attempt=attempt, position=position, question=question, domain_id=question.domain_id,
            version=versions[question.pk],
            choice_order=[], is_correct=(set(labels) == keys[question.pk]) if finished else None,
        )
        for attempt, sheet in zip(attempts, sheets, strict=True)
        for position, (question, labels) in enumerate(sheet.items(), start=1)
    )
    picked = [labels for sheet in sheets for labels in sheet.values()]
    ResponseChoice.objects.bulk_create(
        ResponseChoice(response=response, choice=choices[(response.question_id, label)])
        for response, labels in zip(responses, picked, strict=True)
        for label in labels
    )
    return attempts


def label_counts(question: Question, counts: dict[int, int]) -> dict[str, int]:
    labels = dict(question.choices.values_list("pk", "label"))
    return {labels[pk]: count for pk, count in counts.items()}


class TestHandComputed:
    def test_a_small_bank(self, learner):
        exam, (q, q2, q3) = make_bank(questions=3)
        attempts = record(user=learner, exam=exam, sheets=[
            {q: "A", q2: "A", q3: "A"},  # 3 right: rest-score on q 2
            {q: "A", q2: "A", q3: "B"},  # 2 right: rest 1
            {q: "B", q2: "A", q3: "A"},  # 2 right: rest 2 (tied with the one above; lower id ranks first)
            {q: "C", q2: "B", q3: "A"},  # 1 right: rest 1
            {q: "", q2: "B", q3: "B"},   # 0 right; unanswered counts as wrong
        ])
        # Neither a practice attempt nor an unfinished mock counts.
        record(user=learner, exam=exam, sheets=[{q: "D", q2: "D", q3: "D"}], mode=AttemptMode.PRACTICE)
        record(user=learner, exam=exam, sheets=[{q: "D", q2: "D", q3: "D"}], status=AttemptStatus.IN_PROGRESS)
        assert [a.right_count for a in attempts] == [3, 2, 2, 1, 0]

        item = statistics_for_question(question=q)
        assert item.n == 5 and item.facility == pytest.approx(2 / 5)
        # ⌈0.27·5⌉ = 2: upper = attempts 1 and 2 (both right), lower = 4 and 5 (both wrong).
        assert item.group_size == 2 and item.discrimination == pytest.approx(1.0)
        # x = 1,1,0,0,0 against rest-scores 2,1,2,1,0: r = 3 / √(6·14).
        assert item.point_biserial == pytest.approx(3 / math.sqrt(84))
        assert label_counts(q, item.choice_counts) == {"A": 2, "B": 1, "C": 1, "D": 0}
        assert label_counts(q, item.upper_counts) == {"A": 2, "B": 0, "C": 0, "D": 0}
        assert label_counts(q, item.lower_counts) == {"A": 0, "B": 0, "C": 1, "D": 0}
        assert not item.likely_miskeyed  # n < 30

        whole = statistics_for_exam(exam=exam)
        assert set(whole) == {q.pk, q2.pk, q3.pk}
        assert whole[q.pk] == item
        assert whole[q2.pk].facility == pytest.approx(3 / 5)
        assert label_counts(q2, whole[q2.pk].choice_counts) == {"A": 3, "B": 2, "C": 0, "D": 0}

    def test_a_question_nobody_took_has_n_zero(self, learner):
        exam, (q,) = make_bank(questions=1)
        item = statistics_for_question(question=q)
        assert (item.n, item.facility, item.discrimination, item.point_biserial) == (0, None, None, None)
        assert not item.likely_miskeyed

    def test_a_voided_slot_counts_as_wrong_for_the_item(self, learner):
        exam, (q, q2) = make_bank(questions=2)
        record(user=learner, exam=exam, sheets=[{q: "A", q2: "A"}, {q: "B", q2: "A"}])
        Response.objects.filter(question=q).update(is_correct=None)
        assert statistics_for_question(question=q).facility == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sql_totals_agree_with_the_row_by_row_reference(learner, seed):
    """Random sheets with ties, blanks, double picks and voided slots: same statistics both ways."""
    rng = random.Random(seed)
    exam, bank = make_bank(questions=6, keys=list("ABCDAB"))
    sheets = [
        {q: rng.choice(["", "A", "B", "C", "D", "AB", "CD"]) for q in rng.sample(bank, rng.randint(2, 6))}
        for _ in range(rng.randint(25, 70))
    ]
    record(user=learner, exam=exam, sheets=sheets)
    Response.objects.filter(question=bank[5], attempt__id__in=Attempt.objects.order_by("?").values("pk")[:5]).update(is_correct=None)

    got = statistics_for_exam(exam=exam)
    for question in bank:
        rows = Response.objects.filter(question=question, attempt__mode=AttemptMode.MOCK).select_related("attempt")
        observations = [
            ItemObservation(
                attempt_id=r.attempt_id, attempt_right=r.attempt.right_count or 0, right=r.is_correct is True,
                selected=frozenset(r.picks.values_list("choice_id", flat=True)),
                attempt_score=r.attempt.score if r.attempt.score is not None else Decimal(0),
            )
            for r in rows
        ]
        choices = list(question.choices.order_by("order", "pk"))
        expected = item_statistics(
            observations=observations, key=frozenset(c.pk for c in choices if c.is_correct),
            all_choices=[c.pk for c in choices],
        )
        assert got[question.pk] == expected


def test_groups_rank_attempts_by_score_not_by_right_count(learner):
    """A voided item shrinks an attempt's total, so 3 right of 4 (75%) outranks 3 of 5 (60%)."""
    exam, (q, q2, q3, q4, q5) = make_bank(questions=5)
    best, sixty, seventy_five, worst = record(user=learner, exam=exam, sheets=[
        {q: "A", q2: "A", q3: "A", q4: "A", q5: "B"},  # 4 of 5: 80%
        {q: "A", q2: "A", q3: "A", q4: "B", q5: "B"},  # 3 of 5: 60%
        {q: "B", q2: "A", q3: "A", q4: "A", q5: "B"},  # 3 of 5, then 3 of 4 with q5 void: 75%
        {q: "B", q2: "A", q3: "B", q4: "B", q5: "B"},  # 1 of 5: 20%
    ])
    Attempt.objects.filter(pk=seventy_five.pk).update(total_count=4, score=score_percent(right=3, total=4))

    item = statistics_for_question(question=q)
    # ceil(0.27 * 4) = 2. By score the upper group is 80% (right on q) and 75% (wrong), the
    # lower 60% (right) and 20% (wrong): D = 0. By right count the tie at 3 would go to the
    # lower id, the 60% attempt, and make D = 1.
    assert item.group_size == 2 and item.discrimination == 0
    assert label_counts(q, item.upper_counts) == {"A": 1, "B": 1, "C": 0, "D": 0}
    assert label_counts(q, item.lower_counts) == {"A": 1, "B": 1, "C": 0, "D": 0}


def ability_data(*, learner, attempts: int, seed: int = 20261130):
    """Mocks of a 12-question bank by learners of spread ability, with one wrong key planted.

    Learners answer as in a two-parameter logistic model: the chance of the key rises
    with ability. On the planted question the recorded key is A but the real answer is
    C: strong learners pick C, weak ones mostly fall for A.
    """
    rng = random.Random(seed)
    exam, bank = make_bank(questions=12, keys=["A", *("ABCD"[index % 4] for index in range(1, 12))])
    planted, good = bank[0], bank[1:]
    keys = {question.pk: question.choices.get(is_correct=True).label for question in bank}
    sheets = []
    for index in range(attempts):
        ability = -2 + 4 * index / max(attempts - 1, 1)
        knows = 1 / (1 + math.exp(-1.7 * ability))
        sheet = {planted: "C" if rng.random() < knows else ("A" if rng.random() < 0.8 else rng.choice("BD"))}
        for question in good:
            key = keys[question.pk]
            knows = 1 / (1 + math.exp(-1.7 * (ability - rng.uniform(-1, 1))))
            sheet[question] = key if rng.random() < knows else rng.choice([label for label in "ABCD" if label != key])
        sheets.append(sheet)
    rng.shuffle(sheets)
    record(user=learner, exam=exam, sheets=sheets)
    return exam, planted, good


class TestLikelyMiskeyed:
    def test_a_planted_wrong_key_is_flagged_and_good_questions_are_not(self, learner):
        exam, planted, good = ability_data(learner=learner, attempts=60)
        statistics = statistics_for_exam(exam=exam)
        bad = statistics[planted.pk]
        assert bad.n == 60 and bad.likely_miskeyed
        assert bad.discrimination < 0
        assert bad.upper_counts[planted.choices.get(label="C").pk] > bad.upper_counts[planted.choices.get(label="A").pk]
        for question in good:
            assert not statistics[question.pk].likely_miskeyed, question
            assert statistics[question.pk].discrimination > 0
            assert statistics[question.pk].point_biserial > 0
        assert likely_miskeyed_ids(exam=exam) == {planted.pk}

    def test_fewer_than_30_mocks_flag_nothing(self, learner):
        exam, planted, _ = ability_data(learner=learner, attempts=29)
        assert statistics_for_exam(exam=exam)[planted.pk].n == 29
        assert likely_miskeyed_ids(exam=exam) == set()


def test_the_number_of_queries_does_not_grow_with_the_bank(learner):
    counts = []
    for size in (3, 12):
        exam, bank = make_bank(questions=size)
        record(user=learner, exam=exam, sheets=[{q: "AB"[i % 2] for q in bank} for i in range(6)])
        with CaptureQueriesContext(connection) as queries:
            statistics = statistics_for_exam(exam=exam)
        assert len(statistics) == size and all(s.n == 6 for s in statistics.values())
        # Reads: the choices, then every question's sums and counts in one statement (the
        # rest is the transaction and its SET LOCALs).
        reads = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(("SELECT", "WITH"))]
        counts.append((len(queries), len(reads)))
    assert counts[0] == counts[1] and counts[0][1] == 2


class TestCommand:
    def test_the_table_lists_every_question_and_flags_the_planted_one(self, learner):
        exam, planted, good = ability_data(learner=learner, attempts=60)
        out = io.StringIO()
        call_command("item_stats", "--exam", exam.code, stdout=out)
        lines = out.getvalue().splitlines()
        assert lines[0].startswith(f"{exam.code}: {exam.title} — 12 questions, 1 likely mis-keyed")
        assert lines[1].split()[:9] == ["id", "title", "domain", "n", "p", "D", "r_pb", "miskey", "key"]
        planted_line = next(line for line in lines if line.lstrip().startswith(f"{planted.pk} "))
        assert planted.title in planted_line and " yes " in planted_line and "A:" in planted_line
        assert sum(" yes " in line for line in lines) == 1

    def test_csv_has_one_row_per_question(self, learner):
        exam, (q, q2) = make_bank(questions=2, keys=["B", "A"])
        record(user=learner, exam=exam, sheets=[{q: "B", q2: "A"}, {q: "C", q2: "A"}, {q: "B", q2: ""}])
        out = io.StringIO()
        call_command("item_stats", "--exam", exam.code, "--csv", stdout=out)
        rows = list(csv.DictReader(io.StringIO(out.getvalue())))
        assert [row["id"] for row in rows] == [str(q.pk), str(q2.pk)]
        first = rows[0]
        assert first == {
            "exam": exam.code, "id": str(q.pk), "title": q.title, "domain": "Core ML and AI Knowledge",
            "n": "3", "facility": "0.67", "discrimination": "0.00", "point_biserial": "-0.50",
            "likely_miskeyed": "no", "key": "B", "choices": "A:0 B:2 C:1 D:0",
        }
        assert rows[1]["choices"] == "A:2 B:0 C:0 D:0" and rows[1]["facility"] == "0.67"

    def test_csv_neutralises_formula_text_and_keeps_negative_numbers(self, learner):
        """Issue 28: an imported title such as =HYPERLINK(...) reached the CSV's cells unescaped."""
        exam, (q, q2) = make_bank(questions=2, keys=["B", "A"])
        Question.objects.filter(pk=q.pk).update(title='=HYPERLINK("https://evil.example","Click")')
        q.domain.name = "+Ops"
        q.domain.save(update_fields=["name"])
        record(user=learner, exam=exam, sheets=[{q: "B", q2: "A"}, {q: "C", q2: "A"}, {q: "B", q2: ""}])
        out = io.StringIO()
        call_command("item_stats", "--exam", exam.code, "--csv", stdout=out)
        first = next(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
        assert first["title"] == '\'=HYPERLINK("https://evil.example","Click")' and first["domain"] == "'+Ops"
        assert (first["point_biserial"], first["facility"], first["n"]) == ("-0.50", "0.67", "3")

    def test_without_an_exam_every_exam_is_listed_and_an_unknown_code_is_an_error(self, learner):
        first, _ = make_bank(questions=1)
        second, _ = make_bank(questions=2)
        out = io.StringIO()
        call_command("item_stats", "--csv", stdout=out)
        assert sorted({row["exam"] for row in csv.DictReader(io.StringIO(out.getvalue()))}) == sorted([first.code, second.code])
        with pytest.raises(CommandError, match="No exam with code 'NOPE'"):
            call_command("item_stats", "--exam", "NOPE")
