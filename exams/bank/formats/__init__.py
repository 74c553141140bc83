"""Plain types shared by the question-bank parsers and writers (GIFT, Aiken, certprep JSON)."""
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from exams.bounds import (
    DEFAULT_DIFFICULTY,
    DEFAULT_STATUS,
    DEFAULT_TITLE_LENGTH,
    DIFFICULTIES,
    ERRATUM_POLICIES,
    ERRATUM_SOURCES,
    ERRATUM_STATUSES,
    IDNUMBER_MAX_LENGTH,
    KINDS,
    MAX_CHOICES,
    MIN_CHOICES,
    STATUSES,
    TEXT_LIMITS,
    TITLE_MAX_LENGTH,
    TOPIC_MAX_LENGTH,
)
from exams.letters import choice_label

__all__ = [
    "DEFAULT_DIFFICULTY",
    "DEFAULT_STATUS",
    "DIFFICULTIES",
    "ERRATUM_POLICIES",
    "ERRATUM_SOURCES",
    "ERRATUM_STATUSES",
    "KINDS",
    "STATUSES",
    "TRIM",
    "MAX_CHOICES",
    "MIN_CHOICES",
    "TEXT_LIMITS",
    "TITLE_MAX_LENGTH",
    "TOPIC_MAX_LENGTH",
    "IDNUMBER_MAX_LENGTH",
    "exhibit_images",
    "ExportError",
    "FormatError",
    "NotUtf8Error",
    "ParseResult",
    "ParsedChoice",
    "ParsedErratum",
    "ParsedQuestion",
    "Skipped",
    "choice_label",
    "decode_utf8",
    "default_title",
    "escape_markdown",
    "question_problems",
    "ready_problems",
    "unescape_markdown",
]

# PHP's trim() set: Moodle trims with it, and agreeing with Moodle on where a text
# starts and ends matters more than Python's wider idea of whitespace.
TRIM = " \t\n\r\x00\x0b"


@dataclass(frozen=True)
class ParsedChoice:
    text: str
    is_correct: bool
    feedback: str = ""
    # The weight the file wrote (GIFT `%50%` is 0.5); None when it wrote none. Scoring is
    # all-or-nothing, so a weight is only reported by the import summary and is not part
    # of what a choice is: equality ignores it.
    fraction: Decimal | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ParsedErratum:
    published_key: tuple[str, ...]  # choice labels (A, B, …) the published key named
    note: str = ""
    source: str = "imported"
    status: str = "reported"
    policy: str = ""


@dataclass(frozen=True)
class ParsedQuestion:
    # Where the question starts in its file (JSON: its position). Provenance, not content,
    # so equality ignores it and export → import compares equal.
    line: int = field(compare=False)
    title: str
    stem: str
    explanation: str
    kind: str
    choose: int
    keep_order: bool
    domain: str | None  # None: the file named no domain; the importer applies --domain
    choices: tuple[ParsedChoice, ...]
    errata: tuple[ParsedErratum, ...] = ()
    topic: str = ""
    exhibit: str = ""  # Markdown shown above the stem
    sources: str = ""  # Markdown: where to learn more about the key
    exclusion_group: str = ""
    # Images the exhibit shows, (name, bytes); certprep JSON and Moodle XML carry them.
    images: tuple[tuple[str, bytes], ...] = ()
    # Moodle's ID number of the question: kept from a Moodle XML import, written on export.
    idnumber: str = ""
    # The intended difficulty and the day an expert last checked the question: only certprep
    # JSON carries them; every other format gives "medium" and no review date.
    difficulty: str = DEFAULT_DIFFICULTY
    reviewed_on: date | None = None
    # Draft or ready (Question.status): only certprep JSON carries it; every other format
    # gives a draft, and an import lands drafts unless it publishes at once.
    status: str = DEFAULT_STATUS


