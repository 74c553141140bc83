"""Scale-out benchmark: two gunicorn servers behind round robin, PgBouncer, a streaming replica.

    .venv/bin/python bench/scale_out/run.py          (what `make bench-scale-out` runs)

Sets up, on loopback, everything docs/DEPLOY.md "Scaling out" describes, runs learners
across it, and tears it all down again (failure or not):
1. A PostgreSQL primary of its own (initdb on a free port, durability at the defaults,
   `host replication` allowed from loopback), the benchmark database in it with
   `ALTER DATABASE … SET jit = off` (PgBouncer refuses the `options` startup parameter),
   migrated, the NCA-GENM bank loaded, learner accounts signed in, a staff account, and
   the item statistics computed (`manage.py refresh_item_statistics`).
2. A streaming replica: `pg_basebackup -R -X stream` of the primary, started on its own port.
3. PgBouncer (Debian's, `pool_mode = transaction`) in front of the primary.
4. Two gunicorn servers (`sync:2` each) with DATABASE_URL → PgBouncer, DATABASE_PGBOUNCER=1,
   DATABASE_REPLICA_URL → the replica; nginx round-robins every request over both.
5. LEARNERS learners (bench/load/locustfile.py's Learner, sessions made by the seeding) and a
   staff member reloading the admin's question list (its item statistics read the replica:
   config.routers) through nginx. A third of the way into the measured window the replica
   is stopped (`pg_ctl stop -m fast`), two thirds of the way it is started again.
6. Every answer the servers confirmed is looked up on the primary (bench/load/lost_answers.py).
Writes bench/results/scale_out.json and .md, and the section between
<!-- bench:scale_out:begin --> / <!-- bench:scale_out:end --> in docs/BENCHMARKS.md.
"""
import argparse
import importlib.util
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from report import code_version, write_results  # noqa: E402
from tests.fault.cluster import ThrowawayCluster, free_port  # noqa: E402

_spec = importlib.util.spec_from_file_location("load_run", ROOT / "bench" / "load" / "run.py")
load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(load)

STATS = "statistics page"
_cleanup: list = []


def as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


# ---------------------------------------------------------------- PostgreSQL: primary and replica


class Primary(ThrowawayCluster):
    def create(self) -> None:
        super().create()
        with open(self.data / "pg_hba.conf", "a") as hba:
            hba.write("host replication all 127.0.0.1/32 trust\n")


class Replica:
    """A streaming replica of `primary` made by pg_basebackup -R, on its own port."""

    def __init__(self, primary: Primary, root: Path):
        self.primary, self.root = primary, root
        self.data, self.log = root / "replica", root / "replica.log"
        self.port = free_port()
        primary._run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
                     "-D", str(self.data), "-R", "-X", "stream", "-c", "fast", timeout=300)
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\n# the replica\nport = {self.port}\nhot_standby = on\n")
        self.start()

    def _pg_ctl(self, *args: str) -> None:
        self.primary._run("pg_ctl", *args, "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", timeout=90)

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self) -> None:
        self._pg_ctl("stop", "-m", "fast")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.primary._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", timeout=45)
            except (RuntimeError, subprocess.TimeoutExpired):
                pass


def scalar(url: str, sql: str, params=()):
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=5) as connection:
        return connection.execute(sql, params).fetchone()[0]


# ---------------------------------------------------------------- PgBouncer and nginx


