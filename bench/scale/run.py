"""Scale benchmark: certprep's heavy reads and writes over a large generated history.

    .venv/bin/python bench/scale/run.py                 (what `make bench-scale` runs)
    .venv/bin/python bench/scale/run.py --scale 0.1     (a tenth of everything, e.g. short of disk)

Creates the database certprep_scale (dropped first), migrates it, generates the history
(bench/scale/generate.py: 10,000 questions, 100,000 attempts, 6,000,000 responses by
default), then times, in this process against PostgreSQL on loopback:
  - drawing a mock (exams.room.services.attempt_start) for a new learner and for one with
    1,000 attempts, rolled back each time;
  - the dashboard of the learner with 1,000 attempts, through django.test.Client and the
    full middleware stack, after a warm-up (median of several);
  - item statistics for one question and for the whole bank (exams.statistics.totals);
  - confirming an erratum on the question every attempt holds, which regrades them all
    (exams.bank.errata.regrade.erratum_confirm), once;
  - importing a 10,000-question GIFT file (exams.bank.imports: parse, then import_bank).
Every heavy statement gets EXPLAIN (ANALYZE, BUFFERS) in a separate pass that is rolled
back (so the timed runs are not slowed by it). Writes bench/results/scale.json and
scale.md, and puts scale.md between <!-- bench:scale:begin --> / <!-- bench:scale:end -->
in docs/BENCHMARKS.md. The database is left in place for inspection (`--drop` removes it).
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared report helpers
from report import code_version, update_doc, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGETS = {"dashboard": 0.100, "regrade": 10.0, "import": 10.0}
# Bytes per response row on disk with its indexes, its pick and the WAL while loading
# (measured: ~4.5 GB for 6,000,000), with room to spare.
BYTES_PER_RESPONSE = 1_100


def app_env(database_url: str) -> dict:
    return {
        "DATABASE_URL": database_url,
        "SECRET_KEY": "bench-only-certprep-key-padding-0123456789abcdefghijklmnop",
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "ALLOWED_HOSTS": "testserver,127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
    return {"nproc": os.cpu_count(), "memory_gib": round(mem_kb / 1024 / 1024, 1),
            "cpu_model": model[1].strip() if model else "unknown", "kernel": platform.release(),
            "python": platform.python_version()}


def create_database(database_url: str) -> dict:
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return postgres_settings(database_url)


def postgres_settings(database_url: str) -> dict:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as connection:
        settings = dict(connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('fsync','synchronous_commit','shared_buffers',"
            "'work_mem','max_wal_size','data_directory','random_page_cost','effective_cache_size')"
        ).fetchall())
        settings["version"] = connection.execute("SHOW server_version").fetchone()[0]
    return settings


def free_bytes(path: str) -> int:
    try:
        return shutil.disk_usage(path).free
    except (FileNotFoundError, PermissionError):
        return shutil.disk_usage("/").free


# ---------------------------------------------------------------- measuring


class ExplainAll:
    """An execute wrapper: EXPLAIN (ANALYZE, BUFFERS) each statement in a savepoint rolled back, then run it."""

    def __init__(self):
        self.plans: list[dict] = []

    def __call__(self, execute, sql, params, many, context):
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        plain_insert = head == "INSERT" and not re.search(r"\)\s*SELECT\b", sql, re.IGNORECASE)
        if not many and head in ("SELECT", "UPDATE", "DELETE", "INSERT", "WITH") and not plain_insert:
            cursor = context["cursor"].cursor
            cursor.execute("SAVEPOINT bench_explain")
            try:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                plan = [row[0] for row in cursor.fetchall()]
            finally:
                cursor.execute("ROLLBACK TO SAVEPOINT bench_explain")
            found = re.search(r"Execution Time: ([\d.]+) ms", plan[-1] if plan else "")
            self.plans.append({"sql": sql, "params": list(params) if params else [], "plan": plan,
                               "ms": float(found[1]) if found else 0.0})
        return execute(sql, params, many, context)

    def heaviest(self, count: int = 3) -> list[dict]:
        return sorted(self.plans, key=lambda p: -p["ms"])[:count]


def explained(operation) -> ExplainAll:
    """Run the operation once with every statement explained, inside a transaction rolled back."""
    from django.core import signals
    from django.db import close_old_connections, connection, transaction

    explain = ExplainAll()
    # The test client would hand the connection back to the pool at the end of a request,
    # which cannot happen inside the transaction this pass rolls back.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        with transaction.atomic():
            with connection.execute_wrapper(explain):
                operation()
            transaction.set_rollback(True)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
    return explain


def timed(operation, *, runs: int, warmup: int = 0, rollback: bool = False) -> dict:
    """Wall-clock seconds of each run (after the warm-up), and the number of SQL statements of one."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    def once():
        if rollback:
            with transaction.atomic():
                operation()
                transaction.set_rollback(True)
        else:
            operation()

    for _ in range(warmup):
        once()
    times = []
    queries = None
    for index in range(runs):
        started = time.perf_counter()
        if index == 0:
            with CaptureQueriesContext(connection) as captured:
                once()
            queries = len(captured.captured_queries)
        else:
            once()
        times.append(time.perf_counter() - started)
    return {"runs": [round(t, 4) for t in times], "median": statistics.median(times), "queries": queries}