@dataclass(frozen=True)
class FormatError:
    """A problem in an imported file. line is 1-based; 0 means the file as a whole."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True)
class Skipped:
    """A question of a type certprep does not hold, left out on request."""

    line: int
    kind: str

    def __str__(self) -> str:
        return f"line {self.line}: skipped {self.kind} question"


@dataclass(frozen=True)
class ParseResult:
    questions: tuple[ParsedQuestion, ...] = ()
    errors: tuple[FormatError, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    exam_code: str | None = None  # only the certprep JSON format names its exam

    @property
    def ok(self) -> bool:
        return not self.errors


class NotUtf8Error(ValueError):
    """An uploaded file that is not UTF-8; says where the first bad byte is."""

    def __init__(self, *, offset: int, line: int, byte: int) -> None:
        self.offset = offset
        self.line = line
        self.byte = byte
        super().__init__(
            f"The file is not UTF-8: byte 0x{byte:02X} at offset {offset} (line {line}) is not valid "
            "UTF-8. Save the file as UTF-8 and import it again."
        )


class ExportError(ValueError):
    """Questions a format cannot hold; lists every one, so nothing is written half-way."""

    def __init__(self, *, format_name: str, problems: tuple[str, ...]) -> None:
        self.format_name = format_name
        self.problems = problems
        listing = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"Cannot write these questions as {format_name}:\n{listing}")


def decode_utf8(data: bytes) -> str:
    """The text of an uploaded file: strict UTF-8, without a byte-order mark."""
    bom = b"\xef\xbb\xbf"
    skip = len(bom) if data.startswith(bom) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        raise NotUtf8Error(offset=offset, line=data.count(b"\n", 0, offset) + 1, byte=data[offset]) from None


_MARKDOWN_ANYWHERE = frozenset("\\`*_[]<>&#|~")
# Characters that start a block only at the beginning of a line: list bullets, setext
# underlines, ordered-list numbers.
_MARKDOWN_LINE_START = re.compile(r"^([ \t]*)(?:([-+=])|(\d{1,9})([.)]))", re.MULTILINE)
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def escape_markdown(text: str) -> str:
    """Plain text as Markdown that renders exactly that text.

    Only backslashes before ASCII punctuation are added, and every original backslash is
    doubled, so unescape_markdown() undoes it exactly.
    """
    escaped = "".join("\\" + char if char in _MARKDOWN_ANYWHERE else char for char in text)

    def line_start(match: re.Match) -> str:
        indent, bullet, number, delimiter = match.groups()
        return indent + ("\\" + bullet if bullet else number + "\\" + delimiter)

    return _MARKDOWN_LINE_START.sub(line_start, escaped)


def unescape_markdown(text: str) -> str:
    """Drop Markdown's backslash escapes (a backslash before ASCII punctuation)."""
    return _MARKDOWN_ESCAPE.sub(r"\1", text)


_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")


