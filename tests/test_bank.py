"""The shipped NCA-GENM bank stays honest: counts, keys, feedback, spread, own words."""
import json
import re
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db.models import Count, Q

from exams.bank import cues
from exams.bank.formats import DIFFICULTIES, exhibit_images
from exams.models import (
    AttemptMode,
    Choice,
    Difficulty,
    Erratum,
    ErratumPolicy,
    ErratumStatus,
    ExhibitImage,
    Question,
    QuestionKind,
)
from exams.room.services import attempt_finish, attempt_start
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# Each domain's weight's share of 460 questions (the second edition's floor).
MINIMUM_PER_DOMAIN = {
    "Experimentation": 115,
    "Core ML and AI Knowledge": 92,
    "Multimodal Data": 69,
    "Software Development": 69,
    "Data Analysis and Visualization": 46,
    "Performance Optimization": 46,
    "Trustworthy AI": 23,
}
REVIEW_ROW = re.compile(r"^\| (\d+) \| (recall|concept|application) \| (?:easy|medium|hard) \| (yes|no) \|", re.MULTILINE)
REVIEW_DIFFICULTY = re.compile(r"^\| (\d+) \| (?:recall|concept|application) \| (easy|medium|hard) \| (?:yes|no) \|", re.MULTILINE)
# Item 4 of issue 25: ten mocks without a repeat. Each domain's share of a 60-question mock
# (weights 25/20/15/15/10/10/5) times ten, counting one question per exclusion group.
TEN_MOCKS_PER_DOMAIN = {
    "Experimentation": 150,
    "Core ML and AI Knowledge": 120,
    "Multimodal Data": 90,
    "Software Development": 90,
    "Data Analysis and Visualization": 60,
    "Performance Optimization": 60,
    "Trustworthy AI": 30,
}
STOP_WORDS_FILE = settings.BASE_DIR / "tests" / "bank_cue_stop_words.txt"
# "- [Title](https://url) — checked against <product and version>, 2026-11" (docs/BANK_AUTHORING.md).
SOURCE_LINE = re.compile(
    r"^- \[(?P<title>[^\n]+)\]\((?P<url>https?://[^\s]+)\) — checked against (?P<version>[^\n]+), (?P<month>20\d\d-(?:0[1-9]|1[0-2]))$"
)
# What "checked against" must name: a version (it holds a digit: "NeMo Framework 25.09",
# "Triton 2.59", "cmudict 0.7b") or, for a page that has no version, say so in one of these ways.
UNVERSIONED = re.compile(r"\(unversioned\)|\bmain branch\b|\bmain$|\bnightly\b|\bstable documentation\b|\bonline edition\b")


def stop_words() -> frozenset[str]:
    lines = STOP_WORDS_FILE.read_text().splitlines()
    return frozenset(word for line in lines if not line.startswith("#") for word in cues.distinctive_words(line))


def source_problem(line: str) -> str | None:
    """Why one line of a question's sources is not a versioned URL source, or None."""
    match = SOURCE_LINE.match(line)
    if match is None:
        return "not in the form `- [Title](https://url) — checked against <product version>, YYYY-MM`"
    if not (re.search(r"\d", match["version"]) or UNVERSIONED.search(match["version"])):
        return f"no version in {match['version']!r}"
    return None


def active(exam):
    return Question.objects.filter(exam=exam, is_active=True)


def cue_questions(exam) -> list[cues.CueQuestion]:
    questions = active(exam).select_related("domain").prefetch_related("choices")
    result = []
    for question in questions:
        choices = sorted(question.choices.all(), key=lambda c: (c.order, c.pk))
        result.append(cues.CueQuestion(
            id=question.pk, domain=question.domain.name, stem=question.stem,
            choices=tuple(c.text for c in choices), keys=frozenset(i for i, c in enumerate(choices) if c.is_correct),
            exclusion_group=question.exclusion_group, labels=tuple(c.label for c in choices), topic=question.topic,
        ))
    return result


def review_marks() -> dict[int, tuple[str, bool]]:
    text = (settings.BASE_DIR / "docs" / "BANK_REVIEW.md").read_text()
    return {int(pk): (level, nvidia == "yes") for pk, level, nvidia in REVIEW_ROW.findall(text)}


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


