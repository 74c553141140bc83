"""certprep's bank JSON: the writer's layout, each validation rule, the schema, and export → import."""
import copy
import dataclasses
import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.bank.formats import (
    DIFFICULTIES,
    ERRATUM_POLICIES,
    ERRATUM_SOURCES,
    ERRATUM_STATUSES,
    KINDS,
    STATUSES,
    ExportError,
    ParsedChoice,
    ParsedErratum,
    ParsedQuestion,
    choice_label,
)
from exams.bank.formats.bankjson import FORMAT, VERSION, parse_json, write_json

SCHEMA_PATH = Path(__file__).resolve().parents[4] / "docs" / "bank-format.schema.json"

QUESTION = ParsedQuestion(
    line=1,
    title="Diffusion steps",
    stem="What does a **denoising** step remove?",
    explanation="Predicted noise.",
    kind="single",
    choose=1,
    keep_order=True,
    domain="Core ML and AI Knowledge",
    choices=(
        ParsedChoice(text="Noise", is_correct=True, feedback="Yes."),
        ParsedChoice(text="Signal", is_correct=False, feedback="No."),
        ParsedChoice(text="All of the above", is_correct=False),
    ),
    errata=(
        ParsedErratum(
            published_key=("B",), note="Key said B.", source="imported", status="confirmed", policy="credit_either"
        ),
        ParsedErratum(published_key=(), note="", source="learners", status="reported", policy=""),
    ),
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
WITH_IMAGE = dataclasses.replace(
    QUESTION,
    topic="Diffusion sampling and guidance",
    exhibit="![Loss falling over 10 epochs](exhibit:01-curve.png)",
    sources='- Ho, Jain and Abbeel, "Denoising Diffusion Probabilistic Models" (2020)',
    exclusion_group="denoising",
    images=(("01-curve.png", PNG),),
    errata=(),
    difficulty="hard",
    reviewed_on=date(2026, 12, 3),
)


def document(**question_changes) -> dict:
    written = json.loads(write_json([QUESTION], exam_code="NCA-GENM"))
    written["questions"][0].update(question_changes)
    return written


def parse_document(data) -> object:
    return parse_json(json.dumps(data))


def test_the_writer_lays_out_the_documented_format():
    written = json.loads(write_json([QUESTION], exam_code="NCA-GENM"))
    assert written == {
        "format": "certprep-bank",
        "version": 1,
        "exam": "NCA-GENM",
        "questions": [
            {
                "title": "Diffusion steps",
                "topic": "",
                "exhibit": "",
                "stem": "What does a **denoising** step remove?",
                "explanation": "Predicted noise.",
                "sources": "",
                "kind": "single",
                "choose": 1,
                "keep_order": True,
                "domain": "Core ML and AI Knowledge",
                "exclusion_group": "",
                "idnumber": "",
                "difficulty": "medium",
                "reviewed_on": None,
                "status": "draft",
                "choices": [
                    {"label": "A", "text": "Noise", "is_correct": True, "feedback": "Yes."},
                    {"label": "B", "text": "Signal", "is_correct": False, "feedback": "No."},
                    {"label": "C", "text": "All of the above", "is_correct": False, "feedback": ""},
                ],
                "errata": [
                    {
                        "published_key": ["B"],
                        "note": "Key said B.",
                        "source": "imported",
                        "status": "confirmed",
                        "policy": "credit_either",
                    },
                    {"published_key": [], "note": "", "source": "learners", "status": "reported", "policy": ""},
                ],
                "exhibit_images": [],
            }
        ],
    }


def test_reading_gives_back_the_questions_and_the_exam_code():
    result = parse_json(write_json([QUESTION, QUESTION], exam_code="NCA-GENM"))
    assert result.ok
    assert result.questions == (QUESTION, QUESTION)
    assert [question.line for question in result.questions] == [1, 2]
    assert result.exam_code == "NCA-GENM"


def test_optional_keys_take_their_defaults():
    data = document()
    question = data["questions"][0]
    for key in ("explanation", "choose", "keep_order", "domain", "errata", "difficulty", "reviewed_on", "status"):
        del question[key]
    for choice in question["choices"]:
        del choice["feedback"]
    (parsed,) = parse_document(data).questions
    assert (parsed.explanation, parsed.choose, parsed.keep_order) == ("", 1, False)
    assert (parsed.difficulty, parsed.reviewed_on) == ("medium", None), "a file from before difficulty reads as medium, never reviewed"
    assert parsed.status == "draft", "a file from before status lands as a draft"
    assert (parsed.domain, parsed.errata) == (None, ())
    assert all(choice.feedback == "" for choice in parsed.choices)


def test_a_multiple_select_question_without_choose_picks_as_many_as_its_keys():
    data = document(kind="multiple")
    del data["questions"][0]["choose"]
    data["questions"][0]["choices"][1]["is_correct"] = True
    assert parse_document(data).questions[0].choose == 2


def test_erratum_source_and_policy_have_defaults():
    data = document()
    erratum = data["questions"][0]["errata"][1]
    del erratum["source"], erratum["policy"], erratum["note"]
    parsed = parse_document(data).questions[0].errata[1]
    assert (parsed.source, parsed.policy, parsed.note) == ("imported", "", "")


def test_invalid_json_names_the_file_line():
    result = parse_json('{\n  "format": "certprep-bank",\n  "version": 1,\n  oops\n}')
    assert [error.line for error in result.errors] == [4]
    assert "not valid JSON" in result.errors[0].message


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], "a bank file is a JSON object"),
        ({"format": "moodle", "version": 1}, "/format"),
        ({"format": FORMAT, "version": 2, "exam": "X", "questions": []}, "unsupported version 2"),
        ({"format": FORMAT, "version": True, "exam": "X", "questions": []}, "unsupported version"),
        ({"format": FORMAT, "version": VERSION, "exam": "", "questions": []}, "/exam"),
        ({"format": FORMAT, "version": VERSION, "exam": "X"}, "/questions: is missing"),
        ({"format": FORMAT, "version": VERSION, "exam": "X", "questions": [], "extra": 1}, "/extra: unknown key"),
    ],
)
def test_file_level_problems_are_errors_on_line_0(data, words):
    result = parse_document(data)
    assert not result.questions
    assert [error.line for error in result.errors] == [0]
    assert words in result.errors[0].message