def default_title(text: str, *, strip_html: bool = False) -> str:
    """A title made from a question's text, for formats whose questions have no name."""
    if strip_html:
        text = _HTML_TAG.sub(" ", text)
    words = " ".join(text.split())
    if len(words) <= DEFAULT_TITLE_LENGTH:
        return words
    cut = words[: DEFAULT_TITLE_LENGTH - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + "…"


def question_problems(question: ParsedQuestion) -> list[str]:
    """What keeps a question out of the bank: the rules the admin also enforces."""
    problems = []
    if not question.title.strip():
        problems.append("the question has no title")
    elif len(question.title) > TITLE_MAX_LENGTH:
        problems.append(f"the title is longer than {TITLE_MAX_LENGTH} characters ({len(question.title)})")
    if not question.stem.strip():
        problems.append("the question has no text")
    if len(question.topic) > TOPIC_MAX_LENGTH:
        problems.append(f"the topic is longer than {TOPIC_MAX_LENGTH} characters ({len(question.topic)})")
    if len(question.idnumber) > IDNUMBER_MAX_LENGTH:
        problems.append(f"the ID number is longer than {IDNUMBER_MAX_LENGTH} characters ({len(question.idnumber)})")
    if len(question.exclusion_group) > TOPIC_MAX_LENGTH:
        problems.append(f"the exclusion group is longer than {TOPIC_MAX_LENGTH} characters ({len(question.exclusion_group)})")
    if question.status not in STATUSES:
        problems.append(f"the status {question.status!r} is not one of {', '.join(STATUSES)}")
    if question.difficulty not in DIFFICULTIES:
        problems.append(f"the difficulty {question.difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
    if len(question.choices) < MIN_CHOICES:
        problems.append(f"a question needs at least two choices (found {len(question.choices)})")
    elif len(question.choices) > MAX_CHOICES:
        problems.append(f"a question has at most {MAX_CHOICES} choices (found {len(question.choices)})")
    labels = [choice_label(index) for index in range(len(question.choices))]
    for label, choice in zip(labels, question.choices):
        if not choice.text.strip():
            problems.append(f"choice {label} has no text")
    texts = [("the title", question.title, TITLE_MAX_LENGTH), ("the ID number", question.idnumber, IDNUMBER_MAX_LENGTH)] + [
        (f"the {name}", getattr(question, name), TEXT_LIMITS[name]) for name in ("stem", "explanation", "exhibit", "sources")
    ]
    for label, choice in zip(labels, question.choices):
        texts += [(f"choice {label}", choice.text, TEXT_LIMITS["choice"]), (f"choice {label}'s feedback", choice.feedback, TEXT_LIMITS["feedback"])]
    texts += [(f"erratum {n}'s note", e.note, TEXT_LIMITS["explanation"]) for n, e in enumerate(question.errata, start=1)]
    for name, text, limit in texts:
        if "\x00" in text:
            problems.append(f"{name} holds a NUL byte, which cannot be stored")
        if len(text) > limit and name not in ("the title", "the ID number"):
            problems.append(f"{name} is longer than {limit:,} characters ({len(text):,})")
    keys = sum(choice.is_correct for choice in question.choices)
    if question.kind not in KINDS:
        problems.append(f"kind must be 'single' or 'multiple', not {question.kind!r}")
    elif keys == 0:
        problems.append("no choice is marked correct")
    elif question.kind == "single":
        if keys != 1:
            problems.append(f"a single-answer question needs exactly one correct choice (found {keys})")
        if question.choose != 1:
            problems.append(f"a single-answer question chooses 1, not {question.choose}")
    elif question.choose != keys:
        problems.append(f"choose is {question.choose} but {keys} choices are marked correct")
    open_errata = 0
    for number, erratum in enumerate(question.errata, start=1):
        unknown = [label for label in erratum.published_key if label not in labels]
        if unknown:
            problems.append(f"erratum {number}: the published key names no such choice: {', '.join(unknown)}")
        if len(set(erratum.published_key)) != len(erratum.published_key):
            problems.append(f"erratum {number}: the published key names a choice twice")
        if erratum.source not in ERRATUM_SOURCES:
            problems.append(f"erratum {number}: source must be one of {', '.join(ERRATUM_SOURCES)}")
        if erratum.status not in ERRATUM_STATUSES:
            problems.append(f"erratum {number}: status must be one of {', '.join(ERRATUM_STATUSES)}")
        if erratum.policy not in ERRATUM_POLICIES:
            problems.append(f"erratum {number}: policy must be empty or one of {', '.join(ERRATUM_POLICIES[1:])}")
        elif erratum.status == "confirmed" and not erratum.policy:
            problems.append(f"erratum {number}: a confirmed erratum needs a policy")
        open_errata += erratum.status == "reported"
    if open_errata > 1:
        problems.append(f"a question has at most one reported (open) erratum, found {open_errata}")
    return problems


def ready_problems(question: ParsedQuestion) -> list[str]:
    """What keeps a question a draft: "Mark ready" and a publishing import refuse it for these.

    A learner who answers a ready question is owed a topic (practice by topic, "try another"),
    an intended difficulty, an explanation and feedback on every choice, besides the bounds
    every question keeps (question_problems).
    """
    problems = []
    if not question.topic.strip():
        problems.append("it has no topic")
    if question.difficulty not in DIFFICULTIES:
        problems.append(f"its difficulty {question.difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
    if not question.explanation.strip():
        problems.append("it has no explanation")
    labels = [choice_label(index) for index, choice in enumerate(question.choices) if not choice.feedback.strip()]
    if labels:
        many = len(labels) > 1
        problems.append(f"choice{'s' if many else ''} {', '.join(labels)} {'have' if many else 'has'} no feedback")
    return problems + [problem for problem in question_problems(question) if "difficulty" not in problem]


_EXHIBIT_IMAGE = re.compile(r"!\[[^\]]*\]\(exhibit:([\w.-]+)\)")


def exhibit_images(exhibit: str) -> list[str]:
    """The image names an exhibit shows, ![alt](exhibit:<name>)."""
    return _EXHIBIT_IMAGE.findall(exhibit or "")
