"""import_questions and export_questions: summaries, error exits that import nothing, and NCA-GENM round trips."""
import io
import json
from dataclasses import replace

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from exams.bank.formats import default_title, unescape_markdown
from exams.bank.imports import export_bank, write_export
from exams.models import Domain, Erratum, Exam, Question
from tests.factories import ExamFactory

pytestmark = pytest.mark.django_db

GOOD = """\
$CATEGORY: $course$/top/Core ML

::Denoising::What does a denoising step remove?{
  =Predicted noise
  ~Signal
}
"""


@pytest.fixture
def fresh_copy(nca_genm) -> Exam:
    """An empty exam with NCA-GENM's domains, to import the exported bank into."""
    copy = ExamFactory(code="COPY")
    Domain.objects.bulk_create(
        Domain(exam=copy, name=domain.name, weight=domain.weight, order=domain.order)
        for domain in nca_genm.domains.all()
    )
    return copy


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def write(tmp_path, name: str, text: str | bytes):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def test_import_prints_the_summary(exam, tmp_path):
    out = run("import_questions", write(tmp_path, "bank.gift", GOOD), "--format", "gift", "--exam", "GENM")

    assert out.startswith("Created 1 question in GENM.\nPer domain:\n  Core ML: 1 question\n")
    assert "weights are not used for scoring" in out
    assert Question.objects.get().title == "Denoising"


def test_a_dry_run_imports_nothing(exam, tmp_path):
    out = run("import_questions", write(tmp_path, "bank.gift", GOOD), "--format", "gift", "--exam", "GENM", "--dry-run")

    assert out.startswith("Would create 1 question in GENM (dry run: nothing was written).")
    assert not Question.objects.exists()


def test_any_error_exits_non_zero_lists_every_error_by_line_and_imports_nothing(exam, tmp_path):
    text = (
        GOOD + "\n::Broken::No key?{\n  ~a\n  ~b\n}\n\n::Match::Pair {=a -> 1 =b -> 2}\n\n"
        "$CATEGORY: $course$/top/Elsewhere\n\n::Lost::Where?{=x ~y}\n"
    )
    path = write(tmp_path, "bank.gift", text)

    with pytest.raises(CommandError) as refused:
        run("import_questions", path, "--format", "gift", "--exam", "GENM")

    message = str(refused.value)
    assert "Nothing was imported into GENM: 3 errors (listed by line)." in message
    assert "line 8: no choice is marked correct" in message
    assert "line 13: matching question" in message
    assert "line 17: no domain named 'Elsewhere' in GENM" in message
    assert not Question.objects.exists()


def test_a_domain_option_and_skip_unsupported(exam, tmp_path):
    text = "::Match::Pair {=a -> 1 =b -> 2}\n\n::Plain::True?{T}\n"
    path = write(tmp_path, "bank.gift", text)

    out = run(
        "import_questions", path, "--format", "gift", "--exam", "GENM", "--domain", "Data", "--skip-unsupported"
    )

    assert "line 1: skipped matching question" in out
    assert Question.objects.get().domain.name == "Data"


def test_an_unknown_exam_or_domain_is_a_clear_error(exam, tmp_path):
    path = write(tmp_path, "bank.gift", GOOD)

    with pytest.raises(CommandError, match=r"No exam has the code 'NOPE' \(exams: GENM\)\."):
        run("import_questions", path, "--format", "gift", "--exam", "NOPE")
    with pytest.raises(CommandError, match=r"GENM has no domain named 'Nope' \(its domains: 'Core ML', 'Data'\)\."):
        run("import_questions", path, "--format", "gift", "--exam", "GENM", "--domain", "Nope")
    with pytest.raises(CommandError, match="No such file"):
        run("import_questions", str(tmp_path / "missing.gift"), "--format", "gift", "--exam", "GENM")
    with pytest.raises(CommandError, match="No exam has the code 'NOPE'"):
        run("export_questions", "--exam", "NOPE", "--format", "json")
    assert not Question.objects.exists()


def test_a_file_that_is_not_utf8_is_refused(exam, tmp_path):
    path = write(tmp_path, "bank.gift", GOOD.replace("remove", "enlève").encode("cp1252"))

    with pytest.raises(CommandError, match=r"line 3: The file is not UTF-8: byte 0xE8"):
        run("import_questions", path, "--format", "gift", "--exam", "GENM")
    assert not Question.objects.exists()


