"""The import service: all or nothing, domains by name, errata, dry runs, the summary; export in fixed queries."""
import json
from dataclasses import replace

import pytest

from exams.bank.formats import FormatError, ParseResult
from exams.bank.imports import WEIGHTS_NOTE, export_bank, import_bank, parse_upload, write_export
from exams.models import Choice, Erratum, ErratumStatus, Question
from tests.factories import ExamFactory, QuestionFactory

pytestmark = pytest.mark.django_db

GIFT = """\
$CATEGORY: $course$/top/Core ML

::Denoising::What does a **denoising** step remove?{
  =Predicted noise#Yes.
  ~Signal#No.
  ~Nothing
  ####The model predicts the noise.
}

$CATEGORY: $course$/top/Data

::Charts::Which charts profile an image dataset?{
  ~%50%Class histogram
  ~%50%Resolution scatter
  ~%-100%Pie of file names
}
"""


def gift(text: str, *, skip_unsupported: bool = False) -> ParseResult:
    return parse_upload(data=text.encode(), fmt="gift", skip_unsupported=skip_unsupported)


def test_it_creates_questions_and_choices_per_domain(exam):
    summary = import_bank(exam=exam, result=gift(GIFT))

    assert summary.ok and summary.written
    assert [(plan.name, len(plan.questions)) for plan in summary.domains] == [("Core ML", 1), ("Data", 1)]
    denoising = Question.objects.get(title="Denoising")
    assert denoising.domain.name == "Core ML"
    assert denoising.stem == "What does a **denoising** step remove?"
    assert denoising.explanation == "The model predicts the noise."
    assert (denoising.kind, denoising.choose, denoising.is_active) == ("single", 1, True)
    rows = list(denoising.choices.order_by("order").values_list("label", "order", "text", "is_correct", "feedback"))
    assert rows == [
        ("A", 1, "Predicted noise", True, "Yes."),
        ("B", 2, "Signal", False, "No."),
        ("C", 3, "Nothing", False, ""),
    ]
    charts = Question.objects.get(title="Charts")
    assert (charts.domain.name, charts.kind, charts.choose) == ("Data", "multiple", 2)
    assert list(charts.choices.filter(is_correct=True).values_list("label", flat=True)) == ["A", "B"]
    assert str(summary).startswith("Created 2 questions in GENM.")


def test_one_bad_question_and_nothing_is_written(exam):
    text = GIFT + "\n::Broken::Which one?{\n  ~a\n  ~b\n}\n"

    summary = import_bank(exam=exam, result=gift(text))

    assert not summary.ok and not summary.written
    assert [error.line for error in summary.errors] == [18]
    assert "line 18: no choice is marked correct" in str(summary)
    assert summary.headline == "Nothing was imported into GENM: 1 error (listed by line)."
    assert not Question.objects.exists() and not Choice.objects.exists()


def test_parse_errors_alone_also_write_nothing(exam):
    result = gift(GIFT)
    result = ParseResult(questions=result.questions, errors=(FormatError(line=40, message="odd"),))

    summary = import_bank(exam=exam, result=result)

    assert not summary.ok
    assert not Question.objects.exists()


def test_a_question_that_breaks_the_bank_rules_is_an_error_even_from_a_hand_made_result(exam):
    [good, *_] = gift(GIFT).questions
    keyless = replace(good, line=7, choices=tuple(replace(choice, is_correct=False) for choice in good.choices))

    summary = import_bank(exam=exam, result=ParseResult(questions=(good, keyless)))

    assert [str(error) for error in summary.errors] == ["line 7: no choice is marked correct"]
    assert [len(plan.questions) for plan in summary.domains] == [1]
    assert not Question.objects.exists()


def test_an_unknown_domain_is_an_error_naming_the_question_line(exam):
    text = GIFT.replace("top/Data", "top/Visualisation")

    summary = import_bank(exam=exam, result=gift(text))

    assert [str(error) for error in summary.errors] == [
        "line 12: no domain named 'Visualisation' in GENM (give a default domain to import it anyway)"
    ]
    assert any("GENM's domains are: 'Core ML', 'Data'" in note for note in summary.notes)
    assert not Question.objects.exists()


