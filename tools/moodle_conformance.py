"""Check certprep's GIFT, Aiken and Moodle XML readers and writers against what Moodle's own tests assert."""
# Usage, from the repository root: python tools/moodle_conformance.py [--corpus DIR] [--report FILE]
# (make conformance writes the report to docs/CONFORMANCE.md).
# The corpus (Moodle's test cases and fixtures, GPL) stays outside the repository, in
# ../shared/corpora/moodle-formats or where MOODLE_CORPUS points: read, never copied.
# Multiple choice, multiple answer and true/false cases must agree with Moodle (text,
# choices, key = positive fraction, single or multiple); other types must be reported as
# unsupported; the non-UTF-8 fixture must be rejected. For Moodle XML, each of Moodle's
# test cases and fixtures (XML.md in the corpus) is imported as Moodle expects, refused
# as unsupported (a type, file or image certprep does not hold, refused by name), or
# differs. Exits 1 on any disagreement.
import argparse
import html
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from exams.bank.formats import (  # noqa: E402  (the repository root must be importable first)
    ExportError,
    NotUtf8Error,
    ParsedChoice,
    ParsedQuestion,
    decode_utf8,
    escape_markdown,
    unescape_markdown,
)
from exams.bank.formats.aiken import parse_aiken, write_aiken  # noqa: E402
from exams.bank.formats.gift import parse_gift, write_gift  # noqa: E402
from exams.bank.formats.htmltext import html_to_markdown  # noqa: E402
from exams.bank.formats.moodlexml import parse_moodle_xml, write_moodle_xml  # noqa: E402
from exams.markdown import render_inline_markdown, render_markdown  # noqa: E402

AGREE, DIFFER, UNSUPPORTED, NOT_APPLICABLE = "agree", "differ", "unsupported-as-expected", "n/a"
SUPPORTED_QTYPES = {"multichoice", "truefalse"}
# Moodle's question type → the name certprep gives it when it reports it unsupported.
UNSUPPORTED_QTYPES = {
    "essay": "essay",
    "match": "matching",
    "numerical": "numerical",
    "shortanswer": "short answer",
    "description": "description",
}


@dataclass(frozen=True)
class Row:
    case: str
    status: str
    detail: str


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, help="directory holding moodle_gift_cases.json and raw/")
    parser.add_argument("--report", type=Path, help="also write the table as Markdown to FILE")
    arguments = parser.parse_args()
    corpus = arguments.corpus or Path(
        os.environ.get("MOODLE_CORPUS") or REPO_ROOT.parent / "shared" / "corpora" / "moodle-formats"
    )
    if not (corpus / "moodle_gift_cases.json").is_file():
        print(f"conformance: no Moodle corpus at {corpus} (use --corpus DIR or MOODLE_CORPUS)", file=sys.stderr)
        return 2

    rows = [*gift_rows(corpus), *aiken_rows(corpus), *xml_rows(corpus)]
    width = max(len(row.case) for row in rows)
    for row in rows:
        print(f"{row.case:<{width}}  {row.status:<23}  {row.detail}")
    summary = totals(rows)
    print(f"conformance: {summary}")
    if arguments.report:
        arguments.report.write_text(report(rows, summary), encoding="utf-8")
        print(f"conformance: report written to {arguments.report}")
    return 1 if any(row.status == DIFFER for row in rows) else 0


def totals(rows: list[Row]) -> str:
    counted = [row for row in rows if row.status != NOT_APPLICABLE]
    agree = sum(row.status == AGREE for row in counted)
    differ = sum(row.status == DIFFER for row in counted)
    unsupported = sum(row.status == UNSUPPORTED for row in counted)
    return f"{agree} agree, {differ} differ, {unsupported} unsupported-as-expected"


