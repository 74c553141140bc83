"""Aiken import and export, and the Markdown escaping that carries its plain text."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.bank.formats import (
    TRIM,
    ExportError,
    ParsedChoice,
    ParsedQuestion,
    choice_label,
    default_title,
    escape_markdown,
    unescape_markdown,
)
from exams.bank.formats.aiken import parse_aiken, write_aiken

GOOD = "Which gas do plants take in?\nA) Oxygen\nB) Carbon dioxide\nC) Helium\nANSWER: B\n"


def test_a_question_is_a_stem_lettered_options_and_an_answer_line():
    result = parse_aiken(GOOD)
    assert result.ok
    (question,) = result.questions
    assert question.stem == "Which gas do plants take in?"
    assert question.title == "Which gas do plants take in?"
    assert [choice.text for choice in question.choices] == ["Oxygen", "Carbon dioxide", "Helium"]
    assert [choice.is_correct for choice in question.choices] == [False, True, False]
    assert (question.kind, question.choose, question.keep_order, question.domain) == ("single", 1, False, None)
    assert question.explanation == "" and question.line == 1


def test_an_aiken_question_is_medium_and_never_reviewed():
    (question,) = parse_aiken(GOOD).questions
    assert (question.difficulty, question.reviewed_on) == ("medium", None)


def test_options_may_use_a_dot_or_a_parenthesis_with_or_without_a_space():
    (question,) = parse_aiken("Pick\nA. one\nB)two\nC.\tthree\nANSWER: C").questions
    assert [choice.text for choice in question.choices] == ["one", "two", "three"]
    assert question.choices[2].is_correct


def test_blank_lines_between_questions_are_optional():
    text = GOOD + "Second question?\nA) yes\nB) no\nANSWER: A\n\n\nThird?\nA) x\nB) y\nANSWER: B"
    result = parse_aiken(text)
    assert result.ok
    assert [question.line for question in result.questions] == [1, 6, 12]


def test_windows_line_endings_and_surrounding_spaces_are_accepted():
    result = parse_aiken("\ufeff  Pick one  \r\n A) x \r\nB) y\r\n ANSWER:  A \r\n")
    assert result.ok
    assert result.questions[0].stem == "Pick one"
    assert result.questions[0].choices[0].text == "x"


def test_plain_text_is_escaped_into_markdown_once():
    (question,) = parse_aiken("Is <b>this</b> & *that* bold?\nA) 2 < 3\nB) # no\nANSWER: A").questions
    assert question.stem == "Is \\<b\\>this\\</b\\> \\& \\*that\\* bold?"
    assert question.title == "Is <b>this</b> & *that* bold?"
    assert [unescape_markdown(choice.text) for choice in question.choices] == ["2 < 3", "# no"]


def test_a_missing_answer_line_is_an_error_where_the_next_question_starts():
    result = parse_aiken("First\nA) a\nB) b\n\nSecond\nA) c\nB) d\nANSWER: A")
    assert [question.stem for question in result.questions] == ["Second"]
    assert [error.line for error in result.errors] == [5]
    assert "line 1 has no ANSWER" in result.errors[0].message


def test_a_missing_answer_line_at_the_end_is_an_error():
    result = parse_aiken("Only\nA) a\nB) b\n")
    assert not result.questions
    assert [error.line for error in result.errors] == [1]


def test_a_stem_over_two_lines_is_an_error_with_a_hint():
    result = parse_aiken("Part one\npart two\nA) a\nB) b\nANSWER: A")
    assert [error.line for error in result.errors] == [2]
    assert "one line" in result.errors[0].message


def test_an_answer_letter_that_is_not_an_option_is_an_error():
    result = parse_aiken("Pick\nA) a\nB) b\nANSWER: D")
    assert not result.questions
    assert [(error.line, "not one of the options" in error.message) for error in result.errors] == [(4, True)]


@pytest.mark.parametrize("answer", ["", "b", "A, B", "AB", "1"])
def test_the_answer_line_names_exactly_one_capital_letter(answer):
    result = parse_aiken(f"Pick\nA) a\nB) b\nANSWER: {answer}")
    assert not result.questions
    assert result.errors[0].line == 4


def test_an_option_before_any_stem_is_an_error():
    result = parse_aiken("A) floating option\n\nANSWER: A\n\n" + GOOD)
    assert len(result.questions) == 1
    assert [error.line for error in result.errors] == [1, 3]


def test_fewer_than_two_options_is_an_error_on_the_answer_line():
    result = parse_aiken("Lonely\nA) only\nANSWER: A")
    assert not result.questions
    assert [error.line for error in result.errors] == [3]
    assert "two options" in result.errors[0].message


def test_options_out_of_order_are_an_error():
    result = parse_aiken("Pick\nA) a\nC) c\nANSWER: A")
    assert not result.questions
    assert [(error.line, "expected B" in error.message) for error in result.errors] == [(3, True)]


def test_an_option_without_text_is_an_error():
    result = parse_aiken("Pick\nA) a\nB)\nANSWER: A")
    assert [error.line for error in result.errors] == [3]


def test_all_errors_are_listed():
    text = "A) stray\n\nGood?\nA) a\nB) b\nANSWER: A\n\nBad\nA) a\nANSWER: A\n\nWorse\nA) a\nB) b\nANSWER: Z\n"
    result = parse_aiken(text)
    assert [question.stem for question in result.questions] == ["Good?"]
    assert [error.line for error in result.errors] == [1, 10, 15]


# --- export ------------------------------------------------------------------------------


def single(stem: str = "Pick the even number", **changes) -> ParsedQuestion:
    fields = {
        "line": 1,
        "title": "Even",
        "stem": stem,
        "explanation": "Two is even.",
        "kind": "single",
        "choose": 1,
        "keep_order": True,
        "domain": "Maths",
        "choices": (
            ParsedChoice(text="1", is_correct=False, feedback="odd"),
            ParsedChoice(text="2", is_correct=True),
            ParsedChoice(text="3", is_correct=False),
        ),
    }
    return ParsedQuestion(**(fields | changes))


def test_export_writes_stem_options_and_answer_with_a_blank_line_between_questions():
    assert write_aiken([single(), single("Again")]) == (
        "Pick the even number\nA) 1\nB) 2\nC) 3\nANSWER: B\n\nAgain\nA) 1\nB) 2\nC) 3\nANSWER: B\n"
    )


def test_export_turns_markdown_into_one_plain_line():
    question = single("<p>Is 2 \\< 3</p>\n<p>and `<b>` code &amp; **bold**?</p>")
    assert write_aiken([question]).splitlines()[0] == "Is 2 < 3 and `<b>` code & **bold**?"


def test_export_refuses_multiple_select_and_lists_every_refusal():
    multiple = single(kind="multiple", choose=2, choices=(ParsedChoice("1", True), ParsedChoice("2", True)))
    looks_like_option = single("A. Smith wrote it?")
    with pytest.raises(ExportError) as caught:
        write_aiken([single(), multiple, looks_like_option])
    assert len(caught.value.problems) == 2
    assert caught.value.problems[0].startswith("question 2 ('Even'): Aiken holds single-answer questions only")
    assert caught.value.problems[1].startswith("question 3 ('Even'): its text would read as an option")


def test_export_refuses_more_than_26_choices():
    many = tuple(ParsedChoice(text=f"c{index}", is_correct=index == 0) for index in range(27))
    with pytest.raises(ExportError, match="A to Z"):
        write_aiken([single(choices=many)])


def test_export_loses_title_feedback_explanation_domain_and_keep_order():
    (question,) = parse_aiken(write_aiken([single()])).questions
    assert question.title == "Pick the even number"
    assert question.explanation == "" and question.domain is None and question.keep_order is False
    assert all(choice.feedback == "" for choice in question.choices)


# --- export → import -----------------------------------------------------------------------

SPECIAL = list("~=#{}:\\%[]()<>&*_`|-+.!") + ["A) ", "B.", "1. ", "ANSWER: A", "<b>", "&amp;", "\\*", "\u2028"]
# A byte-order mark opening the file is dropped on import, as it should be, so none is generated.
piece = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",), exclude_characters="\r\n\ufeff\x00"))
plain_lines = st.lists(piece, min_size=1, max_size=12).map(lambda parts: "".join(parts).strip(TRIM)).filter(str.strip)
stems = plain_lines.filter(
    lambda text: not (text[:1].isupper() and text[1:2] in (".", ")")) and not text.startswith("ANSWER:")
)


@st.composite
def aiken_questions(draw) -> ParsedQuestion:
    stem = draw(stems)
    count = draw(st.integers(min_value=2, max_value=6))
    key = draw(st.integers(min_value=0, max_value=count - 1))
    return ParsedQuestion(
        line=1,
        title=default_title(stem),
        stem=escape_markdown(stem),
        explanation="",
        kind="single",
        choose=1,
        keep_order=False,
        domain=None,
        choices=tuple(
            ParsedChoice(text=escape_markdown(draw(plain_lines)), is_correct=index == key) for index in range(count)
        ),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(aiken_questions(), min_size=1, max_size=4))
def test_export_then_import_gives_the_same_questions(questions):
    written = write_aiken(questions)
    result = parse_aiken(written)
    assert result.ok, (written, result.errors)
    assert result.questions == tuple(questions)


# --- Markdown escaping of plain text --------------------------------------------------------


@given(st.text())
def test_unescaping_undoes_escaping(text):
    assert unescape_markdown(escape_markdown(text)) == text


@given(st.text())
def test_escaping_is_stable_on_escaped_text(text):
    escaped = escape_markdown(text)
    assert escape_markdown(unescape_markdown(escaped)) == escaped


@pytest.mark.parametrize(
    ("plain", "markdown"),
    [
        ("1. first", "1\\. first"),
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("===", "\\==="),
        ("# heading", "\\# heading"),
        ("a_b*c", "a\\_b\\*c"),
        ("path\\to", "path\\\\to"),
        ("x - y = 3.5", "x - y = 3.5"),
    ],
)
def test_escaping_covers_what_markdown_would_otherwise_format(plain, markdown):
    assert escape_markdown(plain) == markdown


def test_labels_used_in_errors_are_letters():
    assert choice_label(2) == "C"
