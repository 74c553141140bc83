"""The shipped NCA-GENM bank stays honest: counts, keys, feedback, spread, own words."""
import subprocess
import sys
from collections import Counter

import pytest
from django.conf import settings
from django.db.models import Count, Q

from exams.models import Choice, Erratum, ErratumPolicy, ErratumStatus, Question, QuestionKind

pytestmark = pytest.mark.django_db

# Twice each domain's share of a 60-question mock, so two mocks can be drawn without a repeat.
MINIMUM_PER_DOMAIN = {
    "Experimentation": 30,
    "Core ML and AI Knowledge": 24,
    "Multimodal Data": 18,
    "Software Development": 18,
    "Data Analysis and Visualization": 12,
    "Performance Optimization": 12,
    "Trustworthy AI": 6,
}


def test_the_exam_matches_the_product(nca_genm):
    assert (nca_genm.question_count, nca_genm.time_limit_minutes, nca_genm.passing_score) == (60, 60, 70)
    assert nca_genm.is_published
    weights = dict(nca_genm.domains.values_list("name", "weight"))
    assert weights == {
        "Experimentation": 25, "Core ML and AI Knowledge": 20, "Multimodal Data": 15,
        "Software Development": 15, "Data Analysis and Visualization": 10,
        "Performance Optimization": 10, "Trustworthy AI": 5,
    }
    assert sum(weights.values()) == 100


def test_each_domain_holds_at_least_twice_its_quota(nca_genm):
    counts = dict(nca_genm.domains.annotate(n=Count("questions", filter=Q(questions__is_active=True))).values_list("name", "n"))
    for name, minimum in MINIMUM_PER_DOMAIN.items():
        assert counts[name] >= minimum, f"{name}: {counts[name]} < {minimum}"
    assert sum(counts.values()) >= 120


def test_every_question_has_a_consistent_key(nca_genm):
    questions = Question.objects.filter(exam=nca_genm).annotate(
        keys=Count("choices", filter=Q(choices__is_correct=True)), n_choices=Count("choices")
    )
    for question in questions:
        assert 4 <= question.n_choices <= 5, question.title
        if question.kind == QuestionKind.SINGLE:
            assert question.keys == 1 and question.choose == 1, question.title
        else:
            assert question.keys == question.choose >= 2, question.title
    assert questions.filter(kind=QuestionKind.MULTIPLE).count() >= 12


def test_every_question_is_explained_and_every_choice_has_feedback(nca_genm):
    assert not Question.objects.filter(exam=nca_genm, explanation="").exists()
    assert not Question.objects.filter(exam=nca_genm, title="").exists()
    assert not Choice.objects.filter(question__exam=nca_genm, feedback="").exists()


def test_no_two_questions_share_a_stem(nca_genm):
    stems = Counter(" ".join(stem.lower().split()) for stem in Question.objects.filter(exam=nca_genm).values_list("stem", flat=True))
    assert [stem for stem, n in stems.items() if n > 1] == []


def test_keys_are_spread_over_positions(nca_genm):
    letters = Counter(
        Choice.objects.filter(question__exam=nca_genm, question__kind=QuestionKind.SINGLE, is_correct=True)
        .values_list("label", flat=True)
    )
    total = sum(letters.values())
    for letter, n in letters.items():
        assert n / total <= 0.35, f"{letter} holds {n} of {total} single-answer keys"


def test_the_seed_erratum_is_confirmed_with_the_corrected_key(nca_genm):
    erratum = Erratum.objects.get(question__exam=nca_genm, status=ErratumStatus.CONFIRMED)
    assert erratum.policy == ErratumPolicy.CREDIT_CORRECTED
    assert list(erratum.published_key.values_list("label", flat=True)) == ["C"]
    assert list(erratum.question.choices.filter(is_correct=True).values_list("label", flat=True)) == ["D"]
    assert "dying" in erratum.question.explanation.lower()


def test_the_bank_repeats_no_sentence_of_the_seeds():
    tool = settings.BASE_DIR.parent / "shared" / "tools" / "seed_overlap.py"
    assert tool.is_file(), f"{tool} is missing: the shared folder sits beside the repository"
    result = subprocess.run([sys.executable, str(tool)], cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "seed overlap: 0 passage" in result.stdout