def test_each_domain_holds_at_least_its_share_of_460_questions(nca_genm):
    counts = dict(nca_genm.domains.annotate(n=Count("questions", filter=Q(questions__is_active=True))).values_list("name", "n"))
    for name, minimum in MINIMUM_PER_DOMAIN.items():
        assert counts[name] >= minimum, f"{name}: {counts[name]} < {minimum}"
    assert sum(counts.values()) >= 460


def test_every_active_question_has_a_topic_sources_and_a_listed_topic_holds_four(nca_genm):
    questions = active(nca_genm)
    assert list(questions.filter(topic="").values_list("pk", flat=True)) == []
    assert list(questions.filter(sources="").values_list("pk", flat=True)) == []
    small = [
        (row["domain__name"], row["topic"], row["n"])
        for row in questions.values("domain__name", "topic").annotate(n=Count("pk")) if row["n"] < 4
    ]
    assert small == [], small


def test_multiple_select_is_12_to_20_percent_of_each_domain(nca_genm):
    for domain in nca_genm.domains.all():
        questions = active(nca_genm).filter(domain=domain)
        share = questions.filter(kind=QuestionKind.MULTIPLE).count() / questions.count()
        assert 0.12 <= share <= 0.20, f"{domain.name}: {share:.0%}"


def test_levels_and_nvidia_marks_are_recorded_and_hold_their_shares(nca_genm):
    marks = review_marks()
    questions = list(active(nca_genm).select_related("domain"))
    assert [q.pk for q in questions if q.pk not in marks] == [], "every active question has a row in docs/BANK_REVIEW.md"
    for domain in nca_genm.domains.all():
        mine = [q for q in questions if q.domain_id == domain.pk]
        applied = sum(marks[q.pk][0] == "application" for q in mine) / len(mine)
        assert applied >= 0.70, f"{domain.name}: {applied:.0%} application or scenario items"
    nvidia = sum(marks[q.pk][1] for q in questions) / len(questions)
    assert nvidia >= 0.30, f"{nvidia:.0%} need NVIDIA knowledge"


def test_exhibits_are_shown_and_their_images_are_in_the_bank(nca_genm):
    with_exhibit = list(active(nca_genm).exclude(exhibit=""))
    images = [q for q in with_exhibit if "](exhibit:" in q.exhibit]
    assert len(with_exhibit) >= 40 and len(images) >= 20, (len(with_exhibit), len(images))
    stored = {image.name: image for image in ExhibitImage.objects.all()}
    for question in images:
        for name in exhibit_images(question.exhibit):
            assert name in stored, f"Q{question.pk}: {name} is not loaded"
            assert stored[name].content_type in ("image/png", "image/jpeg", "image/webp")
            assert len(stored[name].data) <= 500_000
    for question in with_exhibit:
        text = question.exhibit.strip()
        fenced = text.startswith("```") and text.endswith("```") and len(text.splitlines()) >= 5
        table = all(line.strip().startswith("|") for line in text.splitlines()) and len(text.splitlines()) >= 4
        image = text.startswith("![") and len(exhibit_images(text)) == 1
        assert fenced or table or image, f"Q{question.pk}: an exhibit is one fenced block, one table or one image"


def test_the_blueprint_lists_the_active_questions_of_each_topic(nca_genm):
    text = (settings.BASE_DIR / "docs" / "BLUEPRINT.md").read_text()
    documented: dict[tuple[str, str], int] = {}
    domain = None
    for line in text.splitlines():
        if line.startswith("## "):
            domain = line[3:].rsplit(" (", 1)[0]
        elif (match := re.match(r"^\| (.+) \| (\d+) \|$", line)) and domain:
            documented[(domain, match[1])] = int(match[2])
    actual = {
        (row["domain__name"], row["topic"] or "No topic"): row["n"]
        for row in active(nca_genm).values("domain__name", "topic").annotate(n=Count("pk"))
    }
    assert documented == actual, "docs/BLUEPRINT.md is out of date: python3 tools/bank_docs.py"


def test_the_key_is_neither_the_longest_nor_the_shortest_choice_too_often(nca_genm):
    for domain, (longest, shortest, n) in cues.length_cue_by_domain(cue_questions(nca_genm)).items():
        assert longest <= 0.30 and shortest <= 0.30, f"{domain}: key longest {longest:.0%}, shortest {shortest:.0%} of {n}"


