"""Moodle XML import and export: multiple choice (one or several answers) and true/false."""
# Read as Moodle's own qformat_xml reads it, through defusedxml with DTDs refused (so no
# entity expansion and no external reference can happen: Moodle XML never has a DTD).
#
# - `<question type="category">` gives the domain and topic exactly as GIFT's $CATEGORY
#   (category_domain_and_topic); `domain:` / `topic:` / `exclusion_group:` tags of a
#   question win over its category. Other tags are not kept.
# - Texts in html or moodle_auto_format are sanitized and converted to Markdown
#   (exams.bank.formats.htmltext); plain_text is escaped into Markdown; markdown is kept.
# - An answer's fraction > 0 marks a key, as GIFT's weights do (scoring is all or
#   nothing); a fraction Moodle itself would refuse (33 for a third) is an error, as in
#   Moodle's import. `<single>false</single>` or several keys make a multiple-answer
#   question. True/false becomes the choices True and False, in that order.
# - Images embedded in the question text (`<file>`, or Moodle 1.9's `<image_base64>`)
#   become the exhibit: PNG, JPEG or WebP of at most 500 KB, checked by their bytes. Any
#   other embedded file (audio included), and images in answers or feedback, are refused
#   by name: certprep shows images only in the exhibit.
#
# Export writes every question as multichoice with Markdown texts (a Moodle text format),
# the exhibit above the stem with its images embedded, and the domain and topic both as a
# category path and as tags. It loses errata only. Import of the export gives the same
# questions.
import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from pathlib import PurePosixPath
from urllib.parse import quote, unquote
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.ElementTree import DefusedXMLParser

from exams.bank.exhibits import MAX_BYTES, sniff_content_type
from exams.bank.exhibits import NAME as EXHIBIT_NAME
from exams.bank.formats import (
    TRIM,
    ExportError,
    FormatError,
    ParsedChoice,
    ParsedQuestion,
    ParseResult,
    Skipped,
    choice_label,
    default_title,
    escape_markdown,
    exhibit_images,
    question_problems,
)
from exams.bank.formats.gift import LEARN_MORE, category_domain_and_topic, category_path, key_weights, split_sources
from exams.bank.formats.htmltext import PLUGINFILE, html_to_markdown, html_to_plain_text

__all__ = ["EXHIBIT_END", "parse_moodle_xml", "write_moodle_xml"]

SUPPORTED_TYPES = ("multichoice", "truefalse")
# Moodle's question types, named as certprep reports them when it leaves one out.
UNSUPPORTED_TYPES = {
    "shortanswer": "short answer",
    "essay": "essay",
    "numerical": "numerical",
    "match": "matching",
    "description": "description",
    "cloze": "embedded answers (cloze)",
    "multianswer": "embedded answers (cloze)",
    "calculated": "calculated",
    "calculatedsimple": "simple calculated",
    "calculatedmulti": "calculated multichoice",
    "randomsamatch": "random short-answer matching",
    "ddwtos": "drag and drop into text",
    "ddimageortext": "drag and drop onto image",
    "ddmarker": "drag and drop markers",
    "gapselect": "select missing words",
    "ordering": "ordering",
}
_UNSUPPORTED_HINT = "certprep imports multiple choice, multiple answer and true/false questions only"
# Where a certprep export's exhibit ends and its stem starts, in the question text.
EXHIBIT_END = "<!-- end of exhibit -->"
_EXHIBIT_SPLIT = re.compile(r"\n[ \t]*" + re.escape(EXHIBIT_END) + r"[ \t]*\n")
_MARKDOWN_FILE = re.compile(r"(!?)\[([^\[\]\n]*)\]\(" + re.escape(PLUGINFILE) + r"([^)\s]*)\)")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
# Moodle's grades (question_bank::fraction_options_full); its import refuses any other.
_MOODLE_GRADES = tuple(
    Decimal(grade)
    for grade in (
        "1", "0.9", "0.8333333", "0.8", "0.75", "0.7", "0.6666667", "0.6", "0.5", "0.4", "0.3333333", "0.3",
        "0.25", "0.2", "0.1666667", "0.1428571", "0.125", "0.1111111", "0.1", "0.05", "0",
    )
)
_GRADE_TOLERANCE = Decimal("0.00001")
_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TRUE_WORDS, _FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no")


class _Invalid(Exception):
    pass


