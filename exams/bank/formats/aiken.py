"""Aiken import and export: one-line questions with lettered options and an ANSWER line."""
# Aiken is plain text, so import escapes its texts into Markdown (a `<` or `*` shows as
# written) and export turns Markdown back into plain text. Import follows Moodle's
# reader: an option is a capital letter, `.` or `)`, then its text (the space is
# optional); blank lines between questions are optional; a title is made from the text.
#
# Export holds single-answer questions only and refuses multiple-select ones, listing
# every refusal. Text over several lines is joined into one (HTML tags dropped), as
# Moodle does. Titles, feedback, explanations, domains, keep_order and errata are lost.
import html
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field

from exams.bank.formats import (
    TRIM,
    ExportError,
    FormatError,
    ParsedChoice,
    ParsedQuestion,
    ParseResult,
    choice_label,
    default_title,
    escape_markdown,
    exhibit_images,
    question_problems,
)

__all__ = ["parse_aiken", "write_aiken"]

_OPTION = re.compile(r"([A-Z])[.)]")
_ANSWER = "ANSWER:"
_MAX_CHOICES = 26


@dataclass
class _Draft:
    line: int
    stem: str
    choices: list[str] = field(default_factory=list)
    errors: list[FormatError] = field(default_factory=list)


def parse_aiken(text: str) -> ParseResult:
    """Every question of an Aiken file, with every error found (by the line it is on)."""
    questions: list[ParsedQuestion] = []
    errors: list[FormatError] = []
    draft: _Draft | None = None
    for number, raw in enumerate(re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff")), start=1):
        line = raw.strip(TRIM)
        if not line:
            continue
        if option := _OPTION.match(line):
            if draft is None:
                errors.append(FormatError(line=number, message="an option line comes before any question text"))
                continue
            expected = choice_label(len(draft.choices))
            if option.group(1) != expected:
                draft.errors.append(
                    FormatError(line=number, message=f"option {option.group(1)} is out of order: expected {expected}")
                )
            choice = line[2:].strip(TRIM)
            if not choice:
                draft.errors.append(FormatError(line=number, message=f"option {option.group(1)} has no text"))
            draft.choices.append(choice)
        elif line.startswith(_ANSWER):
            if draft is None:
                errors.append(FormatError(line=number, message="an ANSWER line comes before any question text"))
                continue
            question = _finish(draft, answer=line[len(_ANSWER):].strip(TRIM), line=number)
            errors.extend(draft.errors)
            if question is not None:
                questions.append(question)
            draft = None
        else:
            if draft is not None:
                errors.extend(draft.errors)
                errors.append(
                    FormatError(
                        line=number,
                        message=f"the question on line {draft.line} has no ANSWER line before the next question "
                        "starts here (an Aiken question's text is one line)",
                    )
                )
            draft = _Draft(line=number, stem=line)
    if draft is not None:
        errors.extend(draft.errors)
        errors.append(FormatError(line=draft.line, message=f"the question on line {draft.line} has no ANSWER line"))
    return ParseResult(questions=tuple(questions), errors=tuple(sorted(errors, key=lambda error: error.line)))


def _finish(draft: _Draft, *, answer: str, line: int) -> ParsedQuestion | None:
    labels = [choice_label(index) for index in range(len(draft.choices))]
    if len(draft.choices) < 2:
        draft.errors.append(
            FormatError(line=line, message=f"the question on line {draft.line} needs at least two options")
        )
    elif len(answer) != 1 or answer not in string.ascii_uppercase:
        draft.errors.append(
            FormatError(line=line, message=f"ANSWER must name one option letter (Aiken has one answer), not {answer!r}")
        )
    elif answer not in labels:
        draft.errors.append(FormatError(line=line, message=f"ANSWER {answer} is not one of the options"))
    if draft.errors:
        return None
    return ParsedQuestion(
        line=draft.line,
        title=default_title(draft.stem),
        stem=escape_markdown(draft.stem),
        explanation="",
        kind="single",
        choose=1,
        keep_order=False,
        domain=None,
        choices=tuple(
            ParsedChoice(text=escape_markdown(choice), is_correct=label == answer)
            for label, choice in zip(labels, draft.choices)
        ),
    )


def write_aiken(questions: Iterable[ParsedQuestion]) -> str:
    """Aiken text for single-answer questions; raises ExportError listing every question it cannot hold."""
    blocks = []
    problems = []
    for number, question in enumerate(questions, start=1):
        own = list(question_problems(question))
        if question.kind != "single":
            own.append("Aiken holds single-answer questions only; this one is multiple-select")
        if exhibit_images(question.exhibit):
            own.extend(f"Aiken cannot carry its image exhibit {name!r}" for name in exhibit_images(question.exhibit))
        elif question.exhibit.strip():
            own.append("Aiken is one line of text per question and cannot carry its exhibit")
        if len(question.choices) > _MAX_CHOICES:
            own.append(f"Aiken letters options A to Z; this question has {len(question.choices)}")
        stem = _plain_line(question.stem)
        if _OPTION.match(stem) or stem.startswith(_ANSWER):
            own.append("its text would read as an option or ANSWER line (it starts like 'A.' or 'ANSWER:')")
        if not stem:
            own.append("its text is empty as plain text")
        choices = [_plain_line(choice.text) for choice in question.choices]
        own.extend(
            f"choice {choice_label(index)} is empty as plain text" for index, text in enumerate(choices) if not text
        )
        problems.extend(f"question {number} ({question.title!r}): {problem}" for problem in own)
        if own:
            continue
        lines = [stem]
        lines.extend(f"{choice_label(index)}) {text}" for index, text in enumerate(choices))
        key = next(index for index, choice in enumerate(question.choices) if choice.is_correct)
        lines.append(f"{_ANSWER} {choice_label(key)}")
        blocks.append("\n".join(lines) + "\n")
    if problems:
        raise ExportError(format_name="Aiken", problems=tuple(problems))
    return "\n".join(blocks)


_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", re.DOTALL)
_BLOCK_TAG = re.compile(r"</?(?:p|div|br|li|ul|ol|h[1-6]|pre|blockquote|table|tr|hr)\b", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_PUNCTUATION = frozenset(string.punctuation)


def _plain_line(markdown: str) -> str:
    """Markdown as one line of plain text: escapes undone, HTML tags dropped, lines joined.

    For text that came from Aiken (escaped plain text) this gives back exactly that text.
    """
    out = []
    index = 0
    while index < len(markdown):
        char = markdown[index]
        if char == "\\" and markdown[index + 1:index + 2] in _PUNCTUATION:
            out.append(markdown[index + 1])
            index += 2
        elif char == "`":
            # A code span is shown as written, backticks and all, with no escapes inside.
            rest = markdown[index:]
            ticks = "`" * (len(rest) - len(rest.lstrip("`")))
            end = markdown.find(ticks, index + len(ticks))
            stop = index + len(ticks) if end < 0 else end + len(ticks)
            out.append(markdown[index:stop])
            index = stop
        elif char == "<" and (tag := _TAG.match(markdown, index)):
            out.append("\n" if _BLOCK_TAG.match(tag.group()) else "")
            index = tag.end()
        elif char == "&" and (entity := _ENTITY.match(markdown, index)):
            out.append(html.unescape(entity.group()))
            index = entity.end()
        else:
            out.append(char)
            index += 1
    return re.sub(r"[ \t]*\n[ \t\n]*", " ", "".join(out)).strip(TRIM)