def test_absolute_words_mark_keys_and_distractors_alike(nca_genm):
    keys, distractors, _ = cues.absolute_word_shares(cue_questions(nca_genm))
    assert abs(keys - distractors) <= 0.05, (keys, distractors)


def test_the_key_does_not_echo_the_stem_more_than_the_distractors(nca_genm):
    share, echoing = cues.stem_echo_share(cue_questions(nca_genm))
    assert share >= 0.80, f"{share:.0%}; out-echoing keys: {echoing}"


def test_no_two_active_questions_are_near_duplicates_outside_an_exclusion_group(nca_genm):
    assert cues.near_duplicates(cue_questions(nca_genm)) == []


def test_the_cue_measures_catch_what_they_are_meant_to():
    """The measures themselves, on planted cues, so a test above cannot pass by measuring nothing."""
    long_key = cues.CueQuestion(1, "D", "Which?", ("a", "bb", "a much longer and careful key", "cc"), frozenset({2}))
    tie = cues.CueQuestion(2, "D", "Which?", ("aaa", "bbb", "c"), frozenset({0}))
    assert cues.length_cue_by_domain([long_key, tie])["D"] == (0.75, 0.0, 2)
    absolute = cues.CueQuestion(3, "D", "Which?", ("It always works", "It works here"), frozenset({1}))
    assert cues.absolute_word_shares([absolute])[:2] == (0.0, 1.0)
    echo = cues.CueQuestion(4, "D", "Why does dynamic batching raise throughput?", ("dynamic batching raises throughput", "cache"), frozenset({0}))
    assert cues.stem_echo_share([echo]) == (0.0, [4])
    twin = cues.CueQuestion(5, "D", "Why does dynamic batching raise throughput?", ("dynamic batching raises throughput", "x"), frozenset({0}))
    other = cues.CueQuestion(6, "D", "Which colour is the sky on a clear day?", ("blue", "green"), frozenset({0}))
    assert [pair[1:] for pair in cues.near_duplicates([echo, twin, other])] == [(4, 5)]
    grouped = [cues.CueQuestion(**{**vars(q), "exclusion_group": "g"}) for q in (echo, twin)]
    assert cues.near_duplicates([*grouped, other]) == []


def test_the_key_out_shares_the_distractors_in_distinctive_stem_words_in_at_most_a_tenth(nca_genm):
    """Per domain, a key that shares more of the stem's distinctive words than every distractor
    (for multiple-select, the key that shares fewest) is a cue in at most 10% of questions."""
    for domain, (share, cued) in cues.distinctive_echo_by_domain(cue_questions(nca_genm), stop_words()).items():
        assert share <= 0.10, f"{domain}: {share:.0%} of questions; keys that out-share the distractors: {cued}"


def test_each_domain_holds_ten_mocks_counting_one_per_exclusion_group(nca_genm):
    units: dict[str, set] = {}
    for pk, domain, group in active(nca_genm).values_list("pk", "domain__name", "exclusion_group"):
        units.setdefault(domain, set()).add(group or pk)
    short = {domain: (len(units.get(domain, ())), needed) for domain, needed in TEN_MOCKS_PER_DOMAIN.items() if len(units.get(domain, ())) < needed}
    assert short == {}, f"domain: (questions counting one per exclusion group, ten mocks' quota) {short}"


def test_every_question_has_a_difficulty_and_a_review_date_and_each_domain_spreads_them(nca_genm):
    shipped = [
        obj for path in sorted((settings.BASE_DIR / "fixtures" / "bank").glob("*.json"))
        for obj in json.loads(path.read_text()) if obj["model"] == "exams.question"
    ]
    unset = [obj["pk"] for obj in shipped if not (obj["fields"].get("difficulty") and obj["fields"].get("reviewed_on"))]
    assert unset == [], "every shipped question states its difficulty and reviewed_on"
    assert list(Question.objects.filter(exam=nca_genm, reviewed_on__isnull=True).values_list("pk", flat=True)) == []
    logged = {int(pk): level for pk, level in REVIEW_DIFFICULTY.findall((settings.BASE_DIR / "docs" / "BANK_REVIEW.md").read_text())}
    questions = list(active(nca_genm).select_related("domain"))
    assert [q.pk for q in questions if logged.get(q.pk) != q.difficulty] == [], "the review log's Difficulty column is the question's"
    for domain in nca_genm.domains.all():
        mine = Counter(q.difficulty for q in questions if q.domain_id == domain.pk)
        total = sum(mine.values())
        if total < 12:
            continue
        easy, hard = mine[Difficulty.EASY] / total, mine[Difficulty.HARD] / total
        assert 0.20 <= easy <= 0.30 and 0.20 <= hard <= 0.30, f"{domain.name}: {easy:.0%} easy, {hard:.0%} hard of {total}"