def test_export_writes_to_stdout_or_a_file(nca_genm, tmp_path):
    out = run("export_questions", "--exam", "NCA-GENM", "--format", "json")
    assert json.loads(out)["exam"] == "NCA-GENM"
    assert len(json.loads(out)["questions"]) == nca_genm.questions.active().count()

    target = tmp_path / "bank.gift"
    Question.objects.filter(exam=nca_genm, exhibit__contains="](exhibit:").update(is_active=False)
    said = run("export_questions", "--exam", "NCA-GENM", "--format", "gift", "--output", str(target))
    assert said == f"Wrote Moodle GIFT for NCA-GENM to {target}.\n"
    assert target.read_text(encoding="utf-8") == write_export(exam=nca_genm, fmt="gift")


def test_gift_export_refuses_image_exhibits_by_name_and_writes_nothing(nca_genm, tmp_path):
    target = tmp_path / "bank.gift"
    images = Question.objects.active().filter(exam=nca_genm, exhibit__contains="](exhibit:")
    assert images.count() >= 8
    with pytest.raises(CommandError) as refused:
        run("export_questions", "--exam", "NCA-GENM", "--format", "gift", "--output", str(target))
    for question in images:
        name = question.exhibit.split("](exhibit:", 1)[1].split(")", 1)[0]
        assert f"GIFT cannot carry its image exhibit {name!r}" in str(refused.value)
    assert not target.exists()


def test_aiken_export_of_a_bank_with_multiple_select_questions_lists_them(nca_genm, tmp_path):
    target = tmp_path / "bank.txt"

    with pytest.raises(CommandError) as refused:
        run("export_questions", "--exam", "NCA-GENM", "--format", "aiken", "--output", str(target))

    multiple = nca_genm.questions.active().filter(kind="multiple").count()
    assert str(refused.value).count("Aiken holds single-answer questions only") == multiple
    assert not target.exists()


def round_trip(*, source: Exam, target: Exam, fmt: str, tmp_path, extra=()) -> None:
    path = tmp_path / f"bank.{fmt}"
    run("export_questions", "--exam", source.code, "--format", fmt, "--output", str(path))
    run("import_questions", str(path), "--format", fmt, "--exam", target.code, *extra)


def test_json_round_trip_of_the_nca_genm_bank_is_lossless(nca_genm, fresh_copy, tmp_path):
    # One draft among the ready questions: status travels too (a draft stays a draft).
    draft = nca_genm.questions.active().order_by("pk").last()
    Question.objects.filter(pk=draft.pk).update(status="draft")
    before = export_bank(exam=nca_genm)

    round_trip(source=nca_genm, target=fresh_copy, fmt="json", tmp_path=tmp_path)

    after = export_bank(exam=fresh_copy)
    assert len(after) == len(before) == nca_genm.questions.filter(is_active=True).count()
    assert [question.status for question in after] == [question.status for question in before]
    assert [question.title for question in after if question.status == "draft"] == [draft.title]
    for original, imported in zip(before, after):
        # Field by field first, so a failure names what was lost.
        assert (imported.title, imported.domain, imported.topic) == (original.title, original.domain, original.topic)
        assert (imported.exhibit, imported.sources, imported.exclusion_group) == (
            original.exhibit, original.sources, original.exclusion_group
        )
        assert imported.images == original.images
        assert imported.stem == original.stem
        assert imported.explanation == original.explanation
        assert imported.kind == original.kind and imported.choose == original.choose
        assert imported.keep_order == original.keep_order
        assert imported.choices == original.choices  # text, key and feedback of each, in order
        assert imported.errata == original.errata
        assert (imported.difficulty, imported.reviewed_on) == (original.difficulty, original.reviewed_on)
    assert imported == original
    assert {question.difficulty for question in after} == {"easy", "medium", "hard"}
    assert all(question.reviewed_on is not None for question in after)
    original_count = Erratum.objects.filter(question__exam=nca_genm, question__is_active=True).count()
    assert sum(len(question.errata) for question in after) == original_count == 1
    erratum = Erratum.objects.get(question__exam=fresh_copy)
    original_erratum = Erratum.objects.get(question__exam=nca_genm)
    assert erratum.published_key.get().text == original_erratum.published_key.get().text
    assert (erratum.status, erratum.policy, erratum.note) == (
        original_erratum.status, original_erratum.policy, original_erratum.note
    )