class _LinedTreeBuilder(TreeBuilder):
    """An ElementTree builder that notes the line each element starts on."""

    def __init__(self) -> None:
        super().__init__()
        self.parser: DefusedXMLParser | None = None
        self.lines: dict[Element, int] = {}

    def start(self, tag, attrs):
        element = super().start(tag, attrs)
        self.lines[element] = self.parser.parser.CurrentLineNumber
        return element


def _read_tree(text: str) -> tuple[Element | None, dict[Element, int], FormatError | None]:
    builder = _LinedTreeBuilder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    builder.parser = parser

    def refused(what: str) -> FormatError:
        line = parser.parser.CurrentLineNumber
        return FormatError(
            line=line,
            message=f"the file {what}: certprep refuses DTDs, entity declarations and external references "
            "(Moodle XML has none), so nothing in the file can expand or fetch anything",
        )

    try:
        parser.feed(text)
        root = parser.close()
    except DTDForbidden:
        return None, {}, refused("declares a DTD (<!DOCTYPE …>)")
    except EntitiesForbidden:
        return None, {}, refused("declares an entity")
    except ExternalReferenceForbidden:
        return None, {}, refused("refers to an external entity")
    except ParseError as error:
        line, column = error.position
        reason = str(error).split(":")[0]
        hint = ""
        if "undefined entity" in reason:
            hint = " (XML knows only &lt; &gt; &amp; &quot; &apos; and character references like &#233;)"
        return None, {}, FormatError(line=line, message=f"not well-formed XML: {reason} at line {line}, column {column + 1}{hint}")
    return root, builder.lines, None


def parse_moodle_xml(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    """Every question of a Moodle XML file, with every error found (by the line its question starts on)."""
    root, lines, failure = _read_tree(text.removeprefix("\ufeff"))
    if failure is not None:
        return ParseResult(errors=(failure,))
    if root.tag != "quiz":
        return ParseResult(
            errors=(FormatError(line=lines.get(root, 1), message=f"not a Moodle XML file: its root element is <{root.tag}>, not <quiz>"),)
        )
    questions: list[ParsedQuestion] = []
    errors: list[FormatError] = []
    skipped: list[Skipped] = []
    names = _ImageNames()
    domain = topic = None
    for element in root:
        line = lines.get(element, 0)
        if element.tag != "question":
            errors.append(FormatError(line=line, message=f"<quiz> holds <question> elements, not <{element.tag}>"))
            continue
        qtype = element.get("type", "")
        if qtype == "category":
            path, problems = _text(element, "category")
            if problems:
                errors.append(FormatError(line=line, message=f"category: {problems[0]}"))
            domain, topic = category_domain_and_topic(path, exam_code=exam_code)
            continue
        if qtype not in SUPPORTED_TYPES:
            kind = UNSUPPORTED_TYPES.get(qtype, f"{qtype!r}" if qtype else "untyped")
            if not qtype:
                errors.append(FormatError(line=line, message="a <question> without a type attribute"))
            elif skip_unsupported:
                skipped.append(Skipped(line=line, kind=kind))
            else:
                errors.append(FormatError(line=line, message=f"{kind} question: {_UNSUPPORTED_HINT}"))
            continue
        try:
            questions.append(_read_question(element, line=line, domain=domain, topic=topic or "", names=names))
        except _Invalid as invalid:
            name = invalid.args[0]
            errors.extend(FormatError(line=line, message=f"question {name!r}: {problem}") for problem in invalid.args[1])
    return ParseResult(questions=tuple(questions), errors=tuple(sorted(errors, key=lambda error: error.line)), skipped=tuple(skipped))


# Reading one question ------------------------------------------------------------------


def _text(element: Element, *path: str) -> tuple[str, list[str]]:
    """The trimmed <text> under a path of child elements ('' when absent), and any problem."""
    container = element
    for tag in path:
        container = container.find(tag) if container is not None else None
    if container is None:
        return "", []
    node = container.find("text")
    if node is None:
        return "", []
    if len(node):
        where = "/".join(path) or element.tag
        return "", [
            f"the <text> of <{where}> holds XML elements (<{node[0].tag}>): wrap HTML in <![CDATA[ … ]]> or escape its < and &"
        ]
    return (node.text or "").strip(TRIM), []


def _flag(element: Element, tag: str, *, default: bool, problems: list[str]) -> bool:
    child = element.find(tag)
    if child is None:
        return default
    value = (child.text or "").strip(TRIM).lower()
    if value in _TRUE_WORDS:
        return True
    if value in _FALSE_WORDS:
        return False
    problems.append(f"<{tag}> must be true or false, not {value!r}")
    return default


class _ImageNames:
    """Stored names for the file's images: the file's own name where the exhibit names
    allow it and no other image of the file already has it, else one made from its bytes."""

    def __init__(self) -> None:
        self.taken: dict[str, bytes] = {}

    def name(self, filename: str, data: bytes) -> str:
        if EXHIBIT_NAME.match(filename) and ".." not in filename and self.taken.get(filename, data) == data:
            self.taken[filename] = data
            return filename
        path = PurePosixPath(filename)
        stem = re.sub(r"[^\w-]+", "-", path.stem).strip("-")[:60] or "image"
        suffix = re.sub(r"[^\w]", "", path.suffix.lower())[:5]
        name = f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}" + (f".{suffix}" if suffix else "")
        self.taken[name] = data
        return name