def test_every_sources_line_is_a_url_with_the_version_it_was_checked_against(nca_genm):
    problems = [
        (pk, line, problem)
        for pk, sources in Question.objects.filter(exam=nca_genm).values_list("pk", "sources")
        for line in sources.splitlines() if line.strip() and (problem := source_problem(line.strip()))
    ]
    assert problems == [], problems[:10]
    assert not Question.objects.filter(exam=nca_genm, sources="").exists()


def test_the_third_edition_checks_catch_what_they_are_meant_to():
    """The distinctive-word measure and the sources parser on planted cases."""
    assert tuple(Difficulty.values) == DIFFICULTIES, "exams.bounds mirrors the model's difficulties"
    stop = stop_words()
    assert "which" in stop and "team" in stop and "shard" not in stop
    echo = cues.CueQuestion(
        1, "D", "Which reader streams the WebDataset shards?",
        ("fn.readers.webdataset over the shards", "fn.readers.file", "fn.readers.tfrecord", "fn.readers.caffe"), frozenset({0}),
    )
    assert cues.key_shares_distinctive_stem_words(echo, stop)
    topical = cues.CueQuestion(**{**vars(echo), "id": 2, "topic": "WebDataset shards"})
    assert not cues.key_shares_distinctive_stem_words(topical, stop), "topic words are not distinctive"
    framed = cues.CueQuestion(3, "D", "Which approach should the team choose?", ("The team's approach", "x", "y", "z"), frozenset({0}))
    assert not cues.key_shares_distinctive_stem_words(framed, stop), "stop words are not distinctive"
    weakest = cues.CueQuestion(
        4, "D", "Which two settings reduce padding waste? (Choose two.)",
        ("bucketing reduces padding waste", "sort by length", "a bigger learning rate", "more epochs"), frozenset({0, 1}),
    )
    assert not cues.key_shares_distinctive_stem_words(weakest, stop), "multiple-select is judged by its weakest key"
    by_domain = cues.distinctive_echo_by_domain([echo, framed], stop)
    assert by_domain == {"D": (0.5, [1])}
    good = "- [NeMo Framework User Guide, \"Recipes\"](https://docs.nvidia.com/nemo-framework/user-guide/latest/) — checked against NeMo Framework 25.09, 2026-11"
    assert source_problem(good) is None
    assert source_problem("- [GitHub Docs, \"Secrets\"](https://docs.github.com/x) — checked against GitHub Docs (unversioned), 2026-11") is None
    assert "no version" in source_problem(good.replace("NeMo Framework 25.09", "NeMo Framework docs"))
    assert "not in the form" in source_problem('- NVIDIA Triton Inference Server documentation, "Dynamic Batcher"')
    assert "not in the form" in source_problem(good.replace(", 2026-11", ""))
    assert "not in the form" in source_problem(good.replace("https://docs.nvidia.com/nemo-framework/user-guide/latest/", "docs"))


def test_a_draw_takes_at_most_one_question_of_each_exclusion_group(nca_genm):
    grouped = active(nca_genm).exclude(exclusion_group="").values_list("pk", "exclusion_group")
    group_of = dict(grouped)
    assert len(set(group_of.values())) >= 10
    users = [UserFactory(username=f"drawer{n}") for n in range(3)]
    for user in users:
        for mode in (AttemptMode.MOCK, AttemptMode.PRACTICE):
            started = attempt_start(user=user, exam=nca_genm, mode=mode, count=60).attempt
            groups = [group_of[q] for q in started.responses.values_list("question_id", flat=True) if q in group_of]
            assert len(groups) == len(set(groups)), f"{mode}: {Counter(groups).most_common(3)}"
            attempt_finish(attempt=started, expired=False)