def test_a_default_domain_takes_unknown_and_missing_domains(exam):
    text = GIFT.replace("top/Data", "top/Visualisation") + "\n$CATEGORY: $course$/top\n\nPlain?{T}\n"

    summary = import_bank(exam=exam, result=gift(text), default_domain="Data")

    assert summary.written
    assert [(plan.name, len(plan.questions)) for plan in summary.domains] == [("Core ML", 1), ("Data", 2)]
    assert set(Question.objects.filter(domain__name="Data").values_list("title", flat=True)) == {"Charts", "Plain?"}
    assert "1 question named the domain 'Visualisation', which GENM does not have; it goes to 'Data'." in summary.notes


def test_a_default_domain_the_exam_lacks_is_an_error(exam):
    summary = import_bank(exam=exam, result=gift(GIFT), default_domain="Nope")

    assert [str(error) for error in summary.errors] == [
        "GENM has no domain named 'Nope' (its domains: 'Core ML', 'Data')."
    ]
    assert not Question.objects.exists()


def test_domains_match_ignoring_case(exam):
    summary = import_bank(exam=exam, result=gift(GIFT.replace("top/Data", "top/DATA")))

    assert summary.written
    assert Question.objects.get(title="Charts").domain.name == "Data"


def test_aiken_questions_need_a_default_domain(exam):
    result = parse_upload(data=b"Pick one?\nA. yes\nB. no\nANSWER: A\n", fmt="aiken", skip_unsupported=False)

    refused = import_bank(exam=exam, result=result)
    assert [str(error) for error in refused.errors] == [
        "line 1: the file names no domain for this question: give a default domain of GENM to import it"
    ]

    imported = import_bank(exam=exam, result=result, default_domain="Core ML")
    assert imported.written
    assert Question.objects.get().domain.name == "Core ML"


def test_errata_from_json_keep_their_published_key(exam):
    document = {
        "format": "certprep-bank",
        "version": 1,
        "exam": "ELSEWHERE",
        "questions": [
            {
                "title": "ReLU",
                "stem": "What goes wrong with ReLU?",
                "kind": "single",
                "domain": "Core ML",
                "choices": [
                    {"label": "A", "text": "Unsuitable for deep nets", "is_correct": False, "feedback": "No."},
                    {"label": "B", "text": "Dying units", "is_correct": True},
                    {"label": "C", "text": "Nothing", "is_correct": False},
                ],
                "errata": [
                    {"published_key": ["A"], "note": "Key was A.", "status": "confirmed", "policy": "credit_corrected"},
                    {"published_key": ["A", "C"], "source": "learners", "status": "reported"},
                ],
            }
        ],
    }
    result = parse_upload(data=json.dumps(document).encode(), fmt="json", skip_unsupported=False)

    summary = import_bank(exam=exam, result=result)

    assert summary.written and summary.erratum_count == 2
    assert "The file was exported from ELSEWHERE; its questions go to GENM." in summary.notes
    confirmed = Erratum.objects.get(status=ErratumStatus.CONFIRMED)
    assert (confirmed.note, confirmed.source, confirmed.policy) == ("Key was A.", "imported", "credit_corrected")
    assert confirmed.decided_at is not None
    assert [choice.text for choice in confirmed.published_key.all()] == ["Unsuitable for deep nets"]
    reported = Erratum.objects.get(status=ErratumStatus.REPORTED)
    assert (reported.source, reported.decided_at) == ("learners", None)
    assert sorted(reported.published_key.values_list("label", flat=True)) == ["A", "C"]


def test_a_dry_run_writes_nothing_and_says_what_would_be_created(exam):
    summary = import_bank(exam=exam, result=gift(GIFT), dry_run=True)

    assert summary.ok and not summary.written
    assert summary.headline == "Would create 2 questions in GENM (dry run: nothing was written)."
    assert "  Core ML: 1 question" in summary.lines()
    assert not Question.objects.exists()


def test_a_file_that_is_not_utf8_is_refused_not_garbled(exam):
    result = parse_upload(data="::Café::Où?{=oui ~non}\n".encode("latin-1"), fmt="gift", skip_unsupported=False)

    assert result.questions == ()
    [error] = result.errors
    assert error.line == 1
    assert "not UTF-8" in error.message
    assert not import_bank(exam=exam, result=result).ok
    assert not Question.objects.exists()