def report(rows: list[Row], summary: str) -> str:
    """The rows as a Markdown document, per format."""
    lines = [
        "# Conformance with Moodle's own format tests",
        "",
        "Written by `make conformance` (`python tools/moodle_conformance.py --report docs/CONFORMANCE.md`), which "
        "reads Moodle's test cases and fixtures from `../shared/corpora/moodle-formats/` (kept outside the "
        "repository). Each case is **agree** (imported, or refused, as Moodle expects), "
        "**unsupported-as-expected** (a question type, file or image certprep does not hold, refused by name), "
        "**differ** (a disagreement: `make conformance` fails), or n/a.",
        "",
        f"Result: {summary}.",
    ]
    sections = {"gift": "GIFT", "aiken": "Aiken", "xml": "Moodle XML"}
    for prefix, title in sections.items():
        lines += ["", f"## {title}", "", "| case | result | detail |", "| --- | --- | --- |"]
        for row in rows:
            if row.case.split("/", 1)[0] == prefix:
                detail = row.detail.replace("|", "\\|").replace("\n", " ")
                lines.append(f"| `{row.case.split('/', 1)[1]}` | {row.status} | {detail} |")
    return "\n".join(lines) + "\n"


# --- GIFT -------------------------------------------------------------------------------


def gift_rows(corpus: Path) -> Iterator[Row]:
    cases = json.loads((corpus / "moodle_gift_cases.json").read_text(encoding="utf-8"))
    for case in cases["cases"]:
        yield gift_import_row(f"gift/{case['name']}", case["input_text"], case["expected"])
    comment_cases = cases.get("comment_metadata_cases", {}).get("cases", [])
    if comment_cases:
        yield Row(
            "gift/comment_metadata",
            NOT_APPLICABLE,
            f"{len(comment_cases)} cases on [tag:] and [id:] in comments; certprep imports neither",
        )
    for case in cases["export_cases"]:
        yield from gift_export_rows(case)
    for case in cases["file_cases"]:
        yield gift_file_row(corpus, case)


def gift_import_row(name: str, text: str, expected: dict) -> Row:
    qtype = expected["qtype"]
    result = parse_gift(text, skip_unsupported=True)
    if qtype in UNSUPPORTED_QTYPES:
        return unsupported_row(name, qtype, text, result)
    if qtype not in SUPPORTED_QTYPES:
        return Row(name, DIFFER, f"the corpus has a question type this script does not know: {qtype}")
    if result.errors or result.skipped or len(result.questions) != 1:
        return Row(name, DIFFER, f"expected one {qtype} question, got {describe(result)}")
    differences = compare_gift(result.questions[0], expected)
    if differences:
        return Row(name, DIFFER, "; ".join(differences))
    question = result.questions[0]
    return Row(name, AGREE, f"{qtype} → {question.kind}, {len(question.choices)} choices, key {key_labels(question)}")


def unsupported_row(name: str, qtype: str, text: str, result) -> Row:
    kind = UNSUPPORTED_QTYPES[qtype]
    if result.questions or [skip.kind for skip in result.skipped] != [kind]:
        return Row(name, DIFFER, f"Moodle reads a {qtype} question; certprep gave {describe(result)}")
    strict = parse_gift(text)
    if len(strict.errors) != 1 or kind not in strict.errors[0].message:
        return Row(name, DIFFER, f"without skipping, expected one error naming {kind!r}, got {strict.errors}")
    error = strict.errors[0]
    return Row(name, UNSUPPORTED, f"{qtype}: line {error.line}: {error.message}")


def moodle_text(text: str, text_format: str | None) -> str:
    """Moodle's text as certprep holds it: plain text is escaped into Markdown."""
    return escape_markdown(text) if text_format == "plain" else text


def compare_gift(question: ParsedQuestion, expected: dict) -> list[str]:
    differences = []

    def check(what: str, ours: object, moodle: object) -> None:
        if ours != moodle:
            differences.append(f"{what}: certprep {ours!r}, Moodle {moodle!r}")

    check("name", question.title, expected["name"])
    check("question text", question.stem, moodle_text(expected["questiontext"], expected.get("questiontextformat")))
    check(
        "general feedback",
        question.explanation,
        moodle_text(expected.get("generalfeedback", ""), expected.get("generalfeedbackformat")),
    )
    if "shuffleanswers" in expected:
        check("keep order", question.keep_order, not int(expected["shuffleanswers"]))
    if expected["qtype"] == "truefalse":
        check("single", question.kind, "single")
        correct_is_true = bool(expected["correctanswer"])
        check("choices", [choice.text for choice in question.choices], ["True", "False"])
        check("key", [choice.is_correct for choice in question.choices], [correct_is_true, not correct_is_true])
        for choice, side in zip(question.choices, ("feedbacktrue", "feedbackfalse")):
            if side in expected:
                moodle = moodle_text(expected[side]["text"], expected[side]["format"])
                check(f"{choice.text} feedback", choice.feedback, moodle)
        return differences
    check("single", question.kind, "single" if int(expected["single"]) else "multiple")
    answers = expected.get("answers", [])
    check("number of choices", len(question.choices), len(answers))
    for index, (choice, answer) in enumerate(zip(question.choices, answers)):
        check(f"choice {index + 1} text", choice.text, moodle_text(answer["text"], answer.get("text_format")))
        check(f"choice {index + 1} is a key", choice.is_correct, answer["fraction"] > 0)
        if "feedback" in answer:
            check(
                f"choice {index + 1} feedback",
                choice.feedback,
                moodle_text(answer["feedback"], answer.get("feedback_format")),
            )
    if question.kind == "multiple":
        check("choose", question.choose, sum(answer["fraction"] > 0 for answer in answers))
    return differences