class PgBouncer:
    def __init__(self, root: Path, primary: Primary, database: str, pool_size: int):
        self.root, self.port = root, free_port()
        self.conf = root / "pgbouncer.ini"
        (root / "userlist.txt").write_text('"postgres" ""\n')
        self.settings = {
            "pool_mode": "transaction", "default_pool_size": pool_size, "max_client_conn": 500,
            "auth_type": "trust",
        }
        self.conf.write_text(
            f"[databases]\n{database} = host=127.0.0.1 port={primary.port} dbname={database}\n\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {root / 'userlist.txt'}\nadmin_users = postgres\n"
            f"pool_mode = transaction\ndefault_pool_size = {pool_size}\nmax_client_conn = 500\n"
            f"logfile = {root / 'pgbouncer.log'}\npidfile = {root / 'pgbouncer.pid'}\n"
        )
        self.process = subprocess.Popen(as_postgres(["/usr/sbin/pgbouncer", str(self.conf)]), start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=open(root / "pgbouncer.stderr", "w"))
        load._servers.append(self.process)
        deadline = time.monotonic() + 20
        while True:
            try:
                scalar(self.url(database), "SELECT 1")
                break
            except Exception:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"pgbouncer did not start; see {root / 'pgbouncer.log'}")
                time.sleep(0.2)
        self.version = subprocess.run(["/usr/sbin/pgbouncer", "--version"], capture_output=True, text=True).stdout.split("\n")[0]

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def show(self, what: str) -> list[dict]:
        """SHOW POOLS / SHOW STATS on PgBouncer's console (simple query protocol: psql)."""
        done = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "pgbouncer",
                               "-A", "-F", "\t", "-c", f"SHOW {what}"], capture_output=True, text=True, timeout=10)
        lines = [line for line in done.stdout.splitlines() if "\t" in line]
        if not lines:
            return []
        head = lines[0].split("\t")
        return [dict(zip(head, line.split("\t"))) for line in lines[1:]]


class Nginx:
    def __init__(self, root: Path, upstreams: list[int]):
        self.root, self.port = root, free_port()
        (root / "nginx-tmp").mkdir(exist_ok=True)
        servers = "".join(f"    server 127.0.0.1:{port};\n" for port in upstreams)
        self.conf = root / "nginx.conf"
        self.conf.write_text(f"""daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log warn;
{"user root;" if os.geteuid() == 0 else ""}
events {{ worker_connections 2048; }}
http {{
  access_log off;
  client_body_temp_path {root}/nginx-tmp/body;
  proxy_temp_path {root}/nginx-tmp/proxy;
  fastcgi_temp_path {root}/nginx-tmp/fastcgi;
  uwsgi_temp_path {root}/nginx-tmp/uwsgi;
  scgi_temp_path {root}/nginx-tmp/scgi;
  upstream certprep {{
{servers}    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{self.port};
    keepalive_timeout 75s;
    location / {{
      proxy_pass http://certprep;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_read_timeout 120s;
    }}
  }}
}}
""")
        self.process = subprocess.Popen(["/usr/sbin/nginx", "-p", str(root), "-c", str(self.conf)], start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=open(root / "nginx.stderr", "w"))
        load._servers.append(self.process)
        self.url = f"http://127.0.0.1:{self.port}"
        import urllib.request

        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"nginx did not start; see {root / 'nginx-error.log'}")
                time.sleep(0.2)


class Front:
    """What load.run_locust needs of "a server": the nginx address and one server's process for its CPU meter."""

    def __init__(self, nginx: Nginx, server, setting: str, database: str):
        self.url, self.process, self.setting, self.database = nginx.url, server.process, setting, database


# ---------------------------------------------------------------- setup


def staff_sessions(args) -> str:
    """A superuser and a signed-in session for it, made as a login would make it; the cookie list goes to a file."""
    path = args.workdir / "staff-sessions.json"
    code = (
        "import json, secrets, string;"
        "from django.conf import settings;"
        "from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY;"
        "from django.contrib.auth.models import User;"
        "from django.utils.module_loading import import_string;"
        "user = User.objects.create_superuser('benchstaff', 'benchstaff@example.com', None);"
        "store = import_string(settings.SESSION_ENGINE + '.SessionStore')();"
        "store[SESSION_KEY] = str(user.pk); store[BACKEND_SESSION_KEY] = 'accounts.backends.ModelBackend';"
        "store[HASH_SESSION_KEY] = user.get_session_auth_hash(); store.create();"
        f"open({str(path)!r}, 'w').write(json.dumps([[{{'name': 'sessionid', 'value': store.session_key, 'domain': '127.0.0.1', 'path': '/'}}]]))"
    )
    load.manage(args, "shell", "-c", code)
    return str(path)