def _files(container: Element | None) -> dict[str, tuple[str, Element]]:
    """The <file>s of a text, by their path (as @@PLUGINFILE@@ names them): (name, element)."""
    if container is None:
        return {}
    files = {}
    for file in container.findall("file"):
        name = file.get("name", "")
        folder = file.get("path", "/") or "/"
        files[(folder.rstrip("/") + "/" + name).lstrip("/")] = (name, file)
    return files


def _file_bytes(name: str, file: Element, problems: list[str]) -> bytes | None:
    if file.get("encoding", "base64") != "base64":
        problems.append(f"the embedded file {name!r} is not base64-encoded (encoding={file.get('encoding')!r})")
        return None
    try:
        return base64.b64decode("".join((file.text or "").split()), validate=True)
    except (binascii.Error, ValueError):
        problems.append(f"the embedded file {name!r} is not valid base64")
        return None


def _image_problem(name: str, data: bytes) -> str | None:
    if not name.lower().endswith(_IMAGE_SUFFIXES):
        return (
            f"it embeds {name!r}, which is not an image certprep can show: exhibits are PNG, JPEG or WebP images "
            "(audio, video and other files are refused)"
        )
    if len(data) > MAX_BYTES:
        return f"the image {name!r} is {len(data):,} bytes; an exhibit image may be at most {MAX_BYTES:,}"
    if sniff_content_type(data) is None:
        return f"{name!r} is not a PNG, JPEG or WebP image (its bytes are not one, whatever its name says)"
    return None


def _alt(alt: str) -> str:
    # Brackets would end the image's alt text early.
    return escape_markdown(" ".join(alt.replace("[", "(").replace("]", ")").split()))


def _convert(text: str, text_format: str, *, inline: bool):
    """(markdown, [(alt, file path)] of images, [file paths linked], problems) of one text."""
    if text_format == "markdown":
        images, linked = [], []

        def take(match: re.Match) -> str:
            bang, alt, path = match.groups()
            if bang:
                images.append((alt, unquote(path)))
                return ""
            linked.append(unquote(path))
            return match.group(0)

        markdown = _MARKDOWN_FILE.sub(take, text).strip(TRIM)
        return markdown, images, linked, []
    if text_format == "plain_text":
        return escape_markdown(text), [], [], []
    if text_format == "moodle_auto_format":
        # Moodle shows a line break of this format as a line break.
        text = text.replace("\r\n", "\n").replace("\n", "<br>")
    converted = html_to_markdown(text, inline=inline)
    return converted.markdown, converted.images, converted.linked_files, converted.problems