def test_two_learners_take_four_mocks_each_without_a_repeated_question(nca_genm):
    for name in ("first", "second"):
        user = UserFactory(username=f"four-mocks-{name}")
        seen: set[int] = set()
        for _ in range(4):
            attempt = attempt_start(user=user, exam=nca_genm, mode=AttemptMode.MOCK).attempt
            drawn = set(attempt.responses.values_list("question_id", flat=True))
            assert len(drawn) == 60 and not drawn & seen
            seen |= drawn
            attempt_finish(attempt=attempt, expired=False)


def test_load_bank_upgrades_in_place_idempotently_and_says_what_it_changed(nca_genm):
    question = active(nca_genm).order_by("pk").first()
    shipped = (question.stem, question.difficulty, question.reviewed_on)
    # As a second-edition database holds it: the stem of the day, the default difficulty, no review date.
    other_level = Difficulty.HARD if question.difficulty != Difficulty.HARD else Difficulty.EASY
    Question.objects.filter(pk=question.pk).update(stem="An instructor's draft.", difficulty=other_level, reviewed_on=None)
    older = active(nca_genm).exclude(pk=question.pk).order_by("pk")[1]
    Question.objects.filter(pk=older.pk).update(difficulty=Difficulty.MEDIUM if older.difficulty != Difficulty.MEDIUM else Difficulty.EASY, reviewed_on=None)
    # Marked reviewed in the admin after the edition was checked: a later date than the fixture's stays.
    marked = active(nca_genm).exclude(pk__in=[question.pk, older.pk]).order_by("pk")[2]
    later = marked.reviewed_on + timedelta(days=30)
    Question.objects.filter(pk=marked.pk).update(reviewed_on=later)
    retired = Question.objects.filter(exam=nca_genm, is_active=False).order_by("pk").first()
    Question.objects.filter(pk=retired.pk).update(is_active=True)
    newest = active(nca_genm).order_by("-pk").first()
    newest.choices.all().delete()
    Question.objects.filter(pk=newest.pk).delete()
    ExhibitImage.objects.order_by("name").first().delete()

    out = StringIO()
    call_command("load_bank", stdout=out)
    said = out.getvalue()
    assert "1 questions added" in said and "1 exhibit images added" in said and f"questions retired ({retired.pk})" in said
    assert "2 questions updated" in said
    restored = Question.objects.get(pk=question.pk)
    assert (restored.stem, restored.difficulty, restored.reviewed_on) == shipped and shipped[2] is not None
    assert Question.objects.filter(pk=older.pk, difficulty=older.difficulty, reviewed_on=older.reviewed_on).exists()
    assert Question.objects.get(pk=marked.pk).reviewed_on == later
    assert not Question.objects.get(pk=retired.pk).is_active
    assert Question.objects.get(pk=newest.pk).choices.count() >= 4

    out = StringIO()
    call_command("load_bank", stdout=out)
    assert "nothing to change" in out.getvalue()


def test_every_question_has_a_consistent_key(nca_genm):
    questions = active(nca_genm).annotate(
        keys=Count("choices", filter=Q(choices__is_correct=True)), n_choices=Count("choices")
    )
    for question in questions:
        assert 4 <= question.n_choices <= 5, question.title
        if question.kind == QuestionKind.SINGLE:
            assert question.keys == 1 and question.choose == 1, question.title
        else:
            assert question.keys == question.choose >= 2, question.title
    assert questions.filter(kind=QuestionKind.MULTIPLE).count() >= 60


def test_every_question_is_explained_and_every_choice_has_feedback(nca_genm):
    assert not Question.objects.filter(exam=nca_genm, explanation="").exists()
    assert not Question.objects.filter(exam=nca_genm, title="").exists()
    assert not Choice.objects.filter(question__exam=nca_genm, feedback="").exists()


def test_no_two_questions_share_a_stem(nca_genm):
    stems = Counter(" ".join(stem.lower().split()) for stem in active(nca_genm).values_list("stem", flat=True))
    assert [stem for stem, n in stems.items() if n > 1] == []


def test_keys_are_spread_over_positions(nca_genm):
    letters = Counter(
        Choice.objects.filter(question__exam=nca_genm, question__is_active=True, question__kind=QuestionKind.SINGLE, is_correct=True)
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