def test_the_summary_says_weights_are_not_used_for_scoring(exam):
    summary = import_bank(exam=exam, result=gift(GIFT), dry_run=True)

    text = str(summary)
    assert WEIGHTS_NOTE in text
    assert "weights are not used for scoring" in text
    assert "3 answers in this file carried a weight." in text


def test_skipped_questions_are_listed(exam):
    text = GIFT + "\n::Match::Pair them {=a -> 1 =b -> 2}\n"

    refused = import_bank(exam=exam, result=gift(text))
    assert [error.line for error in refused.errors] == [18]

    summary = import_bank(exam=exam, result=gift(text, skip_unsupported=True))
    assert summary.written
    assert "line 18: skipped matching question" in str(summary)


def test_a_second_import_of_the_same_questions_is_pointed_out(exam):
    import_bank(exam=exam, result=gift(GIFT))

    summary = import_bank(exam=exam, result=gift(GIFT), dry_run=True)

    assert any(note.startswith("2 questions in this file have the same title and text") for note in summary.notes)


def test_an_exam_without_domains_is_an_error():
    summary = import_bank(exam=ExamFactory(code="EMPTY"), result=gift(GIFT))

    assert "EMPTY has no domains yet: add them to the exam first." in [str(error) for error in summary.errors]


def test_an_import_takes_the_same_number_of_queries_however_large(exam, django_assert_max_num_queries):
    small = "\n\n".join(f"::Q{n}::Question {n}?{{=a ~b ~c}}" for n in range(3))
    large = "\n\n".join(f"::Q{n}::Question {n}?{{=a ~b ~c}}" for n in range(300))

    with django_assert_max_num_queries(12) as small_queries:
        import_bank(exam=exam, result=gift(small), default_domain="Data")
    with django_assert_max_num_queries(12) as large_queries:
        import_bank(exam=exam, result=gift(large), default_domain="Data")

    assert len(large_queries) == len(small_queries)
    assert Question.objects.count() == 303
    assert Choice.objects.count() == 909


def test_export_renumbers_labels_by_order_and_maps_the_published_key(exam, django_assert_num_queries):
    question = QuestionFactory(exam=exam, domain=exam.domains.get(name="Data"))
    # Authored labels out of step with the order: export labels by position.
    for choice, (label, order) in zip(question.choices.order_by("label"), [("Q", 4), ("R", 3), ("S", 2), ("T", 1)]):
        choice.label, choice.order = label, order
        choice.save()
    erratum = Erratum.objects.create(question=question, status=ErratumStatus.REPORTED, note="Was it T?")
    erratum.published_key.set(question.choices.filter(label__in=["T", "R"]))
    QuestionFactory(exam=exam, domain=exam.domains.get(name="Core ML"))
    QuestionFactory(exam=exam, domain=exam.domains.get(name="Core ML"), is_active=False)

    with django_assert_num_queries(4):
        exported = export_bank(exam=exam)

    assert [item.domain for item in exported] == ["Core ML", "Data"]
    data = exported[1]
    assert [choice.text for choice in data.choices] == [f"Choice {label} of {question.title}" for label in "DCBA"]
    assert [choice.is_correct for choice in data.choices] == [False, False, False, True]
    assert [(item.published_key, item.note) for item in data.errata] == [(("A", "C"), "Was it T?")]


def test_export_of_chosen_questions_keeps_to_the_exam(exam):
    kept = QuestionFactory(exam=exam, domain=exam.domains.get(name="Data"), is_active=False)
    stranger = QuestionFactory()

    exported = export_bank(exam=exam, questions=Question.objects.filter(pk__in=[kept.pk, stranger.pk]))

    assert [item.title for item in exported] == [kept.title]


def test_write_export_uses_the_format_writers(exam):
    QuestionFactory(exam=exam, domain=exam.domains.get(name="Data"), title="Only one")

    assert json.loads(write_export(exam=exam, fmt="json"))["exam"] == "GENM"
    assert write_export(exam=exam, fmt="gift").startswith("$CATEGORY: $course$/top/Data\n")
    assert write_export(exam=exam, fmt="aiken").endswith("ANSWER: A\n")
    assert "<category>\n      <text>$course$/top/Data</text>" in write_export(exam=exam, fmt="xml")
    with pytest.raises(ValueError, match="Unknown format 'qti'"):
        write_export(exam=exam, fmt="qti")