def question_from_moodle(case_question: dict) -> ParsedQuestion:
    """A Moodle export case's question as certprep would hold it."""
    answers = case_question["answers"]
    keys = sum(answer["fraction"] > 0 for answer in answers)
    multiple = case_question["qtype"] == "multichoice" and not int(case_question.get("single", 1)) or keys > 1
    return ParsedQuestion(
        line=1,
        title=case_question["name"],
        stem=moodle_text(case_question["questiontext"], case_question["questiontextformat"]),
        explanation=moodle_text(case_question["generalfeedback"], case_question["generalfeedbackformat"]),
        kind="multiple" if multiple else "single",
        choose=keys if multiple else 1,
        keep_order=False,
        domain=None,
        choices=tuple(
            ParsedChoice(
                text=moodle_text(answer["text"], answer.get("text_format")),
                is_correct=answer["fraction"] > 0,
                feedback=moodle_text(answer["feedback"], answer.get("feedback_format")),
            )
            for answer in answers
        ),
    )


def gift_export_rows(case: dict) -> Iterator[Row]:
    name = f"gift/{case['name']}"
    moodle_question = case["question"]
    qtype = moodle_question["qtype"]
    moodle_output = case["expected_gift"]
    if qtype in UNSUPPORTED_QTYPES:
        yield unsupported_row(name, qtype, moodle_output, parse_gift(moodle_output, skip_unsupported=True))
        return
    expected = question_from_moodle(moodle_question)
    # Moodle's export, read by certprep, is the question Moodle exported …
    read = parse_gift(moodle_output, skip_unsupported=True)
    if read.errors or read.skipped or read.questions != (expected,):
        yield Row(f"{name} (read)", DIFFER, f"reading Moodle's export gave {describe(read)}, expected {expected}")
    else:
        yield Row(f"{name} (read)", AGREE, f"Moodle's export reads back as the {qtype} question")
    # … and certprep's own export of it reads back the same.
    written = parse_gift(write_gift([expected]))
    if written.questions != (expected,):
        yield Row(f"{name} (write)", DIFFER, f"certprep's export read back as {describe(written)}")
    else:
        yield Row(f"{name} (write)", AGREE, "certprep's export of the same question reads back equal")


def gift_file_row(corpus: Path, case: dict) -> Row:
    name = f"gift/{case['name']}"
    data = (corpus / case["input_file"]).read_bytes()
    expected = case["expected"]
    if "error" in expected:
        try:
            decode_utf8(data)
        except NotUtf8Error as error:
            return Row(name, AGREE, f"rejected: {error}")
        return Row(name, DIFFER, f"Moodle rejects this file ({expected['error']}); certprep decoded it")
    text = decode_utf8(data)
    result = parse_gift(text, skip_unsupported=True)
    differences = []
    found = len(result.questions) + len(result.skipped)
    if found != expected["question_count"]:
        differences.append(f"{found} questions, Moodle {expected['question_count']}")
    if result.errors:
        differences.append(f"errors where Moodle imports: {[str(error) for error in result.errors]}")
    lines = text.splitlines()
    for visible in expected.get("visible_after_parse", []):
        where = visible_in(result, visible, lines, field=lambda question: question.stem)
        if where is None:
            differences.append(f"no question shows {visible!r}")
    for visible in expected.get("visible_question_names", []):
        if visible_in(result, visible, lines, field=lambda question: question.title) is None:
            differences.append(f"no question is named {visible!r}")
    category = next((line for line in lines if line.startswith("$CATEGORY:")), None)
    if category is not None:
        domain = category.rstrip("/").rsplit("/", 1)[-1].strip()
        wrong = [question.domain for question in result.questions if question.domain != domain]
        if wrong:
            differences.append(f"domain should come from the category ({domain!r}), got {wrong}")
    if differences:
        return Row(name, DIFFER, "; ".join(differences))
    skipped = ", ".join(f"{skip.kind} (line {skip.line})" for skip in result.skipped) or "none"
    return Row(
        name,
        AGREE,
        f"{found} questions as Moodle: {len(result.questions)} imported, unsupported: {skipped}",
    )


