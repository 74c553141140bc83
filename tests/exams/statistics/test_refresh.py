"""Stored item and test statistics: the refresh against worked examples and recounts from rows, the command, the admin."""
import dataclasses
import io
import random

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from exams.models import AttemptMode, ExamStatistic, ItemStatistic, Response
from exams.statistics.formulas import ItemObservation, totals_from_observations
from exams.statistics.refresh import item_statistics_refresh
from exams.statistics.totals import totals_for
from tests.exams.statistics.test_totals import make_bank, record
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GUTTMAN = ["AAAA", "AAAB", "AABB", "ABBB", "BBBB"]  # scores 4, 3, 2, 1, 0 on keys A


def test_the_guttman_example_gives_the_textbook_kr20(learner):
    exam, bank = make_bank(questions=4)
    record(user=learner, exam=exam, sheets=[dict(zip(bank, sheet, strict=True)) for sheet in GUTTMAN])
    summary = item_statistics_refresh(exam=exam)
    assert (summary.questions, summary.attempts) == (4, 5)
    test = ExamStatistic.objects.get(exam=exam, first_mock_only=False)
    # Σpq = 0.8, σ² = 2.5, k = 4 (tests/exams/statistics/test_formulas.py works it by hand).
    assert (test.mean, test.median, test.question_count) == (2, 2, 4)
    assert test.kr20 == pytest.approx(0.906667, abs=1e-6) and test.sem == pytest.approx(0.483046, abs=1e-6)
    first = ItemStatistic.objects.get(question=bank[0], first_mock_only=False)
    assert first.n == 5 and first.facility == pytest.approx(0.8) and first.random_guess_score == 0.25
    assert first.sd == pytest.approx((5 * 0.8 * 0.2 / 4) ** 0.5)
    # ⌈0.27·5⌉ = 2: upper (scores 4, 3) both right, lower (1, 0): one right, so D = 0.5.
    assert first.group_size == 2 and first.d_upper_lower == pytest.approx(0.5)
    shares = {c["label"]: c["share"] for c in first.choices}
    assert shares == {"A": 0.8, "B": 0.2, "C": 0.0, "D": 0.0}
    # Nobody picks C or D, but five attempts are too few to call a distractor not functioning.
    assert {c["label"] for c in first.choices if c["non_functioning"]} == set()


def test_sigma_pq_is_the_mean_over_attempts_of_the_items_each_held(learner):
    """Mocks drawn from a bigger bank hold different items: recount Σpq attempt by attempt."""
    rng = random.Random(4)
    exam, bank = make_bank(questions=8)
    exam.question_count = 5
    exam.save()
    sheets = [{q: rng.choice("AB") for q in rng.sample(bank, 5)} for _ in range(40)]
    record(user=learner, exam=exam, sheets=sheets)
    item_statistics_refresh(exam=exam)
    p = {}
    for q in bank:
        held = [sheet[q] for sheet in sheets if q in sheet]
        p[q] = sum(pick == "A" for pick in held) / len(held)
    sum_pq = sum(sum(p[q] * (1 - p[q]) for q in sheet) for sheet in sheets) / len(sheets)
    scores = [sum(pick == "A" for pick in sheet.values()) for sheet in sheets]
    mean = sum(scores) / len(scores)
    variance = sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)
    test = ExamStatistic.objects.get(exam=exam, first_mock_only=False)
    assert test.kr20 == pytest.approx(5 / 4 * (1 - sum_pq / variance))
    assert test.sd == pytest.approx(variance**0.5)


def without_zeros(totals):
    """The SQL reports a choice picked outside a group as 0 there; the reference leaves it out."""
    drop = lambda counts: {k: v for k, v in counts.items() if v}  # noqa: E731
    return dataclasses.replace(totals, upper_counts=drop(totals.upper_counts), lower_counts=drop(totals.lower_counts))


@pytest.mark.parametrize("first_mock_only", [False, True])
def test_the_sql_totals_agree_with_the_reference_all_or_first_mocks(first_mock_only):
    rng = random.Random(7)
    exam, bank = make_bank(questions=5, keys=list("ABCDA"))
    for number in range(6):
        user = UserFactory(username=f"taker{number}")
        sheets = [{q: rng.choice(["", "A", "B", "C", "D", "AB"]) for q in rng.sample(bank, rng.randint(2, 5))}
                  for _ in range(rng.randint(1, 8))]
        record(user=user, exam=exam, sheets=sheets)
    got = totals_for(questions=exam.questions.all(), first_mock_only=first_mock_only)
    for question in bank:
        rows = Response.objects.filter(question=question, attempt__mode=AttemptMode.MOCK).select_related("attempt")
        if first_mock_only:
            firsts = {}
            for attempt in {r.attempt for r in rows} | set(exam.attempts.filter(mode=AttemptMode.MOCK)):
                best = firsts.get(attempt.user_id)
                if best is None or (attempt.finished_at, attempt.pk) < (best.finished_at, best.pk):
                    firsts[attempt.user_id] = attempt
            rows = [r for r in rows if firsts[r.attempt.user_id].pk == r.attempt_id]
        observations = [
            ItemObservation(attempt_id=r.attempt_id, attempt_right=r.attempt.right_count, right=r.is_correct is True,
                            selected=frozenset(r.picks.values_list("choice_id", flat=True)), attempt_score=r.attempt.score)
            for r in rows
        ]
        if not observations:
            assert question.pk not in got
            continue
        assert without_zeros(got[question.pk]) == without_zeros(totals_from_observations(observations)), question


