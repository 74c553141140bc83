"""The bank formats certprep reads and writes: the one list the admin, the commands and the tests offer."""
# Adding a format here offers it everywhere: the admin's import form (format choice and
# accepted file types) and export actions, and the import_questions / export_questions
# commands. Plain functions only, no Django, so a fuzzer or a conformance script can
# iterate over FORMATS.
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from exams.bank.formats import ParsedQuestion, ParseResult
from exams.bank.formats.aiken import parse_aiken, write_aiken
from exams.bank.formats.bankjson import parse_json, write_json
from exams.bank.formats.gift import parse_gift, write_gift
from exams.bank.formats.moodlexml import parse_moodle_xml, write_moodle_xml

__all__ = ["FORMATS", "BankFormat"]


@dataclass(frozen=True)
class BankFormat:
    name: str  # what the user picks: --format gift
    label: str
    extension: str  # of an exported file
    content_type: str
    upload_extensions: tuple[str, ...]  # what the admin's upload accepts for it
    export_description: str  # the admin's export action
    # parse(text, skip_unsupported=…, exam_code=…) → ParseResult
    parse: Callable[..., ParseResult]
    # write(questions, exam_code=…) → the file's text; raises ExportError
    write: Callable[..., str]
    # Whether it has question types certprep does not hold, which an import may skip.
    skips_unsupported: bool = False


def _gift(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    return parse_gift(text, skip_unsupported=skip_unsupported, exam_code=exam_code)


def _aiken(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    # Aiken has only one question type, so there is nothing to skip.
    return parse_aiken(text)


def _json(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    return parse_json(text)


def _xml(text: str, *, skip_unsupported: bool = False, exam_code: str | None = None) -> ParseResult:
    return parse_moodle_xml(text, skip_unsupported=skip_unsupported, exam_code=exam_code)


def _without_exam(write: Callable[[Iterable[ParsedQuestion]], str]) -> Callable[..., str]:
    def written(questions: Iterable[ParsedQuestion], *, exam_code: str) -> str:
        return write(questions)

    return written


FORMATS: dict[str, BankFormat] = {
    "gift": BankFormat(
        name="gift",
        label="Moodle GIFT",
        extension="gift",
        content_type="text/plain; charset=utf-8",
        upload_extensions=(".gift", ".txt"),
        export_description="Export selected questions as Moodle GIFT",
        parse=_gift,
        write=_without_exam(write_gift),
        skips_unsupported=True,
    ),
    "aiken": BankFormat(
        name="aiken",
        label="Aiken",
        extension="txt",
        content_type="text/plain; charset=utf-8",
        upload_extensions=(".txt", ".aiken"),
        export_description="Export selected questions as Aiken (single-answer only)",
        parse=_aiken,
        write=_without_exam(write_aiken),
    ),
    "json": BankFormat(
        name="json",
        label="certprep JSON",
        extension="json",
        content_type="application/json; charset=utf-8",
        upload_extensions=(".json",),
        export_description="Export selected questions as certprep JSON (lossless)",
        parse=_json,
        write=write_json,
    ),
    "xml": BankFormat(
        name="xml",
        label="Moodle XML",
        extension="xml",
        content_type="application/xml; charset=utf-8",
        upload_extensions=(".xml",),
        export_description="Export selected questions as Moodle XML",
        parse=_xml,
        write=_without_exam(write_moodle_xml),
        skips_unsupported=True,
    ),
}