def visible_in(result, text: str, lines: list[str], *, field: Callable[[ParsedQuestion], str]) -> str | None:
    """Where a text Moodle shows ends up: an imported question, or a question skipped as unsupported."""
    for question in result.questions:
        if text in html_to_text(field(question)):
            return f"line {question.line}"
    for skip in result.skipped:
        block = []
        for line in lines[skip.line - 1:]:
            if not line.strip():
                break
            block.append(line)
        if text in html_to_text("\n".join(block).replace("\\", "")):
            return f"skipped {skip.kind} on line {skip.line}"
    return None


def html_to_text(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


# --- Aiken ------------------------------------------------------------------------------


def aiken_rows(corpus: Path) -> Iterator[Row]:
    cases = json.loads((corpus / "moodle_aiken_cases.json").read_text(encoding="utf-8"))
    for case in cases["cases"]:
        yield aiken_import_row(f"aiken/{case['name']}", case["input_text"], case["expected"])
    for case in cases["file_cases"]:
        text = decode_utf8((corpus / case["input_file"]).read_bytes())
        yield aiken_import_row(f"aiken/{case['name']}", text, case["expected"])
    exports = cases["export_cases"]
    # Moodle's size check names its questions only by generator; the single-answer one
    # is the question the other export cases print, so it is read from there.
    printed = next(case["expected_aiken"] for case in exports if "expected_aiken" in case)
    reference = parse_aiken(printed).questions[0]
    for case in exports:
        yield from aiken_export_rows(case, reference=reference)


def aiken_import_row(name: str, text: str, expected: dict) -> Row:
    result = parse_aiken(text)
    differences = []
    moodle_questions = expected.get("questions") or ([expected] if "answers" in expected else [])
    count = expected.get("question_count", len(moodle_questions))
    if len(result.questions) != count:
        differences.append(f"{len(result.questions)} questions, Moodle {count}")
    for question, moodle in zip(result.questions, moodle_questions):
        differences.extend(compare_aiken(question, moodle))
    moodle_lines = sorted(
        int(number) for message in expected.get("error_output_contains", [])
        for number in re.findall(r"on line (\d+)", message)
    )
    our_lines = sorted(error.line for error in result.errors)
    if our_lines != moodle_lines:
        differences.append(f"errors on lines {our_lines}, Moodle {moodle_lines}")
    for visible in expected.get("visible_after_parse", []):
        if not any(visible in unescape_markdown(question.stem) for question in result.questions):
            differences.append(f"no question shows {visible!r}")
    if differences:
        return Row(name, DIFFER, "; ".join(differences))
    detail = f"{len(result.questions)} question{'' if len(result.questions) == 1 else 's'}"
    if result.errors:
        detail += "; errors: " + " | ".join(str(error) for error in result.errors)
    return Row(name, AGREE, detail)


def compare_aiken(question: ParsedQuestion, moodle: dict) -> list[str]:
    differences = []
    if question.title != moodle["name"]:
        differences.append(f"name: certprep {question.title!r}, Moodle {moodle['name']!r}")
    if question.kind != "single":
        differences.append("Aiken questions are single-answer")
    answers = moodle.get("answers", [])
    if "answer_count" in moodle and len(question.choices) != moodle["answer_count"]:
        differences.append(f"{len(question.choices)} choices, Moodle {moodle['answer_count']}")
    for index, (choice, answer) in enumerate(zip(question.choices, answers)):
        # Moodle keeps HTML-escaped text, certprep Markdown-escaped text: both must show
        # the same characters, escaped once.
        if unescape_markdown(choice.text) != html.unescape(answer["text"]):
            differences.append(f"choice {index + 1}: certprep {choice.text!r}, Moodle {answer['text']!r}")
        if choice.is_correct != (answer.get("fraction", 0) > 0):
            fraction = answer.get("fraction", 0)
            differences.append(f"choice {index + 1}: key certprep {choice.is_correct}, Moodle fraction {fraction}")
    return differences


def aiken_export_rows(case: dict, *, reference: ParsedQuestion) -> Iterator[Row]:
    name = f"aiken/{case['name']}"
    expected_text = case.get("expected_aiken")
    if expected_text is None:
        yield aiken_size_row(name, case, single=reference)
        if any("two_of_four" in description for description in case["questions"]):
            yield multiple_refused_row(name, reference)
        return
    read = parse_aiken(expected_text)
    if read.errors or len(read.questions) != 1:
        yield Row(f"{name} (read)", DIFFER, f"Moodle's export reads as {describe(read)}")
        return
    exported = read.questions[0]
    yield Row(f"{name} (read)", AGREE, f"Moodle's export reads back: key {key_labels(exported)}")
    source = exported
    for description in case["questions"]:
        flattened = re.search(r"with questiontext '(.*)'$", description)
        if flattened:
            # The case's question has HTML over two lines; Aiken export makes it one plain line.
            source = replace(exported, stem=flattened.group(1).replace("\\n", "\n"))
    written = write_aiken([source])
    yield Row(
        f"{name} (write)",
        AGREE if written == expected_text else DIFFER,
        "certprep writes Moodle's exact text" if written == expected_text else f"certprep wrote {written!r}",
    )
    if any("two_of_four" in description for description in case["questions"]):
        yield multiple_refused_row(name, exported)


def multiple_refused_row(name: str, single: ParsedQuestion) -> Row:
    two_keys = replace(
        single,
        kind="multiple",
        choose=2,
        choices=tuple(replace(choice, is_correct=index < 2) for index, choice in enumerate(single.choices)),
    )
    try:
        write_aiken([two_keys])
    except ExportError as error:
        return Row(f"{name} (multiple)", UNSUPPORTED, f"Moodle leaves it out; certprep refuses: {error.problems[0]}")
    return Row(f"{name} (multiple)", DIFFER, "a multiple-answer question was written as Aiken")


def aiken_size_row(name: str, case: dict, *, single: ParsedQuestion) -> Row:
    low, high = case["expected"]["download_size_bytes"]
    size = len(write_aiken([single]).encode("utf-8"))
    status = AGREE if low <= size <= high else DIFFER
    detail = f"the single-answer question exports as {size} bytes (Moodle {low}–{high})"
    return Row(name, status, detail)


def key_labels(question: ParsedQuestion) -> str:
    return "".join(chr(ord("A") + index) for index, choice in enumerate(question.choices) if choice.is_correct)


def describe(result) -> str:
    parts = [f"{len(result.questions)} questions"]
    if result.skipped:
        parts.append("skipped " + ", ".join(skip.kind for skip in result.skipped))
    if result.errors:
        parts.append("errors " + " | ".join(str(error) for error in result.errors))
    return "; ".join(parts)


# --- Moodle XML ---------------------------------------------------------------------------

XML_FIXTURES = "raw/moodle/question/format/xml/tests/fixtures"
# Moodle's texts carry a format; what certprep reads them as (see exams/formats/moodlexml.py).
FORMAT_NAMES = {"FORMAT_MOODLE": "moodle_auto_format", "FORMAT_HTML": "html", "FORMAT_PLAIN": "plain_text", "FORMAT_MARKDOWN": "markdown"}
# Fields Moodle's tests assert that certprep has no place for (scoring is all or nothing,
# feedback is per choice): listed in the detail, not compared.
NOT_HELD = (
    "correctfeedback", "partiallycorrectfeedback", "incorrectfeedback", "shownumcorrect", "hint", "hintshownumcorrect",
    "hintclearwrong", "defaultmark", "length", "penalty", "questiontextformat",
)


def shown(markdown: str, *, inline: bool = False) -> str:
    """What a learner reads of certprep Markdown: its rendered text, spaces collapsed."""
    rendered = render_inline_markdown(markdown) if inline else render_markdown(markdown)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rendered)).split())