def setup_database(args) -> dict:
    import psycopg

    with psycopg.connect(args.primary.url("postgres"), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{args.database}"')
        # PgBouncer refuses the `options` startup parameter that otherwise turns JIT off.
        connection.execute(f'ALTER DATABASE "{args.database}" SET jit = off')
        settings = dict(connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('fsync','synchronous_commit','full_page_writes','wal_level','max_connections','shared_buffers')").fetchall())
        version = connection.execute("SHOW server_version").fetchone()[0]
    load.manage(args, "migrate", "--noinput")
    bank = load.manage(args, "load_bank").strip()
    seeded = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load" / "accounts.py"), "--count", str(args.learners),
         "--sessions", str(args.workdir / "sessions.json"), "--signed-in-from", "0"],
        cwd=ROOT, env=load.app_env(args), capture_output=True, text=True, timeout=300)
    if seeded.returncode:
        raise SystemExit(f"seeding accounts failed:\n{seeded.stderr}")
    staff = staff_sessions(args)
    stats = load.manage(args, "refresh_item_statistics").strip()
    return {"postgres": {"version": version, **settings}, "bank": bank, "accounts": seeded.stdout.strip(),
            "staff_sessions": staff, "item_statistics": stats}


# ---------------------------------------------------------------- the run


def phase_of(start: float, stop_at: float, start_at: float) -> str:
    return "before" if start < stop_at else "during" if start < start_at else "after"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--database", default="certprep_scale_out")
    parser.add_argument("--setting", default="sync:2", help="gunicorn setting of each of the two servers")
    parser.add_argument("--pool-size", type=int, default=8, help="PgBouncer's default_pool_size (server connections)")
    parser.add_argument("--think", default="1,5", help="think time range before each request (s), as bench/load")
    parser.add_argument("--spawn-rate", type=float, default=20)
    parser.add_argument("--measure", type=float, default=150, help="seconds measured; the replica is down for the middle third")
    parser.add_argument("--statistics-users", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    args = parser.parse_args()
    args.think = tuple(float(v) for v in args.think.split(","))
    made_workdir = args.workdir is None
    args.workdir = args.workdir or Path(tempfile.mkdtemp(prefix="certprep-scale-out-"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # PgBouncer and PostgreSQL run as postgres and write here
        owner = pwd.getpwnam("postgres")
        os.chown(args.workdir, owner.pw_uid, owner.pw_gid)
    # What load.run_locust and load.Server read of args.
    args.ramp_cap, args.floor_users, args.spike_window, args.accounts = 120, 0, 5, args.learners
    if not (ROOT / "staticfiles" / "staticfiles.json").exists():
        raise SystemExit("staticfiles/staticfiles.json is missing: run collectstatic first (make bench-scale-out does)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.time()
    results = {
        "command": "make bench-scale-out" if os.environ.get("MAKELEVEL") else " ".join([".venv/bin/python", "bench/scale_out/run.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": load.machine(), "code": code_version(),
        "uptime_start": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        "learners": args.learners, "setting": args.setting, "think": args.think, "database": args.database,
        "statistics_users": args.statistics_users,
    }
    primary = replica = None
    try:
        print("primary cluster ...", flush=True)
        primary = Primary()
        _cleanup.append(primary)
        primary.create()
        primary.start()
        args.primary = primary
        args.database_url = primary.url(args.database).replace("postgresql://", "postgres://")
        results["setup"] = setup_database(args)
        print(f"  {results['setup']['bank']}\n  {results['setup']['accounts']}", flush=True)
        print("streaming replica (pg_basebackup -R) ...", flush=True)
        replica = Replica(primary, primary.root)
        results["replica"] = {"in_recovery": scalar(replica.url(args.database), "SELECT pg_is_in_recovery()")}
        print("pgbouncer and two gunicorn servers behind nginx ...", flush=True)
        bouncer = PgBouncer(primary.root, primary, args.database, args.pool_size)
        results["pgbouncer"] = {"version": bouncer.version, **bouncer.settings}
        workers = int(args.setting.split(":")[1].split("x")[0])
        threads = int((args.setting.split("x") + ["1"])[1]) if "x" in args.setting else 1
        env = load.app_env(args, DATABASE_URL=bouncer.url(args.database), DATABASE_PGBOUNCER=1,
                           DATABASE_REPLICA_URL=replica.url(args.database),
                           DATABASE_POOL_MIN=min(2, threads), DATABASE_POOL_MAX=threads + 1)
        results["app_env"] = {key: env[key] for key in ("DATABASE_URL", "DATABASE_PGBOUNCER", "DATABASE_REPLICA_URL",
                                                        "DATABASE_POOL_MIN", "DATABASE_POOL_MAX")}
        servers = [load.Server(args, args.setting, env=env, database=args.database) for _ in range(2)]
        nginx = Nginx(primary.root, [server.port for server in servers])
        results["servers"] = [server.command for server in servers]
        front = Front(nginx, servers[0], f"2 × {args.setting} behind nginx", args.database)
        timeline: dict = {}
        replica_xacts: dict = {}

        def replica_count(label: str) -> None:
            try:
                replica_xacts[label] = scalar(replica.url(args.database),
                                              "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                                              [args.database])
            except Exception as error:
                replica_xacts[label] = f"unreachable ({type(error).__name__})"

        def stop_and_start(_server):
            def work():
                ready = time.time()
                timeline["ready"] = ready
                replica_count("at start")
                time.sleep(max(0.0, ready + args.measure / 3 - time.time()))
                replica_count("before the stop")
                timeline["stop_requested"] = time.time()
                replica.stop()
                timeline["stopped"] = time.time()
                time.sleep(max(0.0, ready + 2 * args.measure / 3 - time.time()))
                timeline["start_requested"] = time.time()
                replica.start()
                timeline["started"] = time.time()
                replica_count("after the restart")
                timeline["pools_mid"] = bouncer.show("POOLS")
            thread = threading.Thread(target=work, daemon=True)
            thread.start()
            thread.wait = lambda timeout=None: thread.join(timeout)
            return thread

        print(f"{args.learners} learners and {args.statistics_users} statistics reader(s) through nginx for "
              f"{args.measure:g} s; the replica stops at {args.measure / 3:.0f} s and starts at {2 * args.measure / 3:.0f} s ...",
              flush=True)
        run = load.run_locust(
            args, front, name="scale-out", classes=["Learner", "StatisticsReader"],
            users=args.learners + args.statistics_users, spawn_rate=args.spawn_rate, measure=args.measure,
            during=stop_and_start,
            extra_env={"BENCH_STAFF_SESSIONS": results["setup"]["staff_sessions"],
                       "BENCH_STATISTICS_USERS": str(args.statistics_users)})
        replica_count("at the end")
        run["lost"] = load.lost_answers(args, run)
        requests = load.read_requests(Path(run["out"]) / "requests.csv")
        stats = {phase: {"ok": 0, "failed": 0, "ms": []} for phase in ("before", "during", "after")}
        for began, name, ms, ok, _status in requests:
            if name == STATS and began >= timeline["ready"]:
                phase = stats[phase_of(began, timeline["stop_requested"], timeline["started"])]
                phase["ok" if ok else "failed"] += 1
                phase["ms"].append(ms)
        for phase in stats.values():
            times = sorted(phase.pop("ms"))
            phase["p50"], phase["p95"] = load.percentile(times, 50), load.percentile(times, 95)
        run["statistics_phases"] = stats
        run["replica_transactions"] = replica_xacts
        run["timeline"] = {key: (round(value - timeline["ready"], 1) if isinstance(value, float) else value)
                           for key, value in timeline.items()}
        run["pgbouncer_stats"] = bouncer.show("STATS")
        run["pgbouncer_pools_end"] = bouncer.show("POOLS")
        run["lag_bytes_end"] = scalar(primary.url(args.database),
                                      "SELECT COALESCE(MAX(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)), -1) FROM pg_stat_replication")
        run["per_server_errors"] = {server.port: Path(server.log.with_suffix(".stderr")).read_text().count("Traceback")
                                    for server in servers}
        results["run"] = run
        print(f"  failures {run['failures_total']}, lost {run['lost']['lost']} of {run['lost']['confirmed_saves']} confirmed; "
              f"statistics pages {stats}", flush=True)
    finally:
        load.stop_everything()
        if replica is not None:
            replica.remove()
        if primary is not None:
            primary.remove()
        if made_workdir:
            shutil.rmtree(args.workdir, ignore_errors=True)
    results["elapsed_s"] = round(time.time() - started)
    results["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    write_results(args.results, args.doc, "scale_out", results, report(results))


def fmt(value, digits=0) -> str:
    return "–" if value != value else f"{value:,.{digits}f}"


def report(results: dict) -> str:
    run = results["run"]
    lost = run["lost"]
    lines = [
        f"Measured {results['date']} on {results['machine']['nproc']} cores ({results['machine']['cpu_model']}), commit "
        f"{results['code']}, with `{results['command']}` ({results['elapsed_s']} s in all). The machine was shared: "
        f"`uptime` before: {results['uptime_start'].split('load average:')[-1].strip()}, after: "
        f"{results['uptime_end'].split('load average:')[-1].strip()} (load averages), so the latencies below are noisy; "
        f"the errors, the lost answers and the fallback are the figures to read.",
        "",
        f"Set-up: a PostgreSQL {results['setup']['postgres']['version']} primary of the run's own (fsync "
        f"{results['setup']['postgres']['fsync']}, synchronous_commit {results['setup']['postgres']['synchronous_commit']}), "
        f"a streaming replica from `pg_basebackup -R -X stream` (in recovery: {results['replica']['in_recovery']}), "
        f"{results['pgbouncer']['version']} with `pool_mode = transaction`, `default_pool_size = "
        f"{results['pgbouncer']['default_pool_size']}` in front of the primary, two gunicorn servers `{results['setting']}` "
        f"with `DATABASE_PGBOUNCER=1`, `DATABASE_URL` → PgBouncer, `DATABASE_REPLICA_URL` → the replica directly, "
        f"`DATABASE_POOL_MAX={results['app_env']['DATABASE_POOL_MAX']}`, and nginx round-robin over both (every request, "
        f"so one learner's requests alternate between the servers). The database has `ALTER DATABASE … SET jit = off`.",
        "",
        f"**{results['learners']} learners** (think {results['think'][0]:g}–{results['think'][1]:g} s, bench/load's Learner) "
        f"and {results['statistics_users']} staff member(s) reloading the admin's question "
        f"list (its item statistics read the replica) for {run['measure_s']:g} s: "
        f"**{run['failures_total']} errors** in {run['all_requests']:,} requests; **{lost['lost']} lost answers** of "
        f"{lost['confirmed_saves']:,} confirmed saves ({lost['slots_checked']:,} slots checked on the primary); Django "
        f"tracebacks in the servers' logs: {sum(run['per_server_errors'].values())}.",
        "",
        "| endpoint | requests | req/s | p50 ms | p95 ms | failures |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, e in run["endpoints"].items():
        lines.append(f"| {name} | {e['count']:,} | {e['rps']:.1f} | {fmt(e['p50'])} | {fmt(e['p95'])} | {e['failures']} |")
    t = run["timeline"]
    lines += [
        "",
        f"**The replica stopped mid-run**: `pg_ctl stop -m fast` at {t['stop_requested']:g} s into the window "
        f"(down at {t['stopped']:g} s), started again at {t['start_requested']:g} s (accepting at {t['started']:g} s). "
        f"The statistics page, by when it was requested:",
        "",
        "| replica | pages served | failed | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    labels = {"before": "up (before the stop)", "during": "stopped (statistics read the primary)",
              "after": "started again (back on the replica within 30 s)"}
    for phase, p in run["statistics_phases"].items():
        lines.append(f"| {labels[phase]} | {p['ok']} | {p['failed']} | {fmt(p['p50'])} | {fmt(p['p95'])} |")
    x = run["replica_transactions"]
    lines += [
        "",
        "Transactions the replica served (pg_stat_database on the replica): "
        + ", ".join(f"{label}: {value}" for label, value in x.items())
        + f". Replication lag at the end: {run['lag_bytes_end']} bytes.",
    ]
    stats = next((row for row in run["pgbouncer_stats"] if row.get("database") == results["database"]), None)
    pools = [row for row in run["pgbouncer_pools_end"] if row.get("database") == results["database"]]
    if stats:
        lines += ["", f"PgBouncer over the run: {int(stats.get('total_xact_count', 0)):,} transactions and "
                  f"{int(stats.get('total_query_count', 0)):,} statements on at most {results['pgbouncer']['default_pool_size']} "
                  f"server connections"
                  + (f"; at the end {pools[0].get('cl_active', '?')} client connections were open against "
                     f"{int(pools[0].get('sv_active', 0)) + int(pools[0].get('sv_idle', 0))} server connections" if pools else "")
                  + "."]
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