def _read_question(element: Element, *, line: int, domain: str | None, topic: str, names: _ImageNames) -> ParsedQuestion:
    problems: list[str] = []
    raw_name, name_problems = _text(element, "name")
    problems += name_problems
    title = html_to_plain_text(raw_name).strip(TRIM)
    label = title or f"at line {line}"

    question_text = element.find("questiontext")
    if question_text is None:
        raise _Invalid(label, ["it has no <questiontext>"])
    text_format = question_text.get("format", "moodle_auto_format")
    raw_stem, stem_problems = _text(element, "questiontext")
    problems += stem_problems

    exhibit_part = ""
    if text_format == "markdown" and (split := _EXHIBIT_SPLIT.search(raw_stem)):
        exhibit_part, raw_stem = raw_stem[: split.start()].strip(TRIM), raw_stem[split.end():].strip(TRIM)
    stem, images, linked, converted_problems = _convert(raw_stem, text_format, inline=False)
    problems += [f"the question text: {problem}" for problem in converted_problems]
    exhibit_images_found: list[tuple[str, str]] = []
    if exhibit_part:

        def take(match: re.Match) -> str:
            bang, alt, path = match.groups()
            path = unquote(path)
            if bang:
                exhibit_images_found.append((alt, path))
                return f"![{alt}](exhibit:\x00{len(exhibit_images_found) - 1}\x00)"
            linked.append(path)
            return match.group(0)

        exhibit_part = _MARKDOWN_FILE.sub(take, exhibit_part)

    # Moodle 1.9 kept one image beside the text: <image>name</image><image_base64>…
    files = _files(question_text)
    old_image = (element.findtext("image") or "").strip(TRIM)
    old_data = element.find("image_base64")
    if old_image and old_data is not None:
        old_name = PurePosixPath(old_image).name
        files[old_name] = (old_name, old_data)
        images.append((PurePosixPath(old_name).stem, old_name))

    refused: set[str] = set()
    decoded: dict[str, bytes] = {}
    for path, (filename, file) in files.items():
        data = _file_bytes(filename, file, problems)
        if data is None:
            refused.add(path)
            continue
        problem = _image_problem(filename, data)
        if problem:
            problems.append(problem)
            refused.add(path)
        else:
            decoded[path] = data
    for path in linked:
        if path not in refused:
            problems.append(
                f"the question text links to the embedded file {path!r}: certprep holds no files, only exhibit images"
            )
            refused.add(path)

    stored: list[tuple[str, bytes]] = []

    def exhibit_name(path: str) -> str | None:
        if path in decoded:
            name = names.name(PurePosixPath(path).name, decoded[path])
            if (name, decoded[path]) not in stored:
                stored.append((name, decoded[path]))
            return name
        if path not in refused:
            problems.append(f"the question text shows the image {path!r}, which the file does not embed")
            refused.add(path)
        return None

    for index, (alt, path) in enumerate(exhibit_images_found):
        name = exhibit_name(path)
        exhibit_part = exhibit_part.replace(f"exhibit:\x00{index}\x00", f"exhibit:{name or 'missing'}")
    lines = [f"![{_alt(alt)}](exhibit:{name})" for alt, path in images if (name := exhibit_name(path))]
    exhibit = "\n\n".join(part for part in [exhibit_part, *lines] if part)

    explanation, problems_here = _piece(element, "generalfeedback", text_format, "the general feedback", inline=False)
    problems += problems_here
    explanation, sources = split_sources(explanation)

    qtype = element.get("type")
    if qtype == "truefalse":
        choices, kind, keep_order = _true_false(element, text_format, problems)
    else:
        choices, kind, keep_order = _multichoice(element, text_format, problems)
    if choices is None:
        raise _Invalid(label, list(dict.fromkeys(problems)))

    idnumber = (element.findtext("idnumber") or "").strip(TRIM)
    exclusion_group = ""
    for tag in element.findall("tags/tag"):
        value = (tag.findtext("text") or "").strip(TRIM)
        key, colon, rest = value.partition(":")
        if not colon:
            continue
        key, rest = key.strip(TRIM).lower(), rest.strip(TRIM)
        if key == "domain" and rest:
            domain = rest
        elif key == "topic":
            topic = rest
        elif key == "exclusion_group":
            exclusion_group = rest

    keys = sum(choice.is_correct for choice in choices)
    question = ParsedQuestion(
        line=line,
        title=title or default_title(stem),
        stem=stem,
        explanation=explanation.strip(TRIM),
        kind=kind,
        choose=keys if kind == "multiple" else 1,
        keep_order=keep_order,
        domain=domain,
        choices=tuple(choices),
        topic=topic,
        exhibit=exhibit,
        sources=sources.strip(TRIM),
        exclusion_group=exclusion_group,
        images=tuple(stored),
        idnumber=idnumber,
    )
    problems += question_problems(question)
    if problems:
        raise _Invalid(label, list(dict.fromkeys(problems)))
    return question


def _piece(element: Element, tag: str, default_format: str, where: str, *, inline: bool) -> tuple[str, list[str]]:
    """A text other than the question text: Markdown, and problems (no images allowed)."""
    container = element.find(tag)
    text, problems = _text(element, tag)
    if container is None:
        return "", problems
    markdown, images, linked, converted_problems = _convert(text, container.get("format", default_format), inline=inline)
    problems = problems + [f"{where}: {problem}" for problem in converted_problems]
    problems += _elsewhere(where, images=images, linked=linked, files=_files(container))
    return markdown, problems


