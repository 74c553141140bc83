"""The whole-bank statistics refresh (the nightly job's work) on the scale benchmark's database: wall time, peak memory.

    .venv/bin/python bench/scale/refresh.py --database-url postgres://…/certprep_scale [--reset-equated] [--out FILE]

Run after bench/scale/run.py has generated its database (it is left in place). One refresh
per process, so the process's peak resident memory (getrusage's ru_maxrss, the kernel's
high-water mark) is this refresh's: `exams.statistics.refresh.item_statistics_refresh` of
the SCALE exam, what `refresh_statistics` jobs run (nightly, after an import or a regrade).
Prints, and appends to --out as one JSON line: the wall time, the process's CPU time, the
PostgreSQL backend's CPU time, the resident memory before and at its peak, and the time of
each phase that exists in the code under test (the sums for the item statistics, the
calibration's read and its estimator, the equating of mocks), taken by wrapping those
functions with a timer that calls through. The same file runs against an older checkout
(the phases it lacks are left out): --code names that checkout.

--reset-equated empties every mock's equated score first (committed), as a regrade does for
the mocks holding the corrected question and as the first calibration finds them: the refresh
then equates them all. Without it the refresh finds what the previous one left.
"""
import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

# --code CHECKOUT runs another checkout's code (an older commit's, from `git worktree add`).
ROOT = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# The virtualenv may hold an editable install of another checkout, whose import hook would
# fill in modules this checkout lacks (an older one's): only this checkout's code runs.
sys.meta_path = [finder for finder in sys.meta_path if "__editable__" not in getattr(finder, "__module__", "")]


def backend_cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/certprep_scale")
    parser.add_argument("--exam", default="SCALE")
    parser.add_argument("--reset-equated", action="store_true", help="empty every mock's equated score first")
    parser.add_argument("--label", default="", help="a name for this run in the JSON line")
    parser.add_argument("--code", type=Path, help="the checkout whose code runs (default: this one)")
    parser.add_argument("--out", type=Path, help="append the result as one JSON line")
    args = parser.parse_args()
    os.environ.update({
        "DATABASE_URL": args.database_url, "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-certprep-key-padding-0123456789abcdefghijklmnop"),
        "DEBUG": "0", "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
        "LOG_LEVEL": "WARNING",
    })
    import django

    django.setup()
    from django.db import connection

    from exams.models import Attempt, Exam
    from exams.statistics import refresh

    exam = Exam.objects.get(code=args.exam)
    if args.reset_equated and hasattr(Attempt, "equated_score"):
        Attempt.objects.filter(exam=exam).update(equated_score=None)

    phases: dict[str, float] = {}

    def timer(module, name: str, label: str) -> None:
        original = getattr(module, name, None)
        if original is None:
            return

        def timed(*a, **k):
            started = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                phases[label] = phases.get(label, 0.0) + time.perf_counter() - started

        setattr(module, name, timed)

    timer(refresh, "totals_for", "item sums (totals_for, both passes)")
    timer(refresh, "_rows_for", "item and test statistics (_rows_for, both passes)")
    try:
        from exams.statistics import calibration, equating, rasch
    except ImportError:  # before the calibration
        pass
    else:
        timer(calibration, "counted_first_answers", "calibration: read first answers")
        timer(rasch, "calibrate", "calibration: estimator (rasch.calibrate)")
        timer(refresh.calibration, "calibrate_exam", "calibration, whole (calibrate_exam)")
        timer(refresh.equating, "equate_mocks", "equating mocks (equate_mocks)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    before_rss = rss_mib("VmRSS")
    before_backend = backend_cpu_seconds(backend)
    before_cpu = os.times()
    started = time.perf_counter()
    summary = refresh.item_statistics_refresh(exam=exam)
    wall = time.perf_counter() - started
    after_cpu = os.times()
    result = {
        "label": args.label, "code": str(ROOT), "reset_equated": args.reset_equated,
        "wall_s": round(wall, 2),
        "python_cpu_s": round(after_cpu.user + after_cpu.system - before_cpu.user - before_cpu.system, 2),
        "postgres_cpu_s": round(backend_cpu_seconds(backend) - before_backend, 2),
        "rss_before_mib": round(before_rss, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "phases_s": {k: round(v, 2) for k, v in phases.items()},
        "questions": summary.questions, "attempts": summary.attempts,
        "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        with args.out.open("a") as handle:
            handle.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
