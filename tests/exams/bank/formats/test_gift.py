"""GIFT import and export: each rule of the format as certprep reads it, and export → import."""
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exams.bank.formats import (
    TRIM,
    ExportError,
    NotUtf8Error,
    ParsedChoice,
    ParsedErratum,
    ParsedQuestion,
    choice_label,
    decode_utf8,
)
from exams.bank.formats.gift import parse_gift, write_gift


def only_question(text: str) -> ParsedQuestion:
    result = parse_gift(text)
    assert result.ok, result.errors
    assert len(result.questions) == 1, result.questions
    return result.questions[0]


def keys(question: ParsedQuestion) -> list[str]:
    return [choice.text for choice in question.choices if choice.is_correct]


# --- structure ---------------------------------------------------------------------------


def test_a_blank_line_separates_questions():
    text = "Capital of France? {=Paris ~Lyon}\n   \nCapital of Italy? {=Rome ~Milan}\n"
    result = parse_gift(text)
    assert [question.stem for question in result.questions] == ["Capital of France?", "Capital of Italy?"]
    # GIFT has no difficulty or review date: an import gives medium and none.
    assert {(question.difficulty, question.reviewed_on) for question in result.questions} == {("medium", None)}


def test_a_question_may_span_several_lines():
    question = only_question("Which planet\nis largest?\n{\n  ~Mars\n  =Jupiter\n}")
    assert question.stem == "Which planet\nis largest?"
    assert [choice.text for choice in question.choices] == ["Mars", "Jupiter"]


def test_comment_lines_are_ignored_inside_and_between_questions():
    text = "// a note for authors\n\n// about the next one\nPick one {\n// not an answer\n=yes ~no}"
    question = only_question(text)
    assert question.stem == "Pick one"
    assert [choice.text for choice in question.choices] == ["yes", "no"]


def test_windows_line_endings_and_a_byte_order_mark_are_accepted():
    result = parse_gift("\ufeffOne? {=a ~b}\r\n\r\nTwo? {=c ~d}\r\n")
    assert [question.stem for question in result.questions] == ["One?", "Two?"]


def test_the_title_comes_from_double_colons_and_is_trimmed():
    question = only_question("::  Tomb question ::Who is buried there? {=nobody ~Grant}")
    assert question.title == "Tomb question"
    assert question.stem == "Who is buried there?"


def test_without_a_title_one_is_made_from_the_text():
    question = only_question("[html]<p>Which   <b>colour</b> is the sky?</p>{=blue ~green}")
    assert question.title == "Which colour is the sky?"


def test_a_long_text_makes_a_shortened_title():
    question = only_question("word " * 40 + "{=a ~b}")
    assert len(question.title) <= 80
    assert question.title.endswith("…")


def test_a_title_longer_than_the_bank_allows_is_an_error():
    result = parse_gift("::" + "t" * 201 + ":: Text {=a ~b}")
    assert not result.questions
    assert "longer than 200" in result.errors[0].message


# --- categories → domains ------------------------------------------------------------------


def test_the_category_path_names_the_domain_then_the_topic_of_the_questions_after_it():
    text = (
        "Before any category? {=a ~b}\n\n"
        "$CATEGORY: $course$/top/Multimodal Data/Audio features\n\n"
        "First {=a ~b}\n\nSecond {=a ~b}\n\n"
        "$CATEGORY: Trustworthy AI\n\nThird {=a ~b}\n\n"
        "$CATEGORY: $system$/top/NCA-GENM/Core ML/Diffusion sampling and guidance/deeper\n\nFourth {=a ~b}\n"
    )
    result = parse_gift(text, exam_code="NCA-GENM")
    assert [(question.domain, question.topic) for question in result.questions] == [
        (None, ""), ("Multimodal Data", "Audio features"), ("Multimodal Data", "Audio features"),
        ("Trustworthy AI", ""), ("Core ML", "Diffusion sampling and guidance"),
    ]


def test_files_exported_before_topics_still_import_into_their_domain():
    question = only_question("$CATEGORY: $course$/top/Software Development\n\nQ {=a ~b}")
    assert (question.domain, question.topic) == ("Software Development", "")


