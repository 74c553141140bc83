"""manage.py item_stats: facility, discrimination, point-biserial and likely mis-keyed items, per question."""
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.routers import statistics_reads
from exams import csvcells
from exams.models import Choice, Exam, Question
from exams.statistics.formulas import ItemStatistics
from exams.statistics.totals import statistics_for_exam

COLUMNS = [
    "exam", "id", "title", "domain", "n", "facility", "discrimination", "point_biserial",
    "likely_miskeyed", "key", "choices",
]


def _number(value: float | None, *, blank: str) -> Decimal | str:
    # A Decimal, not text: it prints as 0.10 and stays a number in the CSV (csvcells leaves numbers be).
    return blank if value is None else Decimal(f"{value:.2f}")


def _row(
    *, exam: Exam, question: Question, statistics: ItemStatistics, labels: dict[int, str], key_ids: set[int], blank: str
) -> dict:
    # choice_counts follows the authored choice order, so the key reads A,C rather than C,A.
    key = [labels[pk] for pk in statistics.choice_counts if pk in key_ids]
    return {
        "exam": exam.code,
        "id": question.pk,
        "title": question.title,
        "domain": question.domain.name,
        "n": statistics.n,
        "facility": _number(statistics.facility, blank=blank),
        "discrimination": _number(statistics.discrimination, blank=blank),
        "point_biserial": _number(statistics.point_biserial, blank=blank),
        "likely_miskeyed": "yes" if statistics.likely_miskeyed else "no",
        "key": ",".join(key),
        "choices": " ".join(f"{labels.get(pk, pk)}:{count}" for pk, count in statistics.choice_counts.items()),
    }


class Command(BaseCommand):
    help = (
        "Item statistics over finished mock attempts: n, facility, discrimination (upper − lower 27%), "
        "point-biserial with the rest-score, likely mis-keyed, the key and how often each choice was picked."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--exam", metavar="CODE", help="Only this exam (default: every exam).")
        parser.add_argument("--csv", action="store_true", help="Write CSV instead of a table.")

    def handle(self, *args, **options) -> None:
        code, as_csv = options["exam"], options["csv"]
        exams = Exam.objects.order_by("code")
        if code is not None:
            exams = exams.filter(code=code)
            if not exams.exists():
                known = ", ".join(Exam.objects.order_by("code").values_list("code", flat=True)) or "none yet"
                raise CommandError(f"No exam with code {code!r} (known: {known}).")
        writer = self._csv_writer() if as_csv else None
        for each in exams:
            rows = self._rows(exam=each, blank="" if as_csv else "–")
            if writer is not None:
                writer.writerows([row[column] for column in COLUMNS] for row in rows)
            else:
                self._table(exam=each, rows=rows)

    def _rows(self, *, exam: Exam, blank: str) -> list[dict]:
        with statistics_reads():  # the replica when one is configured (config.routers)
            statistics = statistics_for_exam(exam=exam)
        labels: dict[int, str] = {}
        keys: dict[int, set[int]] = {}
        for question_id, choice_id, label, is_correct in Choice.objects.filter(question__exam=exam).order_by().values_list(
            "question_id", "pk", "label", "is_correct"
        ):
            labels[choice_id] = label
            if is_correct:
                keys.setdefault(question_id, set()).add(choice_id)
        rows = []
        for question in Question.objects.filter(pk__in=statistics).select_related("domain").order_by("domain__order", "pk"):
            rows.append(_row(
                exam=exam, question=question, statistics=statistics[question.pk], labels=labels,
                key_ids=keys.get(question.pk, set()), blank=blank,
            ))
        return rows

    def _csv_writer(self) -> csvcells.Writer:
        writer = csvcells.Writer(self.stdout, lineterminator="\n")
        writer.writerow(COLUMNS)
        return writer

    def _table(self, *, exam: Exam, rows: list[dict]) -> None:
        flagged = sum(row["likely_miskeyed"] == "yes" for row in rows)
        self.stdout.write(f"{exam.code}: {exam.title} — {len(rows)} questions, {flagged} likely mis-keyed")
        header = f"{'id':>6}  {'title':<40}  {'domain':<24}  {'n':>5}  {'p':>5}  {'D':>5}  {'r_pb':>5}  {'miskey':<6}  {'key':<7}  choices"
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for row in rows:
            self.stdout.write(
                f"{row['id']:>6}  {_cut(row['title'], 40):<40}  {_cut(row['domain'], 24):<24}  {row['n']:>5}  "
                f"{row['facility']:>5}  {row['discrimination']:>5}  {row['point_biserial']:>5}  "
                f"{row['likely_miskeyed']:<6}  {row['key']:<7}  {row['choices']}"
            )
        self.stdout.write("")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
