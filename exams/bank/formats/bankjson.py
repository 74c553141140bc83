"""certprep's own question-bank JSON: lossless (titles, feedback, keep_order, errata)."""
# docs/bank-format.schema.json describes the layout; this module checks it with plain
# code (no schema library) and keeps to the same rules. Choice labels are positional (the
# first choice is A, the second B, …) and errata name the published key by those labels.
# An error about a question carries the question's position (1 for the first) as its
# line, and says so; an error about the whole file carries line 0, except invalid JSON,
# which carries the file's own line.
import base64
import binascii
import json
import re
from collections.abc import Iterable
from datetime import date
from typing import Any

from exams.bank.formats import (
    DEFAULT_DIFFICULTY,
    DEFAULT_STATUS,
    DIFFICULTIES,
    ERRATUM_POLICIES,
    ERRATUM_SOURCES,
    ERRATUM_STATUSES,
    KINDS,
    STATUSES,
    ExportError,
    FormatError,
    ParsedChoice,
    ParsedErratum,
    ParsedQuestion,
    ParseResult,
    choice_label,
    exhibit_images,
    question_problems,
)

__all__ = ["FORMAT", "VERSION", "parse_json", "write_json"]

FORMAT = "certprep-bank"
VERSION = 1

_REQUIRED = object()
_FILE_KEYS = ("format", "version", "exam", "questions")
_QUESTION_KEYS = (
    "title", "topic", "exhibit", "stem", "explanation", "sources", "kind", "choose", "keep_order", "domain",
    "exclusion_group", "choices", "errata", "exhibit_images", "idnumber", "difficulty", "reviewed_on",
    "status",
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_IMAGE_KEYS = ("name", "data")
_CHOICE_KEYS = ("label", "text", "is_correct", "feedback")
_ERRATUM_KEYS = ("published_key", "note", "source", "status", "policy")


def write_json(questions: Iterable[ParsedQuestion], *, exam_code: str) -> str:
    """The questions of one exam as a certprep bank file."""
    questions = list(questions)
    problems = [
        f"question {number} ({question.title!r}): {problem}"
        for number, question in enumerate(questions, start=1)
        for problem in question_problems(question)
    ]
    if not exam_code.strip():
        problems.insert(0, "the exam code is empty")
    if problems:
        raise ExportError(format_name="certprep JSON", problems=tuple(problems))
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exam": exam_code,
        "questions": [_question_document(question) for question in questions],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _question_document(question: ParsedQuestion) -> dict[str, Any]:
    return {
        "title": question.title,
        "topic": question.topic,
        "exhibit": question.exhibit,
        "stem": question.stem,
        "explanation": question.explanation,
        "sources": question.sources,
        "kind": question.kind,
        "choose": question.choose,
        "keep_order": question.keep_order,
        "domain": question.domain,
        "exclusion_group": question.exclusion_group,
        "idnumber": question.idnumber,
        "difficulty": question.difficulty,
        "reviewed_on": question.reviewed_on.isoformat() if question.reviewed_on else None,
        "status": question.status,
        "choices": [
            {
                "label": choice_label(index),
                "text": choice.text,
                "is_correct": choice.is_correct,
                "feedback": choice.feedback,
            }
            for index, choice in enumerate(question.choices)
        ],
        "errata": [
            {
                "published_key": list(erratum.published_key),
                "note": erratum.note,
                "source": erratum.source,
                "status": erratum.status,
                "policy": erratum.policy,
            }
            for erratum in question.errata
        ],
        "exhibit_images": [
            {"name": name, "data": base64.b64encode(data).decode("ascii")} for name, data in question.images
        ],
    }


class _DuplicateKey(ValueError):
    pass


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads would silently keep the last of two equal keys; a hand-edited bank
    # with a doubled "is_correct" deserves an error instead.
    document = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed in a bank file")


def parse_json(text: str) -> ParseResult:
    """The questions of a certprep bank file, with every problem found."""
    try:
        document = json.loads(
            text.removeprefix("\ufeff"), object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        return _failed(FormatError(line=error.lineno, message=f"not valid JSON: {error.msg} ({where})"))
    except _DuplicateKey as error:
        problem = f"the key {error.args[0]!r} appears twice in one object"
        return _failed(FormatError(line=0, message=f"not a valid bank file: {problem}"))
    except ValueError as error:
        return _failed(FormatError(line=0, message=f"not a valid bank file: {error}"))
    except RecursionError:
        return _failed(FormatError(line=0, message="not a valid bank file: it is nested too deeply"))

    report = _Report()
    if not isinstance(document, dict):
        return _failed(FormatError(line=0, message="/: a bank file is a JSON object"))
    if document.get("format") != FORMAT:
        return _failed(FormatError(line=0, message=f"/format: not a certprep bank file (format must be {FORMAT!r})"))
    version = document.get("version")
    if version != VERSION or isinstance(version, bool):
        problem = f"unsupported version {version!r}; this certprep reads version {VERSION}"
        return _failed(FormatError(line=0, message=f"/version: {problem}"))
    file_check = report.at(line=0, pointer="")
    file_check.unknown_keys(document, _FILE_KEYS)
    exam_code = file_check.value(document, "exam", "string")
    if isinstance(exam_code, str) and not exam_code.strip():
        file_check.fail("/exam", "the exam code is empty")
    items = file_check.value(document, "questions", "array")
    questions = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        question = _read_question(item, index=index, report=report)
        if question is not None:
            questions.append(question)
    return ParseResult(
        questions=tuple(questions),
        errors=tuple(report.errors),
        exam_code=exam_code if isinstance(exam_code, str) else None,
    )


def _failed(error: FormatError) -> ParseResult:
    return ParseResult(errors=(error,))


class _Report:
    def __init__(self) -> None:
        self.errors: list[FormatError] = []

    def at(self, *, line: int, pointer: str) -> "_Check":
        return _Check(report=self, line=line, base=pointer)


_KIND_NAMES = {
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "array": "an array",
    "object": "an object",
    "string or null": "a string or null",
}
_KIND_TESTS = {
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
    "string or null": lambda value: value is None or isinstance(value, str),
}


class _Check:
    """Problems under one JSON pointer, reported against a question (or the file)."""

    def __init__(self, *, report: _Report, line: int, base: str) -> None:
        self.report = report
        self.line = line
        self.base = base
        self.failed = False

    def fail(self, pointer: str, problem: str) -> None:
        self.failed = True
        where = pointer or "/"
        if self.line:
            message = f"question {self.line}, {where}: {problem} (for JSON the line number is the question's position)"
        else:
            message = f"{where}: {problem}"
        self.report.errors.append(FormatError(line=self.line, message=message))

    def value(
        self, container: dict, key: str, kind: str, *, pointer: str | None = None, default: Any = _REQUIRED
    ) -> Any:
        pointer = f"{self.base if pointer is None else pointer}/{key}"
        if key not in container:
            if default is _REQUIRED:
                self.fail(pointer, "is missing")
            return default
        value = container[key]
        if not _KIND_TESTS[kind](value):
            self.fail(pointer, f"must be {_KIND_NAMES[kind]}, not {json.dumps(value, ensure_ascii=False)[:60]}")
            return default if default is not _REQUIRED else None
        return value

    def unknown_keys(self, container: dict, known: tuple[str, ...], *, pointer: str | None = None) -> None:
        for key in container:
            if key not in known:
                where = f"{self.base if pointer is None else pointer}/{key}"
                self.fail(where, f"unknown key (expected {', '.join(known)})")

    def one_of(self, value: Any, allowed: tuple[str, ...], pointer: str) -> None:
        if isinstance(value, str) and value not in allowed:
            self.fail(pointer, f"must be one of {', '.join(repr(option) for option in allowed)}")


def _read_question(item: Any, *, index: int, report: _Report) -> ParsedQuestion | None:
    here = f"/questions/{index}"
    check = report.at(line=index + 1, pointer=here)
    if not isinstance(item, dict):
        check.fail(here, "a question is a JSON object")
        return None
    check.unknown_keys(item, _QUESTION_KEYS)
    title = check.value(item, "title", "string")
    stem = check.value(item, "stem", "string")
    explanation = check.value(item, "explanation", "string", default="")
    topic = check.value(item, "topic", "string", default="")
    exhibit = check.value(item, "exhibit", "string", default="")
    sources = check.value(item, "sources", "string", default="")
    exclusion_group = check.value(item, "exclusion_group", "string", default="")
    idnumber = check.value(item, "idnumber", "string", default="")
    image_items = check.value(item, "exhibit_images", "array", default=[])
    kind = check.value(item, "kind", "string")
    check.one_of(kind, KINDS, f"{here}/kind")
    choose = check.value(item, "choose", "integer", default=None)
    keep_order = check.value(item, "keep_order", "boolean", default=False)
    domain = check.value(item, "domain", "string or null", default=None)
    choice_items = check.value(item, "choices", "array", default=[])
    erratum_items = check.value(item, "errata", "array", default=[])
    difficulty = check.value(item, "difficulty", "string", default=DEFAULT_DIFFICULTY)
    check.one_of(difficulty, DIFFICULTIES, f"{here}/difficulty")
    reviewed_on = _review_date(check.value(item, "reviewed_on", "string or null", default=None), check=check, pointer=f"{here}/reviewed_on")
    # A file from before status lands as drafts, as every other format's questions do.
    question_status = check.value(item, "status", "string", default=DEFAULT_STATUS)
    check.one_of(question_status, STATUSES, f"{here}/status")

    choices = []
    for position, choice_item in enumerate(choice_items):
        at = f"{here}/choices/{position}"
        if not isinstance(choice_item, dict):
            check.fail(at, "a choice is a JSON object")
            continue
        check.unknown_keys(choice_item, _CHOICE_KEYS, pointer=at)
        label = check.value(choice_item, "label", "string", pointer=at)
        if isinstance(label, str) and label != choice_label(position):
            expected = choice_label(position)
            check.fail(f"{at}/label", f"expected {expected!r}: labels run A, B, C… in the order of the choices")
        choices.append(
            ParsedChoice(
                text=check.value(choice_item, "text", "string", pointer=at),
                is_correct=check.value(choice_item, "is_correct", "boolean", pointer=at),
                feedback=check.value(choice_item, "feedback", "string", pointer=at, default=""),
            )
        )

    errata = []
    for position, erratum_item in enumerate(erratum_items):
        at = f"{here}/errata/{position}"
        if not isinstance(erratum_item, dict):
            check.fail(at, "an erratum is a JSON object")
            continue
        check.unknown_keys(erratum_item, _ERRATUM_KEYS, pointer=at)
        published_key = check.value(erratum_item, "published_key", "array", pointer=at) or []
        for slot, label in enumerate(published_key):
            if not isinstance(label, str):
                check.fail(f"{at}/published_key/{slot}", "a published key lists choice labels (strings)")
        source = check.value(erratum_item, "source", "string", pointer=at, default="imported")
        status = check.value(erratum_item, "status", "string", pointer=at)
        policy = check.value(erratum_item, "policy", "string", pointer=at, default="")
        check.one_of(source, ERRATUM_SOURCES, f"{at}/source")
        check.one_of(status, ERRATUM_STATUSES, f"{at}/status")
        check.one_of(policy, ERRATUM_POLICIES, f"{at}/policy")
        errata.append(
            ParsedErratum(
                published_key=tuple(published_key),
                note=check.value(erratum_item, "note", "string", pointer=at, default=""),
                source=source,
                status=status,
                policy=policy,
            )
        )

    images = []
    named = set()
    for position, image_item in enumerate(image_items or []):
        at = f"{here}/exhibit_images/{position}"
        if not isinstance(image_item, dict):
            check.fail(at, "an exhibit image is a JSON object with a name and base64 data")
            continue
        check.unknown_keys(image_item, _IMAGE_KEYS, pointer=at)
        name = check.value(image_item, "name", "string", pointer=at)
        data = check.value(image_item, "data", "string", pointer=at)
        if isinstance(name, str):
            named.add(name)
        if isinstance(name, str) and isinstance(data, str):
            try:
                images.append((name, base64.b64decode(data, validate=True)))
            except (binascii.Error, ValueError):
                check.fail(f"{at}/data", "is not valid base64")
    if isinstance(exhibit, str):
        for name in exhibit_images(exhibit):
            if name not in named:
                check.fail(f"{here}/exhibit", f"shows the image {name!r}, which exhibit_images does not carry")

    if check.failed:
        return None
    question = ParsedQuestion(
        line=index + 1,
        title=title,
        stem=stem,
        explanation=explanation,
        kind=kind,
        choose=choose if choose is not None else _keys_to_choose(kind=kind, choices=choices),
        keep_order=keep_order,
        domain=domain,
        choices=tuple(choices),
        errata=tuple(errata),
        topic=topic,
        exhibit=exhibit,
        sources=sources,
        exclusion_group=exclusion_group,
        images=tuple(images),
        idnumber=idnumber,
        difficulty=difficulty,
        reviewed_on=reviewed_on,
        status=question_status,
    )
    for problem in question_problems(question):
        check.fail(here, problem)
    return None if check.failed else question


def _keys_to_choose(*, kind: str, choices: list[ParsedChoice]) -> int:
    # choose may be left out: a multiple-select question picks as many as it has keys.
    return sum(choice.is_correct for choice in choices) if kind == "multiple" else 1


def _review_date(value: str | None, *, check: "_Check", pointer: str) -> date | None:
    # A calendar date, YYYY-MM-DD, or null for never reviewed.
    if value is None:
        return None
    if _ISO_DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass  # 2026-13-01: the right shape, no such day
    check.fail(pointer, f"must be a date as YYYY-MM-DD or null, not {json.dumps(value, ensure_ascii=False)[:60]}")
    return None
