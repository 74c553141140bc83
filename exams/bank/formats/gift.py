"""Moodle GIFT import and export, read the way Moodle's own importer reads it."""
# Imported: multiple choice (one `=` key), multiple answer (no `=`, or several keys) and
# true/false. A positive `%weight%` marks a key, zero or a negative weight does not; the
# weight stays on ParsedChoice.fraction for the import summary, scoring is all-or-nothing.
# Other GIFT types are errors, or skipped and listed on request.
#
# Export loses keep_order and errata (GIFT has no place for them), and an empty title
# (import makes one from the question text). Texts are written as [markdown]. The category
# path carries the domain and the topic ($course$/top/<domain>/<topic>); a text exhibit is
# written above the stem and the sources after the explanation ("Learn more:"), which import
# reads back; an image exhibit cannot be written.
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation

from exams.bank.formats import (
    TRIM,
    ExportError,
    FormatError,
    ParsedChoice,
    ParsedQuestion,
    ParseResult,
    Skipped,
    default_title,
    escape_markdown,
    exhibit_images,
    question_problems,
)

__all__ = ["LEARN_MORE", "category_domain_and_topic", "category_path", "key_weights", "parse_gift", "split_sources", "write_gift"]

_FORMATS = ("moodle", "html", "plain", "markdown")
# Moodle's own pattern: it is what decides whether `~%…%` is a weight or answer text.
_WEIGHT = re.compile(r"^%(-*[0-9]{1,2}\.?[0-9]*)%")
_CONTEXT = re.compile(r"\$[a-z]+\$")
_CATEGORY_SEPARATOR = re.compile(r"(?<!/)/(?!/)")
# A backslash protects these (and `\n` is a newline); `\\` is one backslash.
_ESCAPABLE = ":#={}~n"
_UNSUPPORTED_HINT = "certprep imports multiple choice, multiple answer and true/false questions only"
LEARN_MORE = "\n\nLearn more:\n"


class _Unsupported(Exception):
    def __init__(self, kind: str) -> None:
        self.kind = kind


class _Invalid(Exception):
    pass