def test_gift_round_trip_keeps_everything_gift_can_hold(nca_genm, fresh_copy, tmp_path):
    # Image exhibits cannot be written; text exhibits come back as part of the stem.
    Question.objects.filter(exam=nca_genm, exhibit__contains="](exhibit:").update(is_active=False)
    before = export_bank(exam=nca_genm)

    round_trip(source=nca_genm, target=fresh_copy, fmt="gift", tmp_path=tmp_path)

    after = export_bank(exam=fresh_copy)
    assert len(after) == len(before)
    assert sum(bool(original.topic) for original in before) == len(before)
    for original, imported in zip(before, after):
        # GIFT has no place for keep_order, errata, exclusion groups, difficulty, a review
        # date or a status (an import gives medium, none and a draft); everything else comes back.
        stem = f"{original.exhibit.strip()}\n\n{original.stem}" if original.exhibit else original.stem
        expected = replace(
            original, keep_order=False, errata=(), exclusion_group="", exhibit="", stem=stem, difficulty="medium", reviewed_on=None,
            status="draft",
        )
        assert imported == expected, original.title


def test_moodle_xml_round_trip_keeps_everything_but_errata(nca_genm, fresh_copy, tmp_path):
    # An active question: the export holds the active bank (the third edition retired pk 1).
    Question.objects.filter(pk=Question.objects.filter(exam=nca_genm, is_active=True).order_by("pk").first().pk).update(idnumber="GENM & 1")
    before = export_bank(exam=nca_genm)
    assert any(question.images for question in before)  # image exhibits travel in the file

    round_trip(source=nca_genm, target=fresh_copy, fmt="xml", tmp_path=tmp_path)

    after = export_bank(exam=fresh_copy)
    assert len(after) == len(before)
    for original, imported in zip(before, after):
        # Moodle XML has no place for errata, difficulty, a review date or a status: medium, none, a draft.
        assert imported == replace(original, errata=(), difficulty="medium", reviewed_on=None, status="draft"), original.title
    assert [question.idnumber for question in after if question.idnumber] == ["GENM & 1"]


def test_aiken_round_trip_of_the_single_answer_questions(nca_genm, fresh_copy, tmp_path):
    singles = Question.objects.filter(exam=nca_genm, kind="single", exhibit="", is_active=True)
    before = export_bank(exam=nca_genm, questions=singles)
    aiken = write_export(exam=nca_genm, fmt="aiken", questions=singles)
    path = tmp_path / "bank.txt"
    path.write_text(aiken, encoding="utf-8")

    run("import_questions", str(path), "--format", "aiken", "--exam", "COPY", "--domain", "Experimentation")

    after = export_bank(exam=fresh_copy)
    blocks = [block.splitlines() for block in aiken.split("\n\n")]
    assert len(after) == len(before) == len(blocks) == singles.count()
    for original, imported, block in zip(before, after, blocks):
        stem, *options, answer = block
        # Aiken holds one line of plain text per stem and choice, and one key.
        assert unescape_markdown(imported.stem) == stem
        assert imported.title == default_title(stem)
        texts = [unescape_markdown(choice.text) for choice in imported.choices]
        assert [f"{chr(65 + index)}) {text}" for index, text in enumerate(texts)] == options
        assert [choice.is_correct for choice in imported.choices] == [choice.is_correct for choice in original.choices]
        assert answer == f"ANSWER: {chr(65 + [choice.is_correct for choice in original.choices].index(True))}"
        assert (imported.kind, imported.choose, imported.domain) == ("single", 1, "Experimentation")
        assert imported.explanation == "" and all(choice.feedback == "" for choice in imported.choices)
        assert (imported.difficulty, imported.reviewed_on, imported.status) == ("medium", None, "draft")
    # Exporting the imported copy gives the same Aiken file again.
    assert write_export(exam=fresh_copy, fmt="aiken") == aiken


def test_check_bank_bounds_lists_questions_outside_the_bounds(nca_genm):
    from exams.models import Choice

    assert "within the bank's bounds" in run("check_bank_bounds")
    question = Question.objects.filter(exam=nca_genm, is_active=True).order_by("pk").first()
    Choice.objects.filter(question=question).update(text="x" * 1_001)
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("check_bank_bounds", stdout=out, stderr=io.StringIO())
    assert f"question {question.pk}" in out.getvalue() and "longer than 1,000 characters" in out.getvalue()