def test_duplicate_keys_and_non_finite_numbers_are_refused():
    assert "appears twice" in parse_json('{"format": "certprep-bank", "format": "x"}').errors[0].message
    text = json.dumps(document()).replace('"choose": 1', '"choose": NaN')
    assert "NaN" in parse_json(text).errors[0].message


@pytest.mark.parametrize(
    ("change", "pointer", "words"),
    [
        (lambda q: q.pop("title"), "/questions/1/title", "is missing"),
        (lambda q: q.update(stem=7), "/questions/1/stem", "must be a string"),
        (lambda q: q.update(kind="essay"), "/questions/1/kind", "must be one of"),
        (lambda q: q.update(choose=True), "/questions/1/choose", "must be an integer"),
        (lambda q: q.update(keep_order="yes"), "/questions/1/keep_order", "must be true or false"),
        (lambda q: q.update(domain=3), "/questions/1/domain", "string or null"),
        (lambda q: q.update(colour="red"), "/questions/1/colour", "unknown key"),
        (lambda q: q["choices"][1].update(label="C"), "/questions/1/choices/1/label", "expected 'B'"),
        (lambda q: q["choices"][0].pop("is_correct"), "/questions/1/choices/0/is_correct", "is missing"),
        (lambda q: q["choices"].append("D"), "/questions/1/choices/3", "a choice is a JSON object"),
        (lambda q: q["errata"][0].update(status="maybe"), "/questions/1/errata/0/status", "must be one of"),
        (lambda q: q["errata"][0].update(policy="refund"), "/questions/1/errata/0/policy", "must be one of"),
        (lambda q: q["errata"][0].update(source="rumour"), "/questions/1/errata/0/source", "must be one of"),
        (lambda q: q["errata"][0].update(published_key=[1]), "/questions/1/errata/0/published_key/0", "labels"),
        (lambda q: q["errata"][0].update(published_key=["Q"]), "/questions/1", "no such choice: Q"),
        (lambda q: q["errata"][0].update(policy=""), "/questions/1", "confirmed erratum needs a policy"),
        (lambda q: q["errata"][0].update(status="reported"), "/questions/1", "at most one reported"),
        (lambda q: q["choices"][1].update(is_correct=True), "/questions/1", "exactly one correct choice"),
        (lambda q: q.update(kind="multiple", choose=3), "/questions/1", "choose is 3 but 1 choices"),
        (lambda q: q.update(choices=q["choices"][:1]), "/questions/1", "at least two choices"),
        (lambda q: q.update(title="t" * 201), "/questions/1", "longer than 200"),
        (lambda q: q.update(stem="  "), "/questions/1", "has no text"),
        (lambda q: q.update(difficulty="tricky"), "/questions/1/difficulty", "must be one of 'easy', 'medium', 'hard'"),
        (lambda q: q.update(difficulty=2), "/questions/1/difficulty", "must be a string"),
        (lambda q: q.update(reviewed_on="2026-13-01"), "/questions/1/reviewed_on", "must be a date as YYYY-MM-DD or null"),
        (lambda q: q.update(reviewed_on="3 Dec 2026"), "/questions/1/reviewed_on", "must be a date as YYYY-MM-DD or null"),
        (lambda q: q.update(reviewed_on=20261203), "/questions/1/reviewed_on", "string or null"),
    ],
)
def test_question_problems_name_the_pointer_and_the_question(change, pointer, words):
    data = document()
    data["questions"].insert(0, copy.deepcopy(data["questions"][0]))
    change(data["questions"][1])
    result = parse_document(data)
    assert len(result.questions) == 1  # the good question still reads; the importer refuses the file
    assert [error.line for error in result.errors] == [2] * len(result.errors)
    message = result.errors[0].message
    assert message.startswith(f"question 2, {pointer}"), message
    assert words in message
    assert "line number is the question's position" in message


