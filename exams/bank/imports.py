"""Question-bank import and export: parsed files into the database in one transaction, and back out."""
# The parsers and writers in exams.bank.formats know nothing of the database; this module is
# the one place that writes what they read. An import is all or nothing: every problem
# (in the file, or a domain the exam does not have) is collected and reported by line,
# and a single one means nothing is written.
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from exams.bank.exhibits import ExhibitError, checked_image
from exams.bank.formats import (
    ExportError,
    FormatError,
    NotUtf8Error,
    ParsedChoice,
    ParsedErratum,
    ParsedQuestion,
    ParseResult,
    Skipped,
    choice_label,
    decode_utf8,
    exhibit_images,
    question_problems,
    ready_problems,
)
from exams.bank.formats.registry import FORMATS, BankFormat
from exams.models import Choice, Domain, Erratum, ErratumStatus, Exam, ExhibitImage, Question, QuestionStatus
from exams.statistics.tasks import statistics_refresh_on_commit

__all__ = [
    "FORMATS",
    "BankFormat",
    "DomainPlan",
    "ImportSummary",
    "MAX_IMPORT_QUESTIONS",
    "WEIGHTS_NOTE",
    "export_bank",
    "import_bank",
    "parse_upload",
    "write_export",
]

WEIGHTS_NOTE = (
    "GIFT and Moodle XML answer weights only mark the keys (a positive weight marks a correct choice; zero or a negative "
    "weight does not). Scoring is all-or-nothing, so weights are not used for scoring."
)
from jobs.models import Job
from jobs.services import JobError, JobResult

# Rows per INSERT: large enough that 10,000 questions take a handful of statements, small
# enough to stay under SQLite's limit on bound parameters.
_BATCH_SIZE = 1000
# A progress callback hears of the check this often (every N questions).
_PROGRESS_EVERY = 100
# The most questions one file may import: beyond, the preview and the import refuse the
# file at once (the admin's form says so beside its 5 MB), so one upload cannot hold a
# worker for minutes. Split a larger bank into several files.
MAX_IMPORT_QUESTIONS = 20_000


@dataclass(frozen=True)
class DomainPlan:
    """The questions that go (or went) into one domain of the exam."""

    name: str
    questions: tuple[ParsedQuestion, ...]