def _elsewhere(where: str, *, images: list, linked: list, files: dict) -> list[str]:
    """Refusals for images and files outside the question text, one per file."""
    said = {}
    for path in files:
        said[path] = f"{where} embeds {path!r}"
    for _, path in images:
        said.setdefault(path, f"{where} shows the image {path!r}")
    for path in linked:
        said.setdefault(path, f"{where} links to the file {path!r}")
    return [f"{text}: certprep shows images only in the exhibit, above the question text" for text in said.values()]


def _fraction(answer: Element, index: int, problems: list[str]) -> Decimal:
    value = answer.get("fraction", "0").strip(TRIM)
    try:
        grade = Decimal(value) / 100
    except InvalidOperation:
        problems.append(f"answer {index + 1}'s fraction {value!r} is not a number")
        return Decimal(0)
    if not grade.is_finite() or not any(abs(abs(grade) - allowed) < _GRADE_TOLERANCE for allowed in _MOODLE_GRADES):
        problems.append(
            f"answer {index + 1}'s grade {value}% is not one Moodle accepts (100, 90, 83.33333, 80, 75, 70, 66.66667, "
            "60, 50, 40, 33.33333, 30, 25, 20, 16.66667, 14.28571, 12.5, 11.11111, 10, 5, 0 or minus one of them)"
        )
    return grade


def _multichoice(element: Element, text_format: str, problems: list[str]) -> tuple[list[ParsedChoice], str, bool]:
    single = _flag(element, "single", default=True, problems=problems)
    shuffle = _flag(element, "shuffleanswers", default=True, problems=problems)
    choices = []
    for index, answer in enumerate(element.findall("answer")):
        where = f"choice {choice_label(index)}"
        grade = _fraction(answer, index, problems)
        raw, text_problems = _text(answer)
        problems += text_problems
        text, images, linked, converted = _convert(raw, answer.get("format", text_format), inline=True)
        problems += [f"{where}: {problem}" for problem in converted]
        problems += _elsewhere(where, images=images, linked=linked, files=_files(answer))
        feedback, feedback_problems = _piece(answer, "feedback", text_format, f"{where}'s feedback", inline=True)
        problems += feedback_problems
        choices.append(
            ParsedChoice(
                text=text,
                is_correct=grade > 0,
                feedback=feedback,
                fraction=None if grade in (0, 1) else grade,
            )
        )
    keys = sum(choice.is_correct for choice in choices)
    return choices, "multiple" if not single or keys > 1 else "single", not shuffle


def _true_false(element: Element, text_format: str, problems: list[str]) -> tuple[list[ParsedChoice] | None, str, bool]:
    sides: dict[bool, tuple[Decimal, str]] = {}
    for index, answer in enumerate(element.findall("answer")):
        raw, text_problems = _text(answer)
        problems += text_problems
        word = raw.lower()
        if word not in ("true", "false"):
            problems.append(f"a true/false answer is 'true' or 'false', not {raw!r}")
            continue
        grade = _fraction(answer, index, problems)
        feedback, feedback_problems = _piece(answer, "feedback", text_format, f"the {word!r} answer's feedback", inline=True)
        problems += feedback_problems
        sides[word == "true"] = (grade, feedback)
    if set(sides) != {True, False}:
        problems.append("a true/false question needs one 'true' and one 'false' answer")
        return None, "single", True
    if (sides[True][0] > 0) == (sides[False][0] > 0):
        problems.append("exactly one of a true/false question's answers must carry a positive grade")
    # Moodle shows True then False; so does certprep.
    return (
        [
            ParsedChoice(text="True", is_correct=sides[True][0] > 0, feedback=sides[True][1]),
            ParsedChoice(text="False", is_correct=sides[False][0] > 0, feedback=sides[False][1]),
        ],
        "single",
        True,
    )


# Writing ---------------------------------------------------------------------------------