def test_without_the_exam_code_its_segment_is_read_as_the_domain():
    question = only_question("$CATEGORY: $course$/top/NCA-GENM/Core ML\n\nQ {=a ~b}")
    assert (question.domain, question.topic) == ("NCA-GENM", "Core ML")


def test_sources_travel_after_the_explanation_as_learn_more_and_come_back():
    question = ParsedQuestion(
        line=1, title="T", stem="S", explanation="Because.", kind="single", choose=1, keep_order=False,
        domain="D", topic="Topic", choices=(ParsedChoice(text="a", is_correct=True), ParsedChoice(text="b", is_correct=False)),
        sources="- NVIDIA Triton Inference Server documentation, \"Dynamic Batcher\"",
    )
    text = write_gift([question])
    assert "$CATEGORY: $course$/top/D/Topic" in text
    assert "Learn more\\:\\n- NVIDIA Triton" in text
    assert parse_gift(text).questions == (question,)


def test_a_text_exhibit_is_written_above_the_stem_and_an_image_exhibit_is_refused_by_name():
    base = dict(
        line=1, title="T", stem="What does the log show?", explanation="", kind="single", choose=1, keep_order=False,
        domain="D", choices=(ParsedChoice(text="a", is_correct=True), ParsedChoice(text="b", is_correct=False)),
    )
    text = write_gift([ParsedQuestion(**base, exhibit="```\nline one\nline two\nline three\n```")])
    assert parse_gift(text).questions[0].stem.startswith("```\nline one")
    with pytest.raises(ExportError) as refused:
        write_gift([ParsedQuestion(**base, exhibit="![A loss curve](exhibit:05-loss.png)")])
    assert "image exhibit '05-loss.png'" in str(refused.value)


def test_a_category_that_is_only_a_context_and_top_names_no_domain():
    result = parse_gift("$CATEGORY: X\n\nOne {=a ~b}\n\n$CATEGORY: $course$/top\n\nTwo {=a ~b}")
    assert [question.domain for question in result.questions] == ["X", None]


def test_a_doubled_slash_is_a_slash_inside_a_category_name():
    question = only_question("$CATEGORY: $course$/Input//Output\n\nQ {=a ~b}")
    assert question.domain == "Input/Output"


def test_a_question_may_follow_its_category_line_directly():
    result = parse_gift("$CATEGORY: $course$/Vision\nWhat is a pixel? {=a dot ~a line}")
    assert result.ok
    assert result.questions[0].domain == "Vision"
    assert result.questions[0].line == 2


# --- text formats and escapes --------------------------------------------------------------


def test_html_and_markdown_text_is_kept_as_written():
    question = only_question("[html]<em>Pick</em> one {=[markdown]**bold** ~plain}")
    assert question.stem == "<em>Pick</em> one"
    assert question.choices[0].text == "**bold**"


def test_moodle_format_text_is_kept_as_written():
    assert only_question("[moodle]Pick *one* {=a ~b}").stem == "Pick *one*"


def test_plain_text_gets_markdown_characters_escaped():
    question = only_question("[plain]Is 2 * 3 < 7 & [x]? {=yes ~no}")
    assert question.stem == "Is 2 \\* 3 \\< 7 \\& \\[x\\]?"


def test_a_format_marker_applies_to_its_piece_and_the_question_format_is_the_default():
    question = only_question("[plain]Q_1 {=a_1 # [html]<b>right</b> ~[html]<i>b</i> # wrong_1 ####gen_1}")
    right, wrong = question.choices
    assert right.text == "a\\_1" and right.feedback == "<b>right</b>"
    assert wrong.text == "<i>b</i>" and wrong.feedback == "wrong\\_1"
    assert question.explanation == "gen\\_1"


def test_an_unknown_bracket_word_is_text_not_a_format():
    assert only_question("[note] Read this {=a ~b}").stem == "[note] Read this"


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("\\~", "~"), ("\\=", "="), ("\\#", "#"), ("\\{", "{"), ("\\}", "}"), ("\\:", ":"),
        ("\\\\", "\\"), ("\\n", "\n"), ("\\\\n", "\\n"), ("\\q", "\\q"),
    ],
)
def test_escapes(written, meant):
    question = only_question(f"::T{written}::Say x{written}y {{=x{written}y#f{written}g ~other}}")
    assert question.title == f"T{meant}".strip(TRIM)
    assert question.stem == f"Say x{meant}y"
    assert question.choices[0].text == f"x{meant}y"
    assert question.choices[0].feedback == f"f{meant}g"