def parse_gift(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    """Every question of a GIFT file, with every error found (by the line its question starts on).

    A category path names the domain and then the topic; a leading segment equal to
    exam_code (as certprep writes no such segment, but people file banks under the exam) is passed over.
    """
    questions: list[ParsedQuestion] = []
    errors: list[FormatError] = []
    skipped: list[Skipped] = []
    domain = topic = None
    for block in _blocks(text):
        first_text = block[0][1]
        if first_text.startswith("$CATEGORY:"):
            domain, topic = category_domain_and_topic(first_text[len("$CATEGORY:"):], exam_code=exam_code)
            # Moodle wants a blank line after a category; we also take a question right below it.
            block = block[1:]
            if not block:
                continue
        start = block[0][0]
        try:
            questions.append(_read_question(block, domain=domain, topic=topic or ""))
        except _Unsupported as unsupported:
            if skip_unsupported:
                skipped.append(Skipped(line=start, kind=unsupported.kind))
            else:
                errors.append(FormatError(line=start, message=f"{unsupported.kind} question: {_UNSUPPORTED_HINT}"))
        except _Invalid as invalid:
            errors.extend(FormatError(line=start, message=message) for message in invalid.args)
    return ParseResult(questions=tuple(questions), errors=tuple(errors), skipped=tuple(skipped))


def _blocks(text: str) -> Iterator[list[tuple[int, str]]]:
    """Questions as runs of non-blank lines, comment lines left out, each with its line number."""
    block: list[tuple[int, str]] = []
    for number, raw in enumerate(re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff")), start=1):
        line = raw.strip(TRIM)
        if not line:
            if block:
                yield block
            block = []
            continue
        if not line.startswith("//"):
            block.append((number, line))
    if block:
        yield block


def category_domain_and_topic(path: str, *, exam_code: str | None) -> tuple[str | None, str | None]:
    """The domain and topic of a `$CATEGORY:` path: `$course$/top/Domain/Topic` →
    (Domain, Topic); `$system$`, `top` and a leading exam code are passed over."""
    names = [name.replace("//", "/").strip(TRIM) for name in _CATEGORY_SEPARATOR.split(path.strip(TRIM))]
    names = [name for name in names if name]
    if names and _CONTEXT.fullmatch(names[0]):
        names = names[1:]
    if names and names[0] == "top":
        names = names[1:]
    if names and exam_code and names[0].casefold() == exam_code.casefold() and len(names) > 1:
        names = names[1:]
    return (names[0] if names else None), (names[1] if len(names) > 1 else None)


class _Escapes:
    """Moodle's trick: escaped characters become placeholders until the structure is read.

    The placeholders are private-use code points the file does not contain, so no text
    can be mistaken for one.
    """

    def __init__(self, text: str) -> None:
        used = set(text)
        base = 0xF0000
        while any(chr(base + offset) in used for offset in range(len(_ESCAPABLE))):
            base += len(_ESCAPABLE)
        self._placeholders = {char: chr(base + offset) for offset, char in enumerate(_ESCAPABLE)}
        self._restore = str.maketrans(
            {placeholder: "\n" if char == "n" else char for char, placeholder in self._placeholders.items()}
        )

    def protect(self, text: str) -> str:
        out = []
        index = 0
        while index < len(text):
            char = text[index]
            following = text[index + 1] if index + 1 < len(text) else ""
            if char == "\\" and following == "\\":
                out.append("\\")
                index += 2
            elif char == "\\" and following and following in self._placeholders:
                out.append(self._placeholders[following])
                index += 2
            else:
                out.append(char)
                index += 1
        return "".join(out)

    def restore(self, text: str) -> str:
        return text.translate(self._restore)


def _read_question(block: list[tuple[int, str]], *, domain: str | None, topic: str) -> ParsedQuestion:
    start = block[0][0]
    source = "\n".join(line for _, line in block)
    escapes = _Escapes(source)
    text = escapes.protect(source).strip(TRIM)

    title = ""
    if text.startswith("::"):
        text = text[2:]
        end = text.find("::")
        if end >= 0:
            title = escapes.restore(text[:end]).strip(TRIM)
            text = text[end + 2:].strip(TRIM)

    opening, closing = text.find("{"), text.find("}")
    if opening < 0 and closing < 0:
        raise _Unsupported("description")
    if opening < 0:
        raise _Invalid("'}' without an opening '{' (write \\} for a literal brace)")
    if closing < 0:
        raise _Invalid("'{' without a closing '}' (write \\{ for a literal brace)")
    if closing < opening:
        raise _Invalid("'}' comes before '{' (write \\} for a literal brace)")
    after = text[closing + 1:]
    if "{" in after or "}" in after:
        raise _Invalid("more than one {…} answer block: separate questions with a blank line")
    if after.strip(TRIM):
        raise _Unsupported("missing word")
    answers = text[opening + 1:closing].strip(TRIM)

    explanation_source = ""
    general = answers.rfind("####")
    if general >= 0:
        explanation_source = answers[general + 4:]
        answers = answers[:general].strip(TRIM)

    stem_format, stem_plain = _split_format(text[:opening], default="moodle", escapes=escapes)
    stem = _as_markdown(stem_plain, stem_format)
    explanation = _piece(explanation_source, default=stem_format, escapes=escapes)
    if not title:
        title = default_title(stem_plain, strip_html=stem_format != "plain")

    if not answers:
        raise _Unsupported("essay")
    if answers.startswith("#"):
        raise _Unsupported("numerical")
    if "~" in answers:
        choices, multiple = _multiple_choice(answers, default=stem_format, escapes=escapes)
    elif "=" in answers and "->" in answers:
        raise _Unsupported("matching")
    elif _true_false_answer(answers) is not None:
        choices, multiple = _true_false(answers, default=stem_format, escapes=escapes), False
    else:
        raise _Unsupported("short answer")

    keys = sum(choice.is_correct for choice in choices)
    multiple = multiple or keys > 1
    explanation, sources = split_sources(explanation)
    question = ParsedQuestion(
        line=start,
        title=title,
        stem=stem,
        explanation=explanation,
        kind="multiple" if multiple else "single",
        choose=keys if multiple else 1,
        keep_order=False,
        domain=domain,
        choices=tuple(choices),
        topic=topic,
        sources=sources.strip(TRIM),
    )
    problems = question_problems(question)
    if problems:
        raise _Invalid(*problems)
    return question


def split_sources(explanation: str) -> tuple[str, str]:
    """An explanation as written on export, (explanation, sources): sources follow "Learn more:"."""
    if explanation.startswith(LEARN_MORE.lstrip("\n")):
        # With no explanation the sources start the text.
        explanation = "\n\n" + explanation
    explanation, _, sources = explanation.partition(LEARN_MORE)
    return explanation, sources


def _split_format(text: str, *, default: str, escapes: _Escapes) -> tuple[str, str]:
    """A text's `[format]` marker (or the default) and the text itself, unescaped."""
    text = text.strip(TRIM)
    text_format = default
    if text.startswith("["):
        end = text.find("]")
        if end > 0 and text[1:end] in _FORMATS:
            text_format, text = text[1:end], text[end + 1:]
    return text_format, escapes.restore(text).strip(TRIM)


def _as_markdown(text: str, text_format: str) -> str:
    # Moodle, HTML and Markdown texts all read well as our Markdown (which allows HTML);
    # only plain text needs its Markdown characters escaped to show as written.
    return escape_markdown(text) if text_format == "plain" else text


def _piece(source: str, *, default: str, escapes: _Escapes) -> str:
    text_format, text = _split_format(source, default=default, escapes=escapes)
    return _as_markdown(text, text_format)


def _multiple_choice(answers: str, *, default: str, escapes: _Escapes) -> tuple[list[ParsedChoice], bool]:
    # Moodle's rule: with no `=` answer the question takes several answers, even one key.
    multiple = "=" not in answers
    parts = answers.replace("=", "~=").split("~")
    parts[0] = parts[0].strip(TRIM)
    if not parts[0]:
        parts.pop(0)
    choices = []
    problems = []
    for part in parts:
        part = part.strip(TRIM)
        fraction = None
        if part.startswith("="):
            is_correct, part = True, part[1:]
        elif weight := _WEIGHT.match(part):
            try:
                fraction = Decimal(weight.group(1)) / 100
            except InvalidOperation:
                problems.append(f"answer weight %{weight.group(1)}% is not a number")
                fraction = Decimal(0)
            is_correct, part = fraction > 0, part[weight.end():]
        else:
            is_correct = False
        text_source, _, feedback_source = part.partition("#")
        choices.append(
            ParsedChoice(
                text=_piece(text_source, default=default, escapes=escapes),
                is_correct=is_correct,
                feedback=_piece(feedback_source, default=default, escapes=escapes),
                fraction=fraction,
            )
        )
    if problems:
        raise _Invalid(*problems)
    return choices, multiple


def _true_false_answer(answers: str) -> bool | None:
    """True or False for a true/false answer block ({T}, {FALSE#…}); None for anything else."""
    word = answers.partition("#")[0].strip(TRIM) if answers.find("#") > 0 else answers
    return {"T": True, "TRUE": True, "F": False, "FALSE": False}.get(word)


def _true_false(answers: str, *, default: str, escapes: _Escapes) -> list[ParsedChoice]:
    # {ANSWER#feedback for a wrong response#feedback for a right response}
    bits = answers.split("#", 2) + ["", ""]
    true_is_key = _true_false_answer(answers)
    wrong = _piece(bits[1], default=default, escapes=escapes)
    right = _piece(bits[2], default=default, escapes=escapes)
    return [
        ParsedChoice(text="True", is_correct=true_is_key, feedback=right if true_is_key else wrong),
        ParsedChoice(text="False", is_correct=not true_is_key, feedback=wrong if true_is_key else right),
    ]


def write_gift(questions: Iterable[ParsedQuestion]) -> str:
    """GIFT that Moodle and parse_gift() read back as the same questions (less keep_order and errata)."""
    questions = list(questions)
    problems = tuple(
        f"question {number} ({question.title!r}): {problem}"
        for number, question in enumerate(questions, start=1)
        for problem in [
            *question_problems(question),
            *(f"GIFT cannot carry its image exhibit {name!r}" for name in exhibit_images(question.exhibit)),
        ]
    )
    if problems:
        raise ExportError(format_name="GIFT", problems=problems)
    chunks = []
    category: tuple[str | None, str | None] = (None, None)
    for question in questions:
        here = (question.domain, question.topic or None)
        if here != category:
            chunks.append(f"$CATEGORY: {category_path(*here)}\n")
            category = here
        chunks.append(_write_question(question))
    return "\n".join(chunks)


def category_path(domain: str | None, topic: str | None = None) -> str:
    if domain is None:
        return "$course$/top"
    return "/".join(["$course$/top", category_name(domain), *([category_name(topic)] if topic else [])])


def category_name(name: str) -> str:
    # Moodle's own escaping of a `/` inside a category name.
    name = name.replace("/", "//")
    if name.startswith("/"):
        name = " " + name
    if name.endswith("/"):
        name = name + " "
    return name


def _write_question(question: ParsedQuestion) -> str:
    head = f"::{_escape(question.title)}::" if question.title else ""
    # [markdown] on the question text makes it the default for every other piece.
    stem = f"{question.exhibit.strip()}\n\n{question.stem}" if question.exhibit.strip() else question.stem
    lines = [f"{head}[markdown]{_escape(stem)}{{"]
    multiple = question.kind == "multiple"
    weights = iter(key_weights(sum(choice.is_correct for choice in question.choices)))
    for choice in question.choices:
        if multiple:
            marker = f"~%{next(weights)}%" if choice.is_correct else "~%-100%"
        elif choice.is_correct:
            marker = "="
        else:
            # A wrong answer starting with % would read as a weight; an explicit 0% keeps it text.
            marker = "~%0%" if choice.text.startswith("%") else "~"
        line = f"\t{marker}{_write_piece(choice.text)}"
        if choice.feedback:
            line += f"#{_write_piece(choice.feedback)}"
        lines.append(line)
    explanation = question.explanation
    if question.sources.strip():
        explanation = f"{explanation}{LEARN_MORE}{question.sources.strip()}"
    if explanation:
        lines.append(f"\t####{_write_piece(explanation)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def key_weights(keys: int) -> list[str]:
    """Percentages that split 100 across the keys, as Moodle wants them to add up."""
    if keys == 0:
        return []
    share = (Decimal(100) / keys).quantize(Decimal("0.00001"))
    weights = [share] * (keys - 1) + [Decimal(100) - share * (keys - 1)]
    return [f"{weight.normalize():f}" for weight in weights]


def _write_piece(text: str) -> str:
    # A text that itself starts with [ could be taken for a format marker.
    return ("[markdown]" if text.startswith("[") else "") + _escape(text)


def _escape(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        "\\n" if char == "\n" else "\\" + char if char in "\\~=#{}:" else char
        for char in text
    )