# ---------------------------------------------------------------- the operations


def measure(args, scale) -> dict:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from generate import DOMAINS, EXAM_CODE, HEAVY, STAR_QUESTION

    from exams.bank import imports
    from exams.bank.errata import regrade
    from exams.bank.formats import ParsedChoice, ParsedQuestion
    from exams.bank.formats.gift import write_gift
    from exams.models import Attempt, Choice, Domain, Erratum, ErratumSource, ErratumStatus, Exam, Question, Response
    from exams.room import services
    from exams.statistics import totals as item_stats

    exam = Exam.objects.get(code=EXAM_CODE)
    heavy = User.objects.get(username=HEAVY)
    fresh, _ = User.objects.get_or_create(username="scale-newcomer")
    star = Question.objects.get(pk=STAR_QUESTION)
    results = {"counts": {
        "questions": Question.objects.filter(exam=exam).count(),
        "attempts": Attempt.objects.count(),
        "responses": Response.objects.count(),
        "heavy_attempts": Attempt.objects.filter(user=heavy).count(),
        "star_holders": Response.objects.filter(question=star).count(),
    }}
    print(f"  counts: {results['counts']}", flush=True)
    cpu_start = cpu_snapshot()

    def draw(user):
        return lambda: services.attempt_start(user=user, exam=exam, seed=7)

    print("  drawing a mock ...", flush=True)
    results["draw_new"] = timed(draw(fresh), runs=args.runs, warmup=1, rollback=True)
    results["draw_heavy"] = timed(draw(heavy), runs=args.runs, warmup=1, rollback=True)
    results["draw_heavy_explain"] = explained(draw(heavy)).heaviest(2)

    print("  dashboard ...", flush=True)
    client = Client()
    client.force_login(heavy)
    url = f"/dashboard/?exam={EXAM_CODE}"

    def dashboard():
        response = client.get(url)
        if response.status_code != 200:
            raise SystemExit(f"dashboard answered {response.status_code}")

    results["dashboard"] = timed(dashboard, runs=max(args.runs, 7), warmup=2)
    results["dashboard_explain"] = explained(dashboard).heaviest(3)

    print("  item statistics ...", flush=True)
    results["item_stats_question"] = timed(lambda: item_stats.statistics_for_question(question=star), runs=args.runs, warmup=1)
    results["item_stats_question_explain"] = explained(lambda: item_stats.statistics_for_question(question=star)).heaviest(1)
    # The whole bank is heavy: timed once (and its statements explained on one domain's worth).
    started = time.perf_counter()
    bank = item_stats.statistics_for_exam(exam=exam)
    results["item_stats_bank"] = {"runs": [round(time.perf_counter() - started, 2)],
                                  "median": time.perf_counter() - started, "questions": len(bank)}
    results["item_stats_bank_rss_mib"] = _rss_mib()

    print("  regrade ...", flush=True)
    published = Choice.objects.get(question=star, order=1)
    corrected = Choice.objects.get(question=star, order=2)

    def open_erratum() -> Erratum:
        erratum = Erratum.objects.create(question=star, source=ErratumSource.INSTRUCTOR, status=ErratumStatus.REPORTED,
                                         note="Benchmark: B is the right key.")
        erratum.published_key.set([published])
        return erratum

    results["regrade_explain"] = explained(
        lambda: regrade.erratum_confirm(erratum=open_erratum(), policy="credit_corrected", corrected_choice_ids=[corrected.pk])
    ).heaviest(4)
    erratum = open_erratum()
    started = time.perf_counter()
    event = regrade.erratum_confirm(erratum=erratum, policy="credit_corrected", corrected_choice_ids=[corrected.pk]).event
    results["regrade"] = {"runs": [round(time.perf_counter() - started, 2)], "median": time.perf_counter() - started,
                          "attempts_touched": event.attempts_touched, "scores_changed": event.scores_changed,
                          "pass_flips": event.pass_flips}
    # After the regrade the learner has score-change notices: the dashboard again.
    results["dashboard_after_regrade"] = timed(dashboard, runs=max(args.runs, 7), warmup=1)
    results["dashboard_after_regrade_explain"] = explained(dashboard).heaviest(2)

    print("  GIFT import ...", flush=True)
    names = [name for name, _ in DOMAINS]
    parsed = [
        ParsedQuestion(
            line=0, title=f"Imported question {n}", stem=f"Which option is right for imported question {n}? Pick **one**.",
            explanation="Because the benchmark says so.", kind="single", choose=1, keep_order=False,
            domain=names[n % len(names)],
            choices=tuple(ParsedChoice(text=f"Option {letter} of question {n}", is_correct=letter == "A",
                                       feedback="Right." if letter == "A" else "")
                          for letter in "ABCD"),
        )
        for n in range(1, args.gift_questions + 1)
    ]
    gift = write_gift(parsed).encode()
    (args.workdir / "import.gift").write_bytes(gift)
    import_runs, parse_runs, totals = [], [], []
    for attempt in range(args.import_runs):
        target = Exam.objects.create(code=f"IMPORT-{attempt + 1}", title="Import benchmark", is_published=False)
        for order, (name, weight) in enumerate(DOMAINS):
            Domain.objects.create(exam=target, name=name, weight=weight, order=order)
        started = time.perf_counter()
        result = imports.parse_upload(data=gift, fmt="gift", skip_unsupported=False)
        parsed_at = time.perf_counter()
        summary = imports.import_bank(exam=target, result=result)
        done = time.perf_counter()
        if not summary.written or summary.question_count != args.gift_questions:
            raise SystemExit(f"the GIFT import did not write {args.gift_questions} questions:\n{summary}")
        parse_runs.append(parsed_at - started)
        import_runs.append(done - parsed_at)
        totals.append(done - started)
    results["import"] = {"bytes": len(gift), "questions": args.gift_questions, "parse": [round(t, 2) for t in parse_runs],
                         "import_bank": [round(t, 2) for t in import_runs], "runs": [round(t, 2) for t in totals],
                         "median": statistics.median(totals)}

    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid), c.reltuples::bigint
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 8
        """)
        results["tables"] = cursor.fetchall()
        cursor.execute("SELECT pg_database_size(current_database())")
        results["database_bytes"] = cursor.fetchone()[0]
    results["others_cores"] = others_share(cpu_start, cpu_snapshot())
    return results


def cpu_snapshot() -> dict:
    """Machine-wide busy CPU seconds, this process's, and this database's PostgreSQL backends'."""
    from django.db import connection

    hz = os.sysconf("SC_CLK_TCK")
    fields = list(map(int, Path("/proc/stat").read_text().split()[1:9]))
    busy = (sum(fields) - fields[3] - fields[4]) / hz  # all but idle and iowait
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        pids = [pid for (pid,) in cursor.fetchall()]
    backends = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            backends[pid] = (int(stat[11]) + int(stat[12])) / hz
        except (FileNotFoundError, ProcessLookupError):
            pass
    own = os.times()
    return {"time": time.time(), "busy": busy, "own": own.user + own.system, "backends": backends}