# --- answers -----------------------------------------------------------------------------


def test_equals_marks_the_right_answer_and_tilde_the_wrong_ones():
    question = only_question("Largest ocean? {~Atlantic =Pacific ~Indian}")
    assert question.kind == "single" and question.choose == 1
    assert keys(question) == ["Pacific"]
    assert all(choice.fraction is None for choice in question.choices)


def test_a_positive_weight_marks_a_key_and_zero_or_negative_does_not():
    question = only_question("Pick the primes {~%50%two ~%50%three ~%0%four ~%-100%six}")
    assert question.kind == "multiple" and question.choose == 2
    assert keys(question) == ["two", "three"]
    assert [choice.fraction for choice in question.choices] == [
        Decimal("0.5"), Decimal("0.5"), Decimal("0"), Decimal("-1"),
    ]


def test_partial_credit_beside_a_full_key_becomes_a_second_key():
    # Scoring is all-or-nothing: a half-credit answer is a key like the full one.
    question = only_question("Hard one {~wrong ~%50%half =full}")
    assert question.kind == "multiple" and question.choose == 2
    assert keys(question) == ["half", "full"]


def test_decimal_weights_are_read():
    question = only_question("Three keys {~%33.33333%a ~%33.33333%b ~%33.33334%c ~%-100%d}")
    assert question.choices[2].fraction == Decimal("0.3333334")
    assert question.choose == 3


def test_with_no_equals_answer_even_one_key_makes_a_multiple_answer_question():
    question = only_question("Tricky {~%100%only ~%-50%no ~%-50%nope}")
    assert question.kind == "multiple" and question.choose == 1


def test_text_that_only_looks_like_a_weight_stays_text():
    assert only_question("Q {=a ~%abc%b}").choices[1].text == "%abc%b"


def test_answer_feedback_follows_a_hash():
    question = only_question("Q {=right # well done ~wrong#not quite}")
    assert [choice.feedback for choice in question.choices] == ["well done", "not quite"]


def test_four_hashes_give_the_explanation():
    question = only_question("Q {=a ~b ####Because *a* is right.}")
    assert question.explanation == "Because *a* is right."
    assert [choice.text for choice in question.choices] == ["a", "b"]


def test_keep_order_and_errata_are_never_set_by_gift():
    question = only_question("Q {=a ~b}")
    assert question.keep_order is False and question.errata == ()


# --- true/false --------------------------------------------------------------------------


@pytest.mark.parametrize(("word", "true_is_key"), [("T", True), ("TRUE", True), ("F", False), ("FALSE", False)])
def test_true_false_becomes_two_choices(word, true_is_key):
    question = only_question(f"The sky is green.{{{word}}}")
    assert question.kind == "single" and question.choose == 1
    assert [(choice.text, choice.is_correct) for choice in question.choices] == [
        ("True", true_is_key), ("False", not true_is_key),
    ]


def test_true_false_feedback_is_for_a_wrong_then_a_right_response():
    question = only_question("Water boils at 50 C at sea level.{FALSE#Too low.#Right, it is 100 C.####Physics.}")
    true, false = question.choices
    assert true.feedback == "Too low."
    assert false.feedback == "Right, it is 100 C."
    assert question.explanation == "Physics."


def test_true_with_feedback():
    question = only_question("Ice floats.{TRUE#Look again.#Yes.}")
    assert [choice.feedback for choice in question.choices] == ["Yes.", "Look again."]


# --- unsupported types and errors ----------------------------------------------------------

UNSUPPORTED = [
    ("matching", "Match them {=cat -> meow =dog -> woof}"),
    ("numerical", "How many legs? {#4}"),
    ("short answer", "Two plus two? {=four =4}"),
    ("essay", "Describe your day. {}"),
    ("description", "Just some words with no answers."),
    ("missing word", "The sun is {=hot ~cold} today."),
]