def write_moodle_xml(questions: Iterable[ParsedQuestion]) -> str:
    """Moodle XML that Moodle and parse_moodle_xml() read back as the same questions (less errata)."""
    questions = list(questions)
    problems = []
    for number, question in enumerate(questions, start=1):
        own = list(question_problems(question))
        carried = dict(question.images)
        own += [
            f"its exhibit shows the image {name!r}, which the bank does not hold"
            for name in exhibit_images(question.exhibit)
            if name not in carried
        ]
        own += [f"{where} holds a character XML cannot carry (U+{ord(char):04X})" for where, char in _unsafe_characters(question)]
        problems += [f"question {number} ({question.title!r}): {problem}" for problem in own]
    if problems:
        raise ExportError(format_name="Moodle XML", problems=tuple(problems))
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<quiz>"]
    category: tuple[str | None, str | None] | None = None
    for question in questions:
        here = (question.domain, question.topic or None)
        if here != category:
            out += [
                '  <question type="category">',
                "    <category>",
                f"      <text>{_xml_text(category_path(*here))}</text>",
                "    </category>",
                "  </question>",
                "",
            ]
            category = here
        out += _question_lines(question)
    out.append("</quiz>")
    return "\n".join(out) + "\n"


def _unsafe_characters(question: ParsedQuestion) -> list[tuple[str, str]]:
    texts = [
        ("the title", question.title), ("the stem", question.stem), ("the exhibit", question.exhibit),
        ("the explanation", question.explanation), ("the sources", question.sources), ("the topic", question.topic),
        ("the domain", question.domain or ""), ("the ID number", question.idnumber),
        ("the exclusion group", question.exclusion_group),
    ]
    for index, choice in enumerate(question.choices):
        texts += [(f"choice {choice_label(index)}", choice.text), (f"choice {choice_label(index)}'s feedback", choice.feedback)]
    found = []
    for where, text in texts:
        match = _XML_UNSAFE.search(text)
        # NUL is already refused by the bank's bounds.
        if match and match.group() != "\x00":
            found.append((where, match.group()))
    return found


def _xml_text(text: str) -> str:
    """Element content that an XML parser reads back as exactly this text."""
    if "\r" not in text and ("<" in text or "&" in text):
        return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def _text_element(tag: str, text: str, *, indent: str, text_format: str | None = "markdown", extra: list[str] = ()) -> list[str]:
    opening = f'<{tag} format="{text_format}">' if text_format else f"<{tag}>"
    return [f"{indent}{opening}", f"{indent}  <text>{_xml_text(text)}</text>", *extra, f"{indent}</{tag}>"]


def _question_lines(question: ParsedQuestion) -> list[str]:
    exhibit = question.exhibit.strip(TRIM)
    files = []
    for name, data in question.images:
        exhibit = exhibit.replace(f"](exhibit:{name})", f"]({PLUGINFILE}{quote(name)})")
        encoded = base64.b64encode(data).decode("ascii")
        files.append(f'      <file name="{_attr(name)}" path="/" encoding="base64">{encoded}</file>')
    stem = f"{exhibit}\n\n{EXHIBIT_END}\n\n{question.stem}" if exhibit else question.stem
    explanation = question.explanation
    if question.sources.strip(TRIM):
        explanation = f"{explanation}{LEARN_MORE}{question.sources.strip(TRIM)}"
    multiple = question.kind == "multiple"
    weights = iter(key_weights(sum(choice.is_correct for choice in question.choices)))
    # Moodle's name is text that it shows as HTML: a < in a title is written as &lt;.
    title = question.title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    lines = [
        '  <question type="multichoice">',
        "    <name>",
        f"      <text>{_xml_text(title)}</text>",
        "    </name>",
        *_text_element("questiontext", stem, indent="    ", extra=files),
        *_text_element("generalfeedback", explanation, indent="    "),
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
        f"    <idnumber>{_xml_text(question.idnumber)}</idnumber>",
        f"    <single>{'false' if multiple else 'true'}</single>",
        f"    <shuffleanswers>{'false' if question.keep_order else 'true'}</shuffleanswers>",
        "    <answernumbering>ABCD</answernumbering>",
    ]
    for choice in question.choices:
        fraction = next(weights) if choice.is_correct else ("-100" if multiple else "0")
        lines += [
            f'    <answer fraction="{fraction}" format="markdown">',
            f"      <text>{_xml_text(choice.text)}</text>",
            *_text_element("feedback", choice.feedback, indent="      "),
            "    </answer>",
        ]
    tags = [("domain", question.domain), ("topic", question.topic), ("exclusion_group", question.exclusion_group)]
    tags = [(key, value) for key, value in tags if value]
    if tags:
        lines.append("    <tags>")
        lines += [f"      <tag><text>{_xml_text(f'{key}:{value}')}</text></tag>" for key, value in tags]
        lines.append("    </tags>")
    lines += ["  </question>", ""]
    return lines


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
