"""Import preview benchmark: what the admin's preview of a GIFT / JSON file costs at 1,000,
10,000 and 20,000 questions (the upload cap), in time and in SQL statements.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/certprep_bench_imports \
        .venv/bin/python bench/imports/preview.py [--sizes 1000 10000 20000] [--runs 3]

The database named by DATABASE_URL is migrated and used as it is (create it first; the
script adds one exam, "BENCH-IMPORT", with a domain and a bank image, and removes them at
the end). Times, in this process against PostgreSQL: the preview's work as the admin runs
it (exams.bank.imports.pending_parse, then pending_summary's dry run, then preview_of) on a
GIFT file of plain questions and a certprep JSON file whose every question carries an
exhibit image (half of them one the bank holds); and, once, the real import of 10,000 GIFT
questions (the < 10 s target). Prints a Markdown table for docs/BENCHMARKS.md.
"""
import argparse
import base64
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from exams.bank.imports import pending_parse, pending_summary, preview_of  # noqa: E402
from exams.letters import choice_label  # noqa: E402
from exams.models import Domain, Exam, ExhibitImage, Question  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
CODE = "BENCH-IMPORT"


def gift(count: int) -> str:
    body = "\n\n".join(f"::B{n}::Benchmark question {n}: which one is right?{{=right ~wrong one ~wrong two ~wrong three}}"
                       for n in range(count))
    return f"$CATEGORY: $course$/top/Data\n\n{body}\n"


def bank_json(count: int) -> str:
    image = base64.b64encode(PNG).decode()
    questions = []
    for n in range(count):
        name = "bench-chart.png" if n % 2 else f"bench-{n}.png"
        questions.append({
            "title": f"J{n}", "stem": f"Benchmark question {n}?", "domain": "Data", "kind": "single",
            "exhibit": f"![chart](exhibit:{name})", "exhibit_images": [{"name": name, "data": image}],
            "choices": [{"label": choice_label(i), "text": f"choice {i}", "is_correct": i == 0} for i in range(4)],
        })
    return json.dumps({"format": "certprep-bank", "version": 1, "exam": CODE, "questions": questions})


def preview_once(exam: Exam, *, fmt: str, text: str) -> tuple[float, int, int]:
    pending = {"exam": exam.pk, "format": fmt, "default_domain": None, "skip_unsupported": False, "text": text}
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        result = pending_parse(pending=pending, exam=exam)
        summary = pending_summary(pending=pending, dry_run=True, result=result)[1]
        preview_of(summary)
        elapsed = time.perf_counter() - started
    assert summary.ok, summary.lines()[:5]
    return elapsed, len(captured.captured_queries), summary.question_count


def remove_bench_exam() -> None:
    Domain.objects.filter(exam__code=CODE).delete()
    Exam.objects.filter(code=CODE).delete()
    ExhibitImage.objects.filter(name="bench-chart.png").delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 20_000])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    call_command("migrate", verbosity=0)
    remove_bench_exam()
    exam = Exam.objects.create(code=CODE, title="Import benchmark", question_count=10, time_limit_minutes=10, passing_score=70)
    Domain.objects.create(exam=exam, name="Data", weight=100, order=1)
    ExhibitImage.objects.get_or_create(
        name="bench-chart.png", defaults={"data": PNG, "content_type": "image/png", "digest": hashlib.sha256(PNG).hexdigest()}
    )
    rows = []
    try:
        for fmt, make in (("gift", gift), ("json", bank_json)):
            for size in options.sizes:
                text = make(size)
                runs = [preview_once(exam, fmt=fmt, text=text) for _ in range(options.runs)]
                times = [run[0] for run in runs]
                rows.append((fmt, size, len(text.encode()) / 1024, statistics.median(times), times, runs[0][1]))
                print(f"{fmt} {size}: {statistics.median(times):.2f} s, {runs[0][1]} statements", flush=True)
        text = gift(10_000)
        pending = {"exam": exam.pk, "format": "gift", "default_domain": None, "skip_unsupported": False, "text": text}
        with transaction.atomic():
            started = time.perf_counter()
            summary = pending_summary(pending=pending, dry_run=False)[1]
            imported = time.perf_counter() - started
            assert summary.written and Question.objects.filter(exam=exam).count() == 10_000
            transaction.set_rollback(True)
    finally:
        remove_bench_exam()
    print()
    print("| file | questions | size | preview (median) | each run | SQL statements |")
    print("|---|---:|---:|---:|---|---:|")
    for fmt, size, kib, median, times, queries in rows:
        each = ", ".join(f"{t:.2f}" for t in times)
        label = "GIFT, plain questions" if fmt == "gift" else "certprep JSON, an exhibit image each"
        print(f"| {label} | {size:,} | {kib:,.0f} KiB | {median:.2f} s | {each} s | {queries} |")
    print(f"\nImport of 10,000 GIFT questions (parse + import_bank, rolled back): {imported:.2f} s")


if __name__ == "__main__":
    main()