@pytest.mark.parametrize(("kind", "text"), UNSUPPORTED)
def test_other_types_are_errors_naming_the_line_and_type(kind, text):
    result = parse_gift(f"// header\n\nQ {{=a ~b}}\n\n// comment\n{text}\n")
    assert len(result.questions) == 1
    assert [error.line for error in result.errors] == [6]
    assert kind in result.errors[0].message


@pytest.mark.parametrize(("kind", "text"), UNSUPPORTED)
def test_other_types_can_be_skipped_and_listed(kind, text):
    result = parse_gift(f"Q {{=a ~b}}\n\n{text}\n", skip_unsupported=True)
    assert result.ok
    assert len(result.questions) == 1
    assert [(skip.line, skip.kind) for skip in result.skipped] == [(3, kind)]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Q {=a ~b", "without a closing"),
        ("Q =a ~b}", "without an opening"),
        ("Q } odd {=a ~b", "comes before"),
        ("Q {=a ~b}\nR {=c ~d}", "blank line"),
        ("Q {~a ~b}", "no choice is marked correct"),
        ("Q {=a ~}", "has no text"),
        ("Q {~%abc%a}", "at least two choices"),
        ("{=a ~b}", "no text"),
        ("Q {~%--5%a =b}", "not a number"),
    ],
)
def test_malformed_questions_are_errors(text, words):
    result = parse_gift(text)
    assert not result.questions
    assert any(words in error.message for error in result.errors), result.errors


def test_every_error_is_listed_with_the_line_its_question_starts_on():
    text = "Good {=a ~b}\n\n// broken below\n::T::\nBroken {=a ~b\n\nAlso good {=c ~d}\n\nNo key\n{~x ~y}\n"
    result = parse_gift(text)
    assert [question.stem for question in result.questions] == ["Good", "Also good"]
    assert [error.line for error in result.errors] == [4, 9]
    assert not result.ok


def test_parsed_questions_carry_their_start_line():
    result = parse_gift("// c\n\n\n::A:: one {=a ~b}\n\n::B::\ntwo\n{=a ~b}")
    assert [question.line for question in result.questions] == [4, 6]


# --- decoding ----------------------------------------------------------------------------


def test_decoding_drops_a_byte_order_mark():
    assert decode_utf8("\ufeffQ {=ä ~b}".encode()) == "Q {=ä ~b}"


def test_decoding_names_the_offset_and_line_of_the_first_bad_byte():
    data = "line one\nline two ok\n".encode() + b"caf\xe9\n"
    with pytest.raises(NotUtf8Error) as caught:
        decode_utf8(data)
    assert caught.value.offset == data.index(b"\xe9")
    assert caught.value.line == 3
    assert "0xE9" in str(caught.value) and "line 3" in str(caught.value)


def test_decoding_counts_the_offset_in_the_file_with_its_byte_order_mark():
    with pytest.raises(NotUtf8Error) as caught:
        decode_utf8(b"\xef\xbb\xbfab\xff")
    assert caught.value.offset == 5 and caught.value.line == 1


# --- export ------------------------------------------------------------------------------


def make_question(**changes) -> ParsedQuestion:
    fields = {
        "line": 1,
        "title": "Colours",
        "stem": "Which colours are *primary*?",
        "explanation": "",
        "kind": "single",
        "choose": 1,
        "keep_order": False,
        "domain": None,
        "choices": (ParsedChoice(text="Red", is_correct=True), ParsedChoice(text="Green", is_correct=False)),
    }
    return ParsedQuestion(**(fields | changes))


def test_export_writes_title_markdown_marker_answers_feedback_and_explanation():
    question = make_question(
        explanation="Red is primary.",
        choices=(
            ParsedChoice(text="Red", is_correct=True, feedback="Yes"),
            ParsedChoice(text="Green", is_correct=False),
        ),
    )
    assert write_gift([question]) == (
        "::Colours::[markdown]Which colours are *primary*?{\n\t=Red#Yes\n\t~Green\n\t####Red is primary.\n}\n"
    )