@dataclass(frozen=True)
class ImportSummary:
    exam_code: str
    dry_run: bool
    domains: tuple[DomainPlan, ...]  # in the exam's domain order; only domains that receive questions
    skipped: tuple[Skipped, ...]
    errors: tuple[FormatError, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def written(self) -> bool:
        return self.ok and not self.dry_run

    @property
    def question_count(self) -> int:
        return sum(len(plan.questions) for plan in self.domains)

    @property
    def choice_count(self) -> int:
        return sum(len(question.choices) for plan in self.domains for question in plan.questions)

    @property
    def erratum_count(self) -> int:
        return sum(len(question.errata) for plan in self.domains for question in plan.questions)

    @property
    def headline(self) -> str:
        count = _plural(self.question_count, "question")
        if self.errors:
            return f"Nothing was imported into {self.exam_code}: {_plural(len(self.errors), 'error')} (listed by line)."
        if self.dry_run:
            return f"Would create {count} in {self.exam_code} (dry run: nothing was written)."
        return f"Created {count} in {self.exam_code}."

    def lines(self) -> list[str]:
        """The summary as plain lines, for the command's output and the admin's messages."""
        lines = [self.headline]
        if self.domains:
            lines.append("Valid questions found, per domain:" if self.errors else "Per domain:")
            lines.extend(f"  {plan.name}: {_plural(len(plan.questions), 'question')}" for plan in self.domains)
            extras = []
            if self.choice_count:
                extras.append(_plural(self.choice_count, "choice"))
            if self.erratum_count:
                extras.append(_plural(self.erratum_count, "erratum", "errata"))
            if extras:
                lines.append(f"  with {' and '.join(extras)}")
        if self.skipped:
            lines.append(f"Skipped {_plural(len(self.skipped), 'unsupported question')}:")
            lines.extend(f"  {skipped}" for skipped in self.skipped)
        if self.errors:
            lines.append(f"Errors ({len(self.errors)}):")
            lines.extend(f"  {error}" for error in self.errors)
        lines.extend(self.notes)
        lines.append(WEIGHTS_NOTE)
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def parse_upload(*, data: bytes, fmt: str, skip_unsupported: bool, exam_code: str | None = None) -> ParseResult:
    """An uploaded file's questions; a file that is not UTF-8 is one error, never mojibake."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    try:
        text = decode_utf8(data)
    except NotUtf8Error as error:
        return ParseResult(errors=(FormatError(line=error.line, message=str(error)),))
    return FORMATS[fmt].parse(text, skip_unsupported=skip_unsupported, exam_code=exam_code)


class _Domains:
    """The exam's domains by name: exactly as written first, then ignoring case."""

    def __init__(self, domains: Iterable[Domain]) -> None:
        self.ordered = list(domains)
        self.exact = {domain.name: domain for domain in self.ordered}
        folded = Counter(domain.name.casefold() for domain in self.ordered)
        # Two domains that differ only in case are left to the exact match.
        self.folded = {domain.name.casefold(): domain for domain in self.ordered if folded[domain.name.casefold()] == 1}

    def find(self, name: str) -> Domain | None:
        name = name.strip()
        return self.exact.get(name) or self.folded.get(name.casefold())

    def listing(self) -> str:
        return ", ".join(repr(domain.name) for domain in self.ordered)


def import_bank(
    *,
    exam: Exam,
    result: ParseResult,
    default_domain: str | None = None,
    dry_run: bool = False,
    publish: bool = False,
    progress: Callable[..., None] | None = None,
    max_questions: int | None = MAX_IMPORT_QUESTIONS,
) -> ImportSummary:
    """Create the parsed questions in the exam, all or nothing; the summary says what happened.

    Questions land as drafts, which no learner sees until an instructor marks them ready.
    With `publish` every question lands ready, and so does one a certprep JSON file marks
    ready: each of those must pass the ready checks (ready_problems), or nothing is imported
    and every failure is listed by line.

    progress(done, total=, stage=), when given, hears how far the check and the writing
    are, in questions: total is the question count, counted once while checking and
    again while writing (the stage says which). A file of more than `max_questions` is
    refused whole (uploads; the operator's import_questions command passes None).
    """
    report = progress or (lambda done, **_: None)
    if max_questions is not None and len(result.questions) > max_questions:
        return ImportSummary(
            exam_code=exam.code, dry_run=dry_run, domains=(), skipped=result.skipped, notes=(),
            errors=(FormatError(line=0, message=(
                f"The file holds {len(result.questions):,} questions; one import takes at most "
                f"{max_questions:,}. Split the bank into smaller files."
            )),),
        )
    report(0, total=len(result.questions), stage="Checking questions")
    with transaction.atomic():
        # Locked so that no domain disappears between the check and the insert.
        domains = _Domains(Domain.objects.filter(exam=exam).select_for_update().order_by("order", "id"))
        errors: list[FormatError] = list(result.errors)
        notes: list[str] = []
        placed: dict[int, list[ParsedQuestion]] = {domain.pk: [] for domain in domains.ordered}

        default = None
        if not domains.ordered:
            errors.append(FormatError(line=0, message=f"{exam.code} has no domains yet: add them to the exam first."))
        elif default_domain:
            default = domains.find(default_domain)
            if default is None:
                errors.append(
                    FormatError(
                        line=0,
                        message=f"{exam.code} has no domain named {default_domain!r} "
                        f"(its domains: {domains.listing()}).",
                    )
                )

        unplaced = 0
        defaulted: Counter[str] = Counter()
        bank_images = _bank_images(result.questions)
        for checked, question in enumerate(result.questions):
            if checked and checked % _PROGRESS_EVERY == 0:
                report(checked)
            problems = question_problems(question) + _image_problems(question, bank_images=bank_images)
            if _lands_ready(question, publish=publish):
                known = set(problems)
                problems += [
                    f"not ready to publish: {problem}" for problem in ready_problems(question) if problem not in known
                ]
            if problems:
                errors.extend(FormatError(line=question.line, message=problem) for problem in problems)
                continue
            domain = domains.find(question.domain) if question.domain else None
            if domain is None and question.domain and default is not None:
                defaulted[question.domain] += 1
            domain = domain or default
            if domain is not None:
                placed[domain.pk].append(question)
            elif domains.ordered and not default_domain:
                # Without a default every such question is its own error; with a bad
                # default the one error above already says what to fix.
                unplaced += 1
                errors.append(FormatError(line=question.line, message=_no_domain_message(question, exam=exam)))
        if unplaced:
            notes.append(
                f"{exam.code}'s domains are: {domains.listing()}. Choose a default domain (--domain NAME, or "
                "Default domain on the admin's import form) to import questions whose domain is missing or unknown into one of them."
            )
        for name, count in defaulted.items():
            notes.append(
                f"{_plural(count, 'question')} named the domain {name!r}, which {exam.code} does not have; "
                f"{'they go' if count > 1 else 'it goes'} to {default.name!r}."
            )
        if result.exam_code and result.exam_code != exam.code:
            notes.append(f"The file was exported from {result.exam_code}; its questions go to {exam.code}.")
        copies = _already_in_bank(exam=exam, questions=result.questions)
        if copies:
            notes.append(
                f"{_plural(copies, 'question')} in this file {'has' if copies == 1 else 'have'} the same title and "
                f"text as a question already in {exam.code}; importing creates copies."
            )
        ready = sum(_lands_ready(question, publish=publish) for question in result.questions)
        drafts = len(result.questions) - ready
        if drafts:
            notes.append(
                f"{_plural(drafts, 'question')} {'lands' if drafts == 1 else 'land'} as "
                f"{'a draft' if drafts == 1 else 'drafts'}: no learner sees {'it' if drafts == 1 else 'them'} until "
                "marked ready (Questions › Drafts to review)."
            )
        if ready:
            notes.append(f"{_plural(ready, 'question')} {'is' if ready == 1 else 'are'} published at once (ready).")
        weighted = sum(choice.fraction is not None for question in result.questions for choice in question.choices)
        if weighted:
            notes.append(f"{_plural(weighted, 'answer')} in this file carried a weight.")

        summary = ImportSummary(
            exam_code=exam.code,
            dry_run=dry_run,
            domains=tuple(
                DomainPlan(name=domain.name, questions=tuple(placed[domain.pk]))
                for domain in domains.ordered
                if placed[domain.pk]
            ),
            skipped=result.skipped,
            errors=tuple(sorted(errors, key=lambda error: error.line)),
            notes=tuple(notes),
        )
        if summary.ok and not dry_run:
            report(0, stage="Writing questions")
            pairs = [(domain, parsed) for domain in domains.ordered for parsed in placed[domain.pk]]
            for start in range(0, len(pairs), _BATCH_SIZE):
                _create(exam=exam, pairs=pairs[start : start + _BATCH_SIZE], publish=publish)
                report(start + len(pairs[start : start + _BATCH_SIZE]))
            # The bank changed: its statistics are refreshed in the background.
            statistics_refresh_on_commit(exam=exam)
    return summary


def _lands_ready(question: ParsedQuestion, *, publish: bool) -> bool:
    return publish or question.status == QuestionStatus.READY


def _bank_images(questions: Iterable[ParsedQuestion]) -> dict[str, str]:
    """The digests of the bank's images that any question of the file names: one query for
    the whole file (a query per question made a 20,000-question preview take a minute)."""
    names = set()
    for question in questions:
        names.update(name for name, _ in question.images)
        names.update(exhibit_images(question.exhibit))
    if not names:
        return {}
    return dict(ExhibitImage.objects.filter(name__in=names).values_list("name", "digest"))


def _image_problems(question: ParsedQuestion, *, bank_images: dict[str, str]) -> list[str]:
    """An exhibit's images must be acceptable, and one name must not mean two images.

    `bank_images`: name → digest of the bank's images the file names (_bank_images).
    """
    problems = []
    carried = dict(question.images)
    for name, data in question.images:
        try:
            checked_image(name, data)
        except ExhibitError as error:
            problems.append(str(error))
    for name in sorted(carried.keys() & bank_images.keys()):
        if bank_images[name] != hashlib.sha256(carried[name]).hexdigest():
            problems.append(f"the bank already holds a different image named {name!r}: rename it in the file")
    missing = set(exhibit_images(question.exhibit)) - carried.keys()
    problems.extend(
        f"the exhibit shows the image {name!r}, which neither the file nor the bank holds"
        for name in sorted(missing - bank_images.keys())
    )
    return problems


def _no_domain_message(question: ParsedQuestion, *, exam: Exam) -> str:
    if question.domain:
        return f"no domain named {question.domain!r} in {exam.code} (give a default domain to import it anyway)"
    return f"the file names no domain for this question: give a default domain of {exam.code} to import it"


def _already_in_bank(*, exam: Exam, questions: Iterable[ParsedQuestion]) -> int:
    existing = set(Question.objects.filter(exam=exam).values_list("title", "stem"))
    if not existing:
        return 0
    return sum((question.title, question.stem) in existing for question in questions)


def _create(*, exam: Exam, pairs: list[tuple[Domain, ParsedQuestion]], publish: bool) -> None:
    """Insert these questions with their choices and errata in a fixed number of statements."""
    now = timezone.now()
    rows = Question.objects.bulk_create(
        [
            Question(
                exam=exam,
                domain=domain,
                title=parsed.title,
                topic=parsed.topic,
                exhibit=parsed.exhibit,
                stem=parsed.stem,
                explanation=parsed.explanation,
                sources=parsed.sources,
                exclusion_group=parsed.exclusion_group,
                kind=parsed.kind,
                choose=parsed.choose,
                keep_order=parsed.keep_order,
                idnumber=parsed.idnumber,
                difficulty=parsed.difficulty,
                reviewed_on=parsed.reviewed_on,
                status=QuestionStatus.READY if _lands_ready(parsed, publish=publish) else QuestionStatus.DRAFT,
                created_at=now,
                updated_at=now,
            )
            for domain, parsed in pairs
        ],
        batch_size=_BATCH_SIZE,
    )
    choices: list[Choice] = []
    errata: list[tuple[Erratum, list[Choice]]] = []
    for row, (_, parsed) in zip(rows, pairs):
        by_label = {}
        for index, parsed_choice in enumerate(parsed.choices):
            choice = _choice(question=row, parsed=parsed_choice, index=index)
            by_label[choice.label] = choice
            choices.append(choice)
        for parsed_erratum in parsed.errata:
            key = [by_label[label] for label in parsed_erratum.published_key]
            errata.append((_erratum(question=row, parsed=parsed_erratum, now=now), key))
    Choice.objects.bulk_create(choices, batch_size=_BATCH_SIZE)
    images = {name: data for _, parsed in pairs for name, data in parsed.images}
    present = set(ExhibitImage.objects.filter(name__in=images).values_list("name", flat=True))
    ExhibitImage.objects.bulk_create(
        ExhibitImage(name=name, data=data, content_type=content_type, digest=digest)
        for name, data in images.items()
        if name not in present
        for content_type, digest in [checked_image(name, data)]
    )
    if errata:
        Erratum.objects.bulk_create([erratum for erratum, _ in errata], batch_size=_BATCH_SIZE)
        through = Erratum.published_key.through
        through.objects.bulk_create(
            [through(erratum_id=erratum.pk, choice_id=choice.pk) for erratum, key in errata for choice in key],
            batch_size=_BATCH_SIZE,
        )


def _choice(*, question: Question, parsed: ParsedChoice, index: int) -> Choice:
    return Choice(
        question=question,
        label=choice_label(index),
        text=parsed.text,
        is_correct=parsed.is_correct,
        feedback=parsed.feedback,
        order=index + 1,
    )


def _erratum(*, question: Question, parsed: ParsedErratum, now) -> Erratum:
    return Erratum(
        question=question,
        note=parsed.note,
        source=parsed.source,
        status=parsed.status,
        policy=parsed.policy,
        reported_at=now,
        # The file keeps no dates; a decided erratum was decided by the time it arrived.
        decided_at=None if parsed.status == ErratumStatus.REPORTED else now,
    )


def export_bank(*, exam: Exam, questions: Iterable[Question] | None = None) -> list[ParsedQuestion]:
    """The exam's active questions (or the given ones of this exam) as plain objects, in four queries.

    Labels are renumbered A, B, C… by choice order, and each erratum's published key is
    named by those labels, so the file is consistent even where authored labels were not.
    """
    rows = Question.objects.filter(exam=exam)
    if questions is None:
        rows = rows.filter(is_active=True)
    elif isinstance(questions, QuerySet):
        rows = rows.filter(pk__in=list(questions.order_by().values_list("pk", flat=True)))
    else:
        rows = rows.filter(pk__in=[question.pk for question in questions])
    rows = (
        rows.select_related("domain")
        .prefetch_related(
            Prefetch("choices", queryset=Choice.objects.order_by("order", "id")),
            Prefetch(
                "errata",
                # Oldest first: an import creates them in file order, so a round trip keeps it.
                queryset=Erratum.objects.order_by("reported_at", "id").prefetch_related(
                    Prefetch("published_key", queryset=Choice.objects.only("id"))
                ),
            ),
        )
        .order_by("domain__order", "domain_id", "id")
    )
    rows = list(rows)
    wanted = {name for row in rows for name in exhibit_images(row.exhibit)}
    images = {name: bytes(data) for name, data in ExhibitImage.objects.filter(name__in=wanted).values_list("name", "data")}
    exported = []
    problems = []
    for position, row in enumerate(rows, start=1):
        choices = list(row.choices.all())
        positions = {choice.pk: index for index, choice in enumerate(choices)}
        errata = []
        for erratum in row.errata.all():
            key = [choice.pk for choice in erratum.published_key.all()]
            if any(pk not in positions for pk in key):
                problems.append(
                    f"question {row.pk} ({row.title!r}): an erratum's published key names a choice of another question"
                )
                continue
            errata.append(
                ParsedErratum(
                    published_key=tuple(choice_label(index) for index in sorted(positions[pk] for pk in key)),
                    note=erratum.note,
                    source=erratum.source,
                    status=erratum.status,
                    policy=erratum.policy,
                )
            )
        exported.append(
            ParsedQuestion(
                line=position,
                title=row.title,
                topic=row.topic,
                exhibit=row.exhibit,
                stem=row.stem,
                explanation=row.explanation,
                sources=row.sources,
                exclusion_group=row.exclusion_group,
                images=tuple((name, images[name]) for name in exhibit_images(row.exhibit) if name in images),
                kind=row.kind,
                choose=row.choose,
                keep_order=row.keep_order,
                idnumber=row.idnumber,
                difficulty=row.difficulty,
                reviewed_on=row.reviewed_on,
                status=row.status,
                domain=row.domain.name,
                choices=tuple(
                    ParsedChoice(text=choice.text, is_correct=choice.is_correct, feedback=choice.feedback)
                    for choice in choices
                ),
                errata=tuple(errata),
            )
        )
    if problems:
        raise ExportError(format_name="a bank file", problems=tuple(problems))
    return exported


def write_export(*, exam: Exam, fmt: str, questions: Iterable[Question] | None = None) -> str:
    """The exam's questions as a file in the given format; ExportError lists what the format cannot hold."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    return FORMATS[fmt].write(export_bank(exam=exam, questions=questions), exam_code=exam.code)


def pending_parse(*, pending: dict, exam: Exam) -> ParseResult:
    """A pending upload's questions, parsed again from the text the session (or a job) keeps."""
    return parse_upload(
        data=pending["text"].encode("utf-8"), fmt=pending["format"], skip_unsupported=pending["skip_unsupported"],
        exam_code=exam.code,
    )


def pending_summary(
    *, pending: dict, dry_run: bool, progress=None, result: ParseResult | None = None
) -> tuple[Exam | None, ImportSummary | None]:
    """Parse a pending upload again (unless `result` is that parse) and import it (or only check it, for the preview)."""
    exam = Exam.objects.filter(pk=pending["exam"]).first()
    if exam is None:
        return None, None
    if result is None:
        result = pending_parse(pending=pending, exam=exam)
    return exam, import_bank(
        exam=exam, result=result, default_domain=pending["default_domain"], dry_run=dry_run,
        publish=pending.get("publish", False), progress=progress,
    )


# A preview lists this many questions per domain; the counts always cover them all.
PREVIEW_LIMIT = 200


def preview_row(question: ParsedQuestion) -> dict:
    """One question as the preview lists it (plain values: a background preview keeps them in its job)."""
    keys = [choice_label(index) for index, choice in enumerate(question.choices) if choice.is_correct]
    kind = "Single answer" if question.kind == "single" else f"Multiple answers (choose {question.choose})"
    return {
        "line": question.line,
        "title": question.title,
        "stem": question.stem,
        "kind": kind,
        "choices": len(question.choices),
        "choice_texts": [
            {"letter": choice_label(index), "text": choice.text, "is_correct": choice.is_correct}
            for index, choice in enumerate(question.choices)
        ],
        "keys": ", ".join(keys),
        "errata": len(question.errata),
    }


def preview_of(summary: ImportSummary) -> dict:
    """What the preview page shows of a checked upload, as plain values (JSON for a job's payload)."""
    return {
        "summary": {
            "ok": summary.ok,
            "question_count": summary.question_count,
            "errors": [{"line": error.line, "message": error.message} for error in summary.errors],
            "notes": list(summary.notes),
            "skipped": [{"line": skipped.line, "kind": skipped.kind} for skipped in summary.skipped],
        },
        "domains": [
            {
                "name": plan.name,
                "count": len(plan.questions),
                "rows": [preview_row(question) for question in plan.questions[:PREVIEW_LIMIT]],
                "more": max(len(plan.questions) - PREVIEW_LIMIT, 0),
            }
            for plan in summary.domains
        ],
    }


def preview_pending_upload(*, job: Job, progress) -> JobResult:
    """The import_preview job's work (jobs.services.job_run): check the upload kept in job.payload, write nothing."""
    exam, summary = pending_summary(pending=job.payload, dry_run=True, progress=progress)
    if exam is None:
        raise JobError("The exam of that upload no longer exists.")
    return JobResult(
        message=summary.headline,
        result={"preview": preview_of(summary), "preview_url": job.payload.get("preview_url", ""), "exam": exam.pk},
    )


def import_pending_upload(*, job: Job, progress) -> str:
    """The import_questions job's work (jobs.services.job_run): the upload kept in job.payload."""
    exam, summary = pending_summary(pending=job.payload, dry_run=False, progress=progress)
    if exam is None:
        raise JobError("The exam of that upload no longer exists.")
    if not summary.ok:
        raise JobError("\n".join(summary.lines()))
    per_domain = "; ".join(f"{plan.name}: {len(plan.questions):,}" for plan in summary.domains)
    return f"{summary.headline} {per_domain}".strip()