def test_every_problem_is_listed():
    data = document(kind="essay", keep_order="no")
    data["questions"].append("not a question")
    result = parse_document(data)
    assert [error.line for error in result.errors] == [1, 1, 2]


def test_the_writer_refuses_what_it_could_not_read_back():
    with pytest.raises(ExportError) as caught:
        write_json([QUESTION, replace(QUESTION, choose=2)], exam_code="")
    assert caught.value.problems == (
        "the exam code is empty",
        "question 2 ('Diffusion steps'): a single-answer question chooses 1, not 2",
    )


# --- the schema ---------------------------------------------------------------------------


def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_the_schema_is_draft_2020_12_and_pins_format_and_version():
    loaded = schema()
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert loaded["properties"]["format"] == {"const": FORMAT}
    assert loaded["properties"]["version"] == {"const": VERSION}


def test_the_schema_lists_exactly_the_keys_the_writer_writes():
    loaded = schema()
    written = json.loads(write_json([QUESTION], exam_code="NCA-GENM"))
    written_with_image = json.loads(write_json([WITH_IMAGE], exam_code="NCA-GENM"))
    levels = [
        (loaded, written),
        (loaded["$defs"]["question"], written["questions"][0]),
        (loaded["$defs"]["choice"], written["questions"][0]["choices"][0]),
        (loaded["$defs"]["erratum"], written["questions"][0]["errata"][0]),
        (loaded["$defs"]["exhibitImage"], written_with_image["questions"][0]["exhibit_images"][0]),
    ]
    for definition, example in levels:
        assert definition["additionalProperties"] is False
        assert set(definition["required"]) <= set(example)
        assert set(example) == set(definition["properties"])


def test_the_schema_enums_match_the_code():
    definitions = schema()["$defs"]
    assert tuple(definitions["question"]["properties"]["kind"]["enum"]) == KINDS
    assert tuple(definitions["question"]["properties"]["difficulty"]["enum"]) == DIFFICULTIES
    assert tuple(definitions["question"]["properties"]["status"]["enum"]) == STATUSES
    erratum = definitions["erratum"]["properties"]
    assert tuple(erratum["source"]["enum"]) == ERRATUM_SOURCES
    assert tuple(erratum["status"]["enum"]) == ERRATUM_STATUSES
    assert tuple(erratum["policy"]["enum"]) == ERRATUM_POLICIES


def test_the_writer_output_validates_against_the_schema():
    import jsonschema
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(json.loads(write_json([QUESTION], exam_code="NCA-GENM")), schema())
    jsonschema.validate(json.loads(write_json([WITH_IMAGE], exam_code="NCA-GENM")), schema())


def test_topic_exhibit_sources_group_and_images_round_trip():
    assert parse_json(write_json([WITH_IMAGE], exam_code="NCA-GENM")).questions == (WITH_IMAGE,)


def test_difficulty_and_review_date_are_written_and_read_back():
    written = json.loads(write_json([WITH_IMAGE], exam_code="NCA-GENM"))["questions"][0]
    assert (written["difficulty"], written["reviewed_on"]) == ("hard", "2026-12-03")
    (read,) = parse_json(write_json([WITH_IMAGE], exam_code="NCA-GENM")).questions
    assert (read.difficulty, read.reviewed_on) == ("hard", date(2026, 12, 3))