def others_share(before: dict, after: dict) -> float:
    """Cores used on average by everything except this benchmark and its database backends."""
    backends = sum(after["backends"][pid] - before["backends"].get(pid, 0.0) for pid in after["backends"])
    others = (after["busy"] - before["busy"]) - (after["own"] - before["own"]) - backends
    return max(0.0, others) / max(1e-9, after["time"] - before["time"])


def _rss_mib() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024


# ---------------------------------------------------------------- report


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def plan_block(plan: dict, limit: int = 45) -> list[str]:
    sql = re.sub(r"\s+", " ", plan["sql"]).strip()
    if len(sql) > 700:
        sql = sql[:700] + " …"
    lines = plan["plan"]
    shown = lines if len(lines) <= limit else lines[: limit - 3] + ["   …", *lines[-2:]]
    return ["", f"```sql\n{sql}\n```", "", "```", *shown, "```"]


def report(args, results: dict) -> str:
    m, pg, r = results["machine"], results["postgres"], results["measure"]
    counts = r["counts"]
    gen = results.get("generation")
    target_rows = [
        (f"dashboard of a learner with {counts['heavy_attempts']:,} attempts < 100 ms", r["dashboard"]["median"], TARGETS["dashboard"]),
        (f"regrade of a question held by {counts['star_holders']:,} attempts < 10 s", r["regrade"]["median"], TARGETS["regrade"]),
        (f"import of a {args.gift_questions:,}-question GIFT file < 10 s", r["import"]["median"], TARGETS["import"]),
    ]
    lines = [
        f"Command: `{results['command']}` · certprep at `{results['code']}` · date {results['date']} · machine: {m['nproc']} cores ({m['cpu_model']}), "
        f"{m['memory_gib']} GiB, Linux {m['kernel']}, Python {m['python']}; PostgreSQL {pg['version']} on the same machine, "
        f"settings at their defaults (fsync={pg['fsync']}, synchronous_commit={pg['synchronous_commit']}, "
        f"shared_buffers={int(pg['shared_buffers']) * 8 // 1024} MB, work_mem={pg['work_mem']} kB). "
        f"Load average at the start {results['loadavg_start']}, at the end {results['loadavg_end']} (the benchmark's own "
        "work included). " + shared_note(r),
        "",
        f"Data: {counts['questions']:,} questions (4 choices, one version each), {counts['attempts']:,} finished mocks, "
        f"{counts['responses']:,} responses; the heavy learner has {counts['heavy_attempts']:,} attempts; "
        f"question {STAR()} is held by {counts['star_holders']:,} attempts. Database size "
        f"{results['measure']['database_bytes'] / 2**30:.1f} GiB. {results['scale_note']}",
        "",
    ]
    if gen:
        lines += [f"Generated in {sum(t for _, _, t in gen):,.0f} s (`bench/scale/generate.py`, set-based "
                  "`INSERT ... SELECT generate_series`, foreign-key triggers skipped for the load session only, then "
                  "`VACUUM (ANALYZE)`): " + ", ".join(f"{label} {seconds:.1f} s" for label, _, seconds in gen) + ".", ""]
    lines += ["### Targets", "", "| target | measured (median) | result |", "|---|---:|---|"]
    for label, value, limit in target_rows:
        lines.append(f"| {label} | {ms(value) if value < 1 else f'{value:.2f} s'} | **{'pass' if value < limit else 'miss'}** |")
    lines += [
        "", "### Timings", "",
        "| operation | runs | median | each run | SQL statements |", "|---|---:|---:|---|---:|",
    ]

    def row(label, entry, unit_ms=True):
        median = entry["median"]
        each = ", ".join(f"{t * 1000:.0f}" if unit_ms else f"{t:.2f}" for t in entry["runs"])
        shown = ms(median) if unit_ms else f"{median:.2f} s"
        queries = entry.get("queries")
        lines.append(f"| {label} | {len(entry['runs'])} | {shown} | {each} {'ms' if unit_ms else 's'} "
                     f"| {queries if queries is not None else '—'} |")

    row("draw a mock, learner with no history (`services.attempt_start`, rolled back)", r["draw_new"])
    heavy = f"{counts['heavy_attempts']:,}"
    row(f"draw a mock, learner with {heavy} attempts", r["draw_heavy"])
    row(f"dashboard, learner with {heavy} attempts (`GET /dashboard/`, test client, full middleware)", r["dashboard"])
    row(f"dashboard again after the regrade (the learner now has up to {heavy} score-change notices)", r["dashboard_after_regrade"])
    row(f"item statistics, one question held by {counts['star_holders']:,} attempts (`item_stats.statistics_for_question`)", r["item_stats_question"])
    row(f"item statistics, whole bank: {r['item_stats_bank']['questions']:,} questions (`item_stats.statistics_for_exam`)",
        r["item_stats_bank"], unit_ms=False)
    row("regrade: `regrade.erratum_confirm`, credit corrected key, every attempt", r["regrade"], unit_ms=False)
    row(f"GIFT import, {args.gift_questions:,} questions ({r['import']['bytes'] / 1024:,.0f} KiB): parse + `imports.import_bank`",
        r["import"], unit_ms=False)
    lines += [
        "",
        f"Regrade: {r['regrade']['attempts_touched']:,} responses regraded, {r['regrade']['scores_changed']:,} scores "
        f"changed, {r['regrade']['pass_flips']:,} pass/fail flips. Import runs: parse "
        f"{', '.join(f'{t:.2f}' for t in r['import']['parse'])} s, `import_bank` "
        f"{', '.join(f'{t:.2f}' for t in r['import']['import_bank'])} s. The whole-bank statistics held the process at "
        f"{r['item_stats_bank_rss_mib']:,.0f} MiB peak resident memory.",
        "",
        "Largest tables (total with indexes / heap):",
        "",
        "| table | total | heap | rows |", "|---|---:|---:|---:|",
    ]
    for name, total, heap, rows in r["tables"]:
        lines.append(f"| {name} | {total / 2**20:,.0f} MiB | {heap / 2**20:,.0f} MiB | {rows:,} |")
    lines += ["", "### EXPLAIN (ANALYZE, BUFFERS) of the heavy statements", "",
              "Each operation run once more with every statement explained in a savepoint that is rolled back, "
              "heaviest first (statement text as Django sends it; `%s` are its parameters)."]
    for label, key in [(f"Drawing a mock for the learner with {heavy} attempts", "draw_heavy_explain"),
                       (f"Dashboard of the learner with {heavy} attempts", "dashboard_explain"),
                       ("Item statistics for one question", "item_stats_question_explain"),
                       ("Regrade (confirming the erratum)", "regrade_explain"),
                       ("Dashboard after the regrade", "dashboard_after_regrade_explain")]:
        lines += ["", f"#### {label}"]
        for plan in r[key]:
            lines += plan_block(plan)
    return "\n".join(lines) + "\n"


