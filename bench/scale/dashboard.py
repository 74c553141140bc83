"""The dashboard of the scale benchmark's learner with 1,000 attempts: median and p95 of repeated requests, statements.

    .venv/bin/python bench/scale/dashboard.py --database-url postgres://…/certprep_scale [--runs 30] [--held]
        [--statements] [--profile] [--dump FILE] [--code CHECKOUT] [--out FILE]

Run after bench/scale/run.py has generated its database (it is left in place). As run.py
times it: `GET /dashboard/?exam=SCALE` through django.test.Client and the full middleware
stack, logged in as the learner "heavy", after 3 warm-up requests. Prints the median, p95 and
best of --runs requests, the CPU per request (this process's, and the database's backends'
from /proc: steadier than wall time on a shared machine) and the statement count of one more;
--statements lists that request's statements by time, --dump writes them to a file, --profile
adds cProfile's heaviest functions (CPU time) of one more request. --held first starts a mock
for the learner (deleted at the end), so the page holds back what the running mock's
questions would tell (the key rule), as a learner in the middle of a mock sees it.
"""
import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

# --code CHECKOUT runs another checkout's code (main's, an older commit's from `git worktree add`).
ROOT = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# The virtualenv may hold an editable install of another checkout: only this checkout's code runs.
sys.meta_path = [finder for finder in sys.meta_path if "__editable__" not in getattr(finder, "__module__", "")]


def backend_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/certprep_scale")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--statements", action="store_true")
    parser.add_argument("--held", action="store_true", help="with a mock running (started, then deleted)")
    parser.add_argument("--dump", type=Path, help="write the statements of one request to this file")
    parser.add_argument("--label", default="")
    parser.add_argument("--code", type=Path, help="the checkout whose code runs (default: this one)")
    parser.add_argument("--out", type=Path, help="append the result as one JSON line")
    args = parser.parse_args()
    os.environ.update({
        "DATABASE_URL": args.database_url, "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-certprep-key-padding-0123456789abcdefghijklmnop"),
        "DEBUG": "0", "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
        "ALLOWED_HOSTS": "testserver,127.0.0.1", "LOG_LEVEL": "WARNING",
    })
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from exams.models import Attempt, Exam
    from exams.room import services

    heavy = User.objects.get(username="heavy")
    exam = Exam.objects.get(code="SCALE")
    running = services.attempt_start(user=heavy, exam=exam, seed=7) if args.held else None
    try:
        client = Client()
        client.force_login(heavy)
        url = "/dashboard/?exam=SCALE"

        def get():
            response = client.get(url)
            if response.status_code != 200:
                raise SystemExit(f"dashboard answered {response.status_code}")
            return response

        for _ in range(3):
            get()
        # This database's backends (the pool's connections; the benchmark's database is its own).
        with connection.cursor() as cursor:
            cursor.execute("SELECT array_agg(pid) FROM pg_stat_activity WHERE datname = current_database()")
            backend = cursor.fetchone()[0]
        runs, cpu = [], []
        for _ in range(args.runs):
            started, python_started, backend_started = time.perf_counter(), time.process_time(), backend_cpu(backend)
            get()
            runs.append(time.perf_counter() - started)
            cpu.append((time.process_time() - python_started, backend_cpu(backend) - backend_started))
        with CaptureQueriesContext(connection) as captured:
            get()
        ordered = sorted(runs)
        result = {
            "label": args.label, "code": str(ROOT), "held": args.held, "runs": len(runs),
            "median_ms": round(1000 * statistics.median(runs), 1),
            "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
            "best_ms": round(1000 * ordered[0], 1),
            # CPU per request, which other processes' load barely changes: this process's, and
            # its PostgreSQL backend's (read from /proc, in clock ticks of 10 ms: a median of many).
            "python_cpu_ms": round(1000 * statistics.median([p for p, _ in cpu]), 1),
            "postgres_cpu_ms": round(1000 * statistics.mean([b for _, b in cpu]), 1),
            "statements": len(captured.captured_queries),
            "statements_ms": round(sum(1000 * float(q["time"]) for q in captured.captured_queries), 1),
            "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        }
        print(json.dumps(result))
        if args.statements:
            for query in sorted(captured.captured_queries, key=lambda q: -float(q["time"])):
                print(f"{1000 * float(query['time']):8.1f} ms  {query['sql'][:160]}")
        if args.dump:
            args.dump.write_text("".join(f"-- {1000 * float(q['time']):.1f} ms\n{q['sql']};\n\n" for q in captured.captured_queries))
        if args.profile:
            profile = cProfile.Profile(time.process_time)  # CPU time: steadier on a shared machine
            profile.enable()
            get()
            profile.disable()
            stats = pstats.Stats(profile)
            stats.sort_stats("cumulative").print_stats(r"certprep|wt-|exams|accounts|config", 40)
            stats.sort_stats("tottime").print_stats(25)
        if args.out:
            with args.out.open("a") as handle:
                handle.write(json.dumps(result) + "\n")
    finally:
        if running is not None:
            Attempt.objects.filter(pk=running.attempt.pk).delete()


if __name__ == "__main__":
    main()