def shown_moodle(text: str, text_format: str | None) -> str:
    """What Moodle shows of one of its texts, as text (HTML tags dropped)."""
    if FORMAT_NAMES.get(text_format or "FORMAT_HTML", text_format) == "plain_text":
        return " ".join(text.split())
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def xml_rows(corpus: Path) -> Iterator[Row]:
    path = corpus / "moodle_xml_cases.json"
    if not path.is_file():
        yield Row("xml/cases", DIFFER, f"no {path.name} in the corpus")
        return
    for case in json.loads(path.read_text(encoding="utf-8")):
        name = "xml/" + case["test"].split("::")[-1]
        if case["kind"] == "import":
            yield xml_import_row(name, case)
        else:
            yield from xml_export_rows(name, case)
    for fixture, expected in XML_FIXTURE_EXPECTATIONS.items():
        yield from xml_fixture_rows(corpus, fixture, expected)


def in_quiz(question_xml: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n{question_xml}\n</quiz>\n'


def xml_import_row(name: str, case: dict) -> Row:
    expected = case["expects"]
    result = parse_moodle_xml(in_quiz(case["input"]))
    if "questiontextitemid_files" in expected:
        # Moodle keeps the text's file (moodle.txt) in the question; certprep holds image exhibits only.
        files = [file["filename"] for file in expected["questiontextitemid_files"]["files"]]
        if not result.questions and all(any(repr(file) in error.message for error in result.errors) for file in files):
            return Row(name, UNSUPPORTED, f"Moodle keeps {', '.join(files)}; certprep refuses it by name: {result.errors[0]}")
        return Row(name, DIFFER, f"expected {files} refused by name, got {describe(result)}")
    if result.errors or len(result.questions) != 1:
        return Row(name, DIFFER, f"expected one {expected['qtype']} question, got {describe(result)}")
    question = result.questions[0]
    differences = compare_xml(question, expected)
    if differences:
        return Row(name, DIFFER, "; ".join(differences))
    ignored = [field for field in NOT_HELD if field in expected]
    return Row(
        name,
        AGREE,
        f"{expected['qtype']} → {question.kind}, {len(question.choices)} choices, key {key_labels(question)}"
        + (f"; not held: {', '.join(ignored)}" if ignored else ""),
    )


def compare_xml(question: ParsedQuestion, expected: dict) -> list[str]:
    differences = []

    def check(what: str, ours: object, moodle: object) -> None:
        if ours != moodle:
            differences.append(f"{what}: certprep {ours!r}, Moodle {moodle!r}")

    text_format = expected.get("questiontextformat")
    check("name", question.title, expected["name"])
    check("question text", shown(question.stem), shown_moodle(expected["questiontext"], text_format))
    if "generalfeedback" in expected:
        check("general feedback", shown(question.explanation), shown_moodle(expected["generalfeedback"], text_format))
    if "idnumber" in expected:
        check("idnumber", question.idnumber, expected["idnumber"])
    if "shuffleanswers" in expected:
        check("keep order", question.keep_order, not int(expected["shuffleanswers"]))
    if expected["qtype"] == "truefalse":
        check("choices", [choice.text for choice in question.choices], ["True", "False"])
        truth = bool(expected["correctanswer"])
        check("key", [choice.is_correct for choice in question.choices], [truth, not truth])
        for choice, side in zip(question.choices, ("feedbacktrue", "feedbackfalse")):
            if side in expected:
                moodle = shown_moodle(expected[side]["text"], expected[side]["format"])
                check(f"{choice.text} feedback", shown(choice.feedback, inline=True), moodle)
        return differences
    check("single", question.kind, "single" if expected["single"] else "multiple")
    answers = expected.get("answer", [])
    check("number of choices", len(question.choices), len(answers))
    for index, (choice, answer, fraction) in enumerate(zip(question.choices, answers, expected.get("fraction", []))):
        check(f"choice {index + 1} text", shown(choice.text, inline=True), shown_moodle(answer["text"], answer["format"]))
        check(f"choice {index + 1} is a key", choice.is_correct, fraction > 0)
    for index, (choice, feedback) in enumerate(zip(question.choices, expected.get("feedback", []))):
        check(f"choice {index + 1} feedback", shown(choice.feedback, inline=True), shown_moodle(feedback["text"], feedback["format"]))
    if question.kind == "multiple":
        check("choose", question.choose, sum(fraction > 0 for fraction in expected.get("fraction", [])))
    return differences


def xml_question_from_moodle(qdata: dict) -> ParsedQuestion:
    """A Moodle export test's question as certprep holds it (texts as its importer reads them)."""

    def markdown(text: str, text_format: str, *, inline: bool = False) -> str:
        if FORMAT_NAMES[text_format] == "plain_text":
            return escape_markdown(text)
        return html_to_markdown(text, inline=inline).markdown

    options = qdata["options"]
    answers = list(options["answers"].values())
    stem = markdown(qdata["questiontext"], qdata["questiontextformat"])
    explanation = markdown(qdata["generalfeedback"], qdata["generalfeedbackformat"])
    if qdata["qtype"] == "truefalse":
        true, false = options["answers"][str(options["trueanswer"])], options["answers"][str(options["falseanswer"])]
        choices = tuple(
            ParsedChoice(text=label, is_correct=answer["fraction"] > 0, feedback=markdown(answer["feedback"], answer["feedbackformat"], inline=True))
            for label, answer in (("True", true), ("False", false))
        )
        kind, keep_order = "single", True
    else:
        choices = tuple(
            ParsedChoice(
                # The exporter writes an answer with no format set as plain text.
                text=escape_markdown(answer["answer"]),
                is_correct=answer["fraction"] > 0,
                feedback=markdown(answer["feedback"], answer["feedbackformat"], inline=True),
            )
            for answer in answers
        )
        keys = sum(choice.is_correct for choice in choices)
        kind = "multiple" if not int(options["single"]) or keys > 1 else "single"
        keep_order = not int(options["shuffleanswers"])
    keys = sum(choice.is_correct for choice in choices)
    return ParsedQuestion(
        line=1,
        title=qdata["name"],
        stem=stem,
        explanation=explanation,
        kind=kind,
        choose=keys if kind == "multiple" else 1,
        keep_order=keep_order,
        domain=None,
        choices=choices,
        idnumber=qdata.get("idnumber") or "",
    )


def xml_export_rows(name: str, case: dict) -> Iterator[Row]:
    expected = xml_question_from_moodle(case["input"]["qdata"])
    # Moodle's export, read by certprep, is the question Moodle exported …
    read = parse_moodle_xml(in_quiz(case["expected_xml"]))
    if read.errors or read.questions != (expected,):
        yield Row(f"{name} (read)", DIFFER, f"reading Moodle's export gave {describe(read)}, expected {expected}")
    else:
        yield Row(f"{name} (read)", AGREE, f"Moodle's export reads back as the {case['input']['qdata']['qtype']} question (hints and combined feedback not held)")
    # … and certprep's own export of it reads back the same.
    written = parse_moodle_xml(write_moodle_xml([expected]))
    if written.questions != (expected,):
        yield Row(f"{name} (write)", DIFFER, f"certprep's export read back as {describe(written)}")
    else:
        yield Row(f"{name} (write)", AGREE, "certprep's export of the same question reads back equal")


# What Moodle's tests expect of each fixture (XML.md says which test reads it):
# questions as (name, category path below $course$), the other question types Moodle
# imports that certprep leaves out, and whether Moodle refuses the file.
XML_FIXTURE_EXPECTATIONS = {
    # qformat_xml_import_export_test::test_import_category
    "category_with_description.xml": {"questions": [("Alpha Question", "Alpha")]},
    # ::test_import_nested_categories_with_questions (the essay is imported by Moodle)
    "nested_categories_with_questions.xml": {
        "questions": [
            ("Iota Question", "Iota"), ("Kappa Question", "Iota/Kappa"), ("Lambda Question", "Iota/Kappa/Lambda"),
            ("Mu Question", "Iota/Mu"),
        ],
        "other_types": ["essay"],
    },
    # ::test_import_old_format
    "old_format_file.xml": {"questions": [("Pi Question", "Pi"), ("Rho Question", "Pi/Rho")]},
    # ::test_import_invalid_grades (newer Moodle): the grade 0.33 is refused, nothing imported
    "error_invalid_grades.xml": {"refused": "33%"},
    # ::test_export_category reads it as input (and expects it back as output)
    "export_category.xml": {"questions": [("Alpha Question", "Alpha")], "round_trip": True},
    # ::test_export_category_with_special_chars expects it as output: idnumber "T & F"
    "html_chars_in_idnumbers.xml": {"questions": [("Alpha Question", "Alpha")], "idnumbers": ["T & F"], "round_trip": True},
    # behat import_export.feature uploads these three
    "truefalse.xml": {"questions": [("Moodle acronym (False)", "Default for testhead/TrueFalse"), ("Moodle acronym (True)", "Default for testhead/TrueFalse")]},
    "multichoice.xml": {"questions": [("Greeting", "Default for testhead/Multichoice")]},
    "sample_questions_with_old_image_tag.xml": {
        "questions": [("mcq with image", "Default for Test images in backup")],
        "other_types": ["embedded answers (cloze)"],
        "exhibits": {"mcq with image": ["moodle.png"]},
    },
}


def xml_fixture_rows(corpus: Path, fixture: str, expected: dict) -> Iterator[Row]:
    name = f"xml/{fixture}"
    path = corpus / XML_FIXTURES / fixture
    text = decode_utf8(path.read_bytes())
    result = parse_moodle_xml(text, skip_unsupported=True)
    if "refused" in expected:
        refused = not result.questions or not result.ok
        if refused and any(expected["refused"] in error.message for error in result.errors):
            yield Row(name, AGREE, f"refused as Moodle refuses it: {result.errors[0]}")
        else:
            yield Row(name, DIFFER, f"Moodle refuses this file (grade {expected['refused']}); certprep gave {describe(result)}")
        return
    if result.errors:
        # Moodle imports the file; certprep must refuse it only for what it does not hold.
        unsupported = [error for error in result.errors if "certprep shows images only" in error.message
                       or "which is not an image certprep can show" in error.message]
        if len(unsupported) == len(result.errors):
            yield Row(name, UNSUPPORTED, "refused by name: " + " | ".join(str(error) for error in unsupported))
        else:
            yield Row(name, DIFFER, f"errors where Moodle imports: {describe(result)}")
        return
    differences = []
    placed = [(question.title, question.domain, question.topic) for question in result.questions]
    wanted = []
    for title, category in expected["questions"]:
        levels = category.split("/")
        wanted.append((title, levels[0], levels[1] if len(levels) > 1 else ""))
    if placed != wanted:
        differences.append(f"questions {placed}, expected {wanted} (domain and topic from the category path)")
    skipped = [skip.kind for skip in result.skipped]
    if skipped != expected.get("other_types", []):
        differences.append(f"left out {skipped}, expected {expected.get('other_types', [])}")
    if "idnumbers" in expected and [question.idnumber for question in result.questions] != expected["idnumbers"]:
        differences.append(f"idnumbers {[question.idnumber for question in result.questions]}, Moodle {expected['idnumbers']}")
    for title, images in expected.get("exhibits", {}).items():
        question = next((question for question in result.questions if question.title == title), None)
        if question is None or [image for image, _ in question.images] != images:
            differences.append(f"{title!r} should show {images} as its exhibit")
    if expected.get("round_trip"):
        again = parse_moodle_xml(write_moodle_xml(result.questions))
        if again.questions != result.questions:
            differences.append(f"certprep's export reads back as {describe(again)}")
    if differences:
        yield Row(name, DIFFER, "; ".join(differences))
        return
    deeper = [title for title, category in expected["questions"] if category.count("/") > 1]
    count = len(result.questions)
    detail = f"{count} question{'' if count == 1 else 's'} in {'its' if count == 1 else 'their'} domain and topic"
    if deeper:
        detail += f" (categories below the topic fold into it: {', '.join(deeper)})"
    if expected.get("round_trip"):
        detail += "; certprep's export reads back equal"
    yield Row(name, AGREE, detail)
    for skip in result.skipped:
        strict = parse_moodle_xml(text)
        refused = any(error.line == skip.line and skip.kind in error.message for error in strict.errors)
        yield Row(
            f"{name} ({skip.kind})",
            UNSUPPORTED if refused else DIFFER,
            f"line {skip.line}: Moodle imports this {skip.kind} question; certprep "
            + ("refuses it (or skips it on request)" if refused else "did not refuse it without --skip-unsupported"),
        )


if __name__ == "__main__":
    sys.exit(main())