def test_export_splits_100_percent_across_the_keys_of_a_multiple_answer_question():
    question = make_question(
        kind="multiple",
        choose=3,
        choices=tuple(ParsedChoice(text=text, is_correct=text != "d") for text in "abcd"),
    )
    written = write_gift([question])
    assert "\t~%33.33333%a\n\t~%33.33333%b\n\t~%33.33334%c\n\t~%-100%d\n" in written
    two = make_question(
        kind="multiple", choose=2, choices=(ParsedChoice("a", True), ParsedChoice("b", True), ParsedChoice("c", False))
    )
    assert "\t~%50%a\n\t~%50%b\n\t~%-100%c\n" in write_gift([two])


def test_export_escapes_control_characters_and_newlines():
    question = make_question(title="A: {b}", stem="x = 1 # ~ \\ {}\nnext line")
    assert "::A\\: \\{b\\}::[markdown]x \\= 1 \\# \\~ \\\\ \\{\\}\\nnext line{" in write_gift([question])


def test_export_writes_a_category_when_the_domain_changes():
    questions = [
        make_question(domain="Vision"), make_question(domain="Vision"),
        make_question(domain="Audio/Speech"), make_question(domain=None),
    ]
    written = write_gift(questions)
    assert [line for line in written.splitlines() if line.startswith("$CATEGORY")] == [
        "$CATEGORY: $course$/top/Vision", "$CATEGORY: $course$/top/Audio//Speech", "$CATEGORY: $course$/top",
    ]
    assert [question.domain for question in parse_gift(written).questions] == ["Vision", "Vision", "Audio/Speech", None]


def test_export_drops_keep_order_and_errata():
    question = make_question(keep_order=True, errata=(ParsedErratum(published_key=("B",)),))
    assert parse_gift(write_gift([question])).questions == (make_question(),)


def test_export_refuses_questions_the_bank_would_not_hold():
    with pytest.raises(ExportError) as caught:
        write_gift([make_question(), make_question(choices=(ParsedChoice("only", True),))])
    assert caught.value.problems == ("question 2 ('Colours'): a question needs at least two choices (found 1)",)


# --- export → import -----------------------------------------------------------------------

SPECIAL = list("~=#{}:\\\n%[]->*_<&`") + ["[html]", "[plain]", "::", "####", "\\n", "//", "$CATEGORY:", "{T}", "\u2028"]
piece = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",), exclude_characters="\r\x00"))
# Stripped as Moodle strips (PHP's trim), and not blank in any sense, as the bank requires.
texts = st.lists(piece, min_size=1, max_size=12).map(lambda parts: "".join(parts).strip(TRIM)).filter(str.strip)
optional_texts = st.one_of(st.just(""), texts)
domains = st.one_of(
    st.none(),
    st.sampled_from(["Experimentation", "Core ML and AI Knowledge", "a/b", "/lead", "trail/", "top", "x//y"]),
    texts.map(lambda text: text.replace("\n", " ").strip(TRIM)).filter(str.strip),
)


@st.composite
def gift_questions(draw) -> ParsedQuestion:
    count = draw(st.integers(min_value=2, max_value=5))
    kind = draw(st.sampled_from(["single", "multiple"]))
    if kind == "single":
        correct = {draw(st.integers(min_value=0, max_value=count - 1))}
    else:
        correct = set(draw(st.lists(st.integers(min_value=0, max_value=count - 1), min_size=1, unique=True)))
    choices = tuple(
        ParsedChoice(text=draw(texts), is_correct=index in correct, feedback=draw(optional_texts))
        for index in range(count)
    )
    return ParsedQuestion(
        line=1,
        title=draw(texts),
        stem=draw(texts),
        explanation=draw(optional_texts),
        kind=kind,
        choose=len(correct) if kind == "multiple" else 1,
        keep_order=False,
        domain=draw(domains),
        choices=choices,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(gift_questions(), min_size=1, max_size=4))
def test_export_then_import_gives_the_same_questions(questions):
    written = write_gift(questions)
    result = parse_gift(written)
    assert result.ok, (written, result.errors)
    assert result.questions == tuple(questions)


def test_choice_labels_run_past_z():
    assert [choice_label(index) for index in (0, 25, 26, 27)] == ["A", "Z", "AA", "AB"]