def test_first_mocks_only_keep_each_learners_first(learner, other_learner):
    exam, bank = make_bank(questions=3)
    record(user=learner, exam=exam, sheets=[dict.fromkeys(bank, "B"), dict.fromkeys(bank, "A")])
    record(user=other_learner, exam=exam, sheets=[dict.fromkeys(bank, "A")])
    item_statistics_refresh(exam=exam)
    everyone = ItemStatistic.objects.get(question=bank[0], first_mock_only=False)
    first = ItemStatistic.objects.get(question=bank[0], first_mock_only=True)
    assert (everyone.n, everyone.facility) == (3, pytest.approx(2 / 3))
    assert (first.n, first.facility) == (2, pytest.approx(0.5))
    assert ExamStatistic.objects.get(exam=exam, first_mock_only=True).attempts == 2


def test_a_refresh_replaces_the_rows_and_the_command_reports(learner):
    exam, bank = make_bank(questions=3)
    record(user=learner, exam=exam, sheets=[dict.fromkeys(bank, "A")] * 3)
    item_statistics_refresh(exam=exam)
    before = set(ItemStatistic.objects.values_list("pk", flat=True))
    out = io.StringIO()
    call_command("refresh_item_statistics", "--exam", exam.code, stdout=out)
    assert f"{exam.code}: 3 questions over 3 finished mocks" in out.getvalue()
    assert ItemStatistic.objects.count() == 6 and not before & set(ItemStatistic.objects.values_list("pk", flat=True))
    with pytest.raises(CommandError):
        call_command("refresh_item_statistics", "--exam", "NOPE")


def test_the_admin_list_and_filter_read_the_stored_rows(instructor_client, learner):
    exam, bank = make_bank(questions=4, keys=list("AAAA"))
    url = reverse("admin:exams_question_changelist")
    assert "have not been computed yet" in instructor_client.get(url).content.decode()
    # 40 attempts: the stronger ones pick B on the first question, the weaker ones its key A.
    sheets = []
    for index in range(40):
        strong = index < 20
        sheets.append({bank[0]: "B" if strong else "A", **{q: "A" if strong else "C" for q in bank[1:]}})
    record(user=learner, exam=exam, sheets=sheets)
    page = instructor_client.get(url, {"miskeyed": "yes"}).content.decode()
    assert bank[0].title not in page  # not computed, so not flagged yet
    item_statistics_refresh(exam=exam)
    page = instructor_client.get(url, {"miskeyed": "very"}).content.decode()
    assert bank[0].title in page and "very likely (n = 40, few attempts)" in page and "Item statistics as computed" in page
    assert all(q.title not in page for q in bank[1:])
    panel = instructor_client.get(reverse("admin:exams_question_change", args=[bank[0].pk])).content.decode()
    assert "very likely mis-keyed (n = 40)" in panel and "fewer than 100 attempts" in panel
    assert "Discriminative efficiency" in panel and "Option discrimination" in panel
    assert "not functioning: the stronger attempts pick it more" in panel  # B, the strong half's pick
    exam_page = instructor_client.get(reverse("admin:exams_exam_change", args=[exam.pk])).content.decode()
    assert "KR-20 (k = 4)" in exam_page


def test_the_question_lists_queries_do_not_grow_with_the_page(instructor_client, learner):
    def queries(size: int) -> int:
        exam, bank = make_bank(questions=size)
        record(user=learner, exam=exam, sheets=[dict.fromkeys(bank, "A")] * 2)
        item_statistics_refresh(exam=exam)
        instructor_client.get(reverse("admin:exams_question_changelist"))  # caches filled (permissions, session)
        with CaptureQueriesContext(connection) as captured:
            assert instructor_client.get(reverse("admin:exams_question_changelist"), {"exam__id__exact": exam.pk}).status_code == 200
        return len(captured.captured_queries)

    assert queries(3) == queries(12)