def shared_note(measure: dict) -> str:
    others = measure.get("others_cores")
    if others is None:
        return "Other work on the machine was not measured in this run."
    if others > 0.1:
        return (f"The machine was shared: other processes used on average {others:.2f} of {os.cpu_count()} cores "
                "while the timings ran, so wall-clock figures carry that noise.")
    return "Nothing else ran on the machine to speak of while the timings ran."


def STAR() -> int:
    from generate import STAR_QUESTION

    return STAR_QUESTION


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/certprep_scale")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every count below (default 1.0)")
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--learners", type=int, default=2_000)
    parser.add_argument("--heavy-attempts", type=int, default=1_000, help="attempts of the dashboard's learner")
    parser.add_argument("--gift-questions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the quick operations (median reported)")
    parser.add_argument("--import-runs", type=int, default=3)
    parser.add_argument("--skip-generate", action="store_true", help="reuse the generated database as it is")
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    parser.add_argument("--generate-only", action="store_true",
                        help="create, migrate and fill the database, then stop (for bench/scale/refresh.py and dashboard.py)")
    parser.add_argument("--report-from", type=Path, help="only rewrite the Markdown from a results JSON of an earlier run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/certprep-bench-scale"))
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.report_from:
        results = json.loads(args.report_from.read_text())
        args.gift_questions = results["measure"]["import"]["questions"]
        section = report(args, results)
        (args.results / "scale.md").write_text(section)
        update_doc(args.doc, section, "scale")
        return
    if not (ROOT / "staticfiles" / "staticfiles.json").exists():
        raise SystemExit("staticfiles/staticfiles.json is missing: run collectstatic first (make bench-scale does)")

    from generate import Scale

    scale = Scale(questions=round(args.questions * args.scale), attempts=round(args.attempts * args.scale),
                  learners=max(2, round(args.learners * args.scale)),
                  heavy_attempts=min(args.heavy_attempts, round(args.attempts * args.scale)))
    os.environ.update(app_env(args.database_url))
    started = time.time()
    results = {
        "command": "make bench-scale" if os.environ.get("MAKELEVEL") else " ".join([".venv/bin/python", "bench/scale/run.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "code": code_version(),
        "loadavg_start": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
        "scale_note": "",
    }
    if not args.skip_generate:
        settings = create_database(args.database_url)
        need = scale.responses * BYTES_PER_RESPONSE
        free = free_bytes(settings["data_directory"])
        print(f"disk: {free / 2**30:.1f} GiB free where PostgreSQL keeps its data; this scale needs about {need / 2**30:.1f} GiB")
        if free < need * 1.5:
            factor = max(0.01, free / (need * 1.5))
            raise SystemExit(f"not enough disk for this scale: rerun with --scale {factor:.2f} or less (free {free / 2**30:.1f} GiB)")
        if args.scale != 1.0:
            results["scale_note"] = f"Reduced scale: --scale {args.scale} of the default."
        print("migrating ...", flush=True)
        migrate = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=dict(os.environ),
                                 capture_output=True, text=True, timeout=600)
        if migrate.returncode:
            raise SystemExit(f"migrate failed:\n{migrate.stderr}")
        import django

        django.setup()
        from generate import generate

        print(f"generating {scale} ...", flush=True)
        results["generation"] = generate(scale)
    if args.generate_only:
        return
    results["postgres"] = postgres_settings(args.database_url)
    print("measuring ...", flush=True)
    results["measure"] = measure(args, scale)
    results["elapsed_s"] = time.time() - started
    results["loadavg_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if args.drop:
        from django.db import connections

        connections.close_all()
        import psycopg

        name = args.database_url.rsplit("/", 1)[1]
        with psycopg.connect(args.database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    write_results(args.results, args.doc, "scale", results, report(args, results))


if __name__ == "__main__":
    main()