def test_the_writer_refuses_a_difficulty_it_could_not_read_back():
    with pytest.raises(ExportError) as caught:
        write_json([replace(QUESTION, difficulty="tricky")], exam_code="NCA-GENM")
    assert "the difficulty 'tricky' is not one of easy, medium, hard" in caught.value.problems[0]


def test_an_exhibit_image_the_file_does_not_carry_is_an_error():
    document = json.loads(write_json([WITH_IMAGE], exam_code="NCA-GENM"))
    document["questions"][0]["exhibit_images"] = []
    result = parse_json(json.dumps(document))
    assert not result.ok
    assert "shows the image '01-curve.png', which exhibit_images does not carry" in str(result.errors[0])


def test_image_data_that_is_not_base64_is_an_error():
    document = json.loads(write_json([WITH_IMAGE], exam_code="NCA-GENM"))
    document["questions"][0]["exhibit_images"][0]["data"] = "not base64!"
    result = parse_json(json.dumps(document))
    assert len(result.errors) == 1
    assert "/questions/0/exhibit_images/0/data: is not valid base64" in result.errors[0].message


# --- export → import -----------------------------------------------------------------------

texts = st.text(st.characters(exclude_characters="\x00"), min_size=1, max_size=30).filter(str.strip)
optional_texts = st.one_of(st.just(""), st.text(st.characters(exclude_characters="\x00"), max_size=30))


@st.composite
def bank_questions(draw) -> ParsedQuestion:
    count = draw(st.integers(min_value=2, max_value=6))
    kind = draw(st.sampled_from(KINDS))
    if kind == "single":
        correct = {draw(st.integers(min_value=0, max_value=count - 1))}
    else:
        correct = set(draw(st.lists(st.integers(min_value=0, max_value=count - 1), min_size=1, unique=True)))
    labels = [choice_label(index) for index in range(count)]
    statuses = draw(
        st.lists(st.sampled_from(ERRATUM_STATUSES), max_size=3).filter(lambda found: found.count("reported") <= 1)
    )
    errata = tuple(
        ParsedErratum(
            published_key=tuple(draw(st.lists(st.sampled_from(labels), unique=True, max_size=2))),
            note=draw(optional_texts),
            source=draw(st.sampled_from(ERRATUM_SOURCES)),
            status=status,
            policy=draw(st.sampled_from(ERRATUM_POLICIES[1:] if status == "confirmed" else ERRATUM_POLICIES)),
        )
        for status in statuses
    )
    return ParsedQuestion(
        line=1,
        title=draw(texts.filter(lambda title: len(title) <= 200)),
        stem=draw(texts),
        explanation=draw(optional_texts),
        kind=kind,
        choose=len(correct) if kind == "multiple" else 1,
        keep_order=draw(st.booleans()),
        domain=draw(st.one_of(st.none(), texts)),
        choices=tuple(
            ParsedChoice(text=draw(texts), is_correct=index in correct, feedback=draw(optional_texts))
            for index in range(count)
        ),
        errata=errata,
        difficulty=draw(st.sampled_from(DIFFICULTIES)),
        reviewed_on=draw(st.one_of(st.none(), st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 12, 31)))),
        status=draw(st.sampled_from(STATUSES)),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(bank_questions(), max_size=4), texts)
def test_export_then_import_gives_the_same_questions(questions, exam_code):
    result = parse_json(write_json(questions, exam_code=exam_code))
    assert result.ok, result.errors
    assert result.questions == tuple(questions)
    assert result.exam_code == exam_code


def test_nesting_too_deep_is_one_clear_error_not_a_crash():
    result = parse_json("[" * 100_000 + "]" * 100_000)
    assert not result.ok and "nested too deeply" in str(result.errors[0])


def test_the_bank_bounds_hold_at_import_naming_the_question():
    from exams.bank.formats import MAX_CHOICES

    many = dataclasses.replace(QUESTION, choices=tuple(ParsedChoice(text=f"c{n}", is_correct=n == 0) for n in range(27)), errata=())
    nul = dataclasses.replace(QUESTION, stem="A stem with a \x00 byte", errata=())
    long = dataclasses.replace(QUESTION, explanation="x" * 10_001, errata=())
    from exams.bank.formats import question_problems

    assert any(f"at most {MAX_CHOICES} choices (found 27)" in p for p in question_problems(many))
    assert any("NUL byte" in p for p in question_problems(nul))
    assert any("longer than 10,000 characters" in p for p in question_problems(long))
