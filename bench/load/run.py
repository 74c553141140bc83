"""Load benchmark: learners taking mocks against the image's server (deploy/serve: nginx in front of
gunicorn, as the Dockerfile's CMD runs it) and PostgreSQL on loopback.

    .venv/bin/python bench/load/run.py            (what `make bench` runs)

1. A dedicated database (certprep_bench, dropped and created again), migrated, the
   NCA-GENM bank loaded with `manage.py load_bank`, learner accounts seeded.
2. Capacity sweep: for each gunicorn setting, the floor (/bench/hello) and then answer
   saves, each with CAPACITY users and no think time: throughput at saturation, latency,
   and CPU per request of the server's workers (gunicorn's and nginx's) and of this database's
   PostgreSQL backends. The write floor (bench/floor) runs on the same server.
3. Learners: the mock journey (bench/load/locustfile.py) with the floor alongside, at each
   LEARNERS level, under the 2-worker baseline and under the best setting of the sweep;
   then every answer the server confirmed is looked up in the database.
4. When a target is missed (or with --profile): answer saves under cProfile
   (bench/load/profiled_wsgi.py, SQL counted) and under py-spy.
Writes bench/results/load.json and load.md, and puts load.md between the markers
<!-- bench:load:begin --> / <!-- bench:load:end --> in docs/BENCHMARKS.md.
Every server started here is stopped on the way out, failure or not.
"""
import argparse
import csv
import json
import os
import platform
import pstats
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared report helpers
from report import code_version, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent
HZ = os.sysconf("SC_CLK_TCK")
SAVE = "answer save"
FLOOR = "floor hello"
TARGETS = {"p95_save_ms_at_50": 50.0, "save_over_floor": 0.5}

_servers: list[subprocess.Popen] = []


# ---------------------------------------------------------------- machine and CPU


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
    versions = {}
    for package in ("django", "gunicorn", "locust", "psycopg"):
        try:
            from importlib.metadata import version

            versions[package] = version(package)
        except Exception:
            versions[package] = "?"
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "cpu_model": model[1].strip() if model else "unknown",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
    }


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / HZ


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all processes, all cores)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / HZ


def nginx_version() -> str:
    done = subprocess.run([shutil.which("nginx") or "/usr/sbin/nginx", "-v"], capture_output=True, text=True)
    return done.stderr.strip().rpartition("/")[2] or "?"


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def backend_pids(database_url: str, database: str) -> list[int]:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
            [database],
        ).fetchall()
    return [pid for (pid,) in rows]


class CpuMeter:
    """CPU seconds spent by gunicorn's workers, this database's backends, and everything else."""

    def __init__(self, server: "Server", database_url: str, database: str):
        self.server, self.database_url, self.database = server, database_url, database

    def read(self) -> dict:
        workers = self.server.serving_pids()
        backends = backend_pids(self.database_url, self.database)
        return {
            "time": time.time(),
            "workers": {pid: process_cpu(pid) for pid in workers},
            "backends": {pid: process_cpu(pid) for pid in backends},
            "machine": machine_busy(),
        }

    @staticmethod
    def spent(before: dict, after: dict, client_cpu: float) -> dict:
        def delta(kind):
            return sum(after[kind][pid] - before[kind].get(pid, 0.0) for pid in after[kind])

        workers, backends = delta("workers"), delta("backends")
        total = after["machine"] - before["machine"]
        return {
            "seconds": after["time"] - before["time"],
            "workers": workers,
            "backends": backends,
            "client": client_cpu,
            "machine": total,
            "others": max(0.0, total - workers - backends - client_cpu),
        }


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def app_env(args, **extra) -> dict:
    env = dict(os.environ)
    env.update({
        "DATABASE_URL": args.database_url,
        "SECRET_KEY": "bench-only-certprep-key-padding-0123456789abcdefghijklmnop",
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "BENCHMARK_ENDPOINTS": "1",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    })
    env.update({key: str(value) for key, value in extra.items()})
    return env


def manage(args, *command: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *command], cwd=ROOT, env=app_env(args), capture_output=True, text=True, timeout=600
    )
    if result.returncode:
        raise SystemExit(f"manage.py {' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


class Server:
    """The image's server (deploy/serve: nginx in front of gunicorn, exactly as the Dockerfile's
    CMD runs it) on loopback with one gunicorn setting ("sync:2", "gthread:2x4"); stopped by stop()."""

    def __init__(self, args, setting: str, *, app: str = "config.wsgi:application", extra_env: dict | None = None,
                 env: dict | None = None, database: str | None = None):
        self.setting = setting
        kind, _, size = setting.partition(":")
        workers, _, threads = size.partition("x")
        self.workers, self.threads = int(workers), int(threads or 1)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = args.workdir / f"gunicorn-{setting.replace(':', '-')}-{self.port}.log"
        # deploy/serve's own options are its environment; the rest of gunicorn's through
        # GUNICORN_CMD_ARGS, which gunicorn reads itself.
        gunicorn_args = [
            "--worker-class", kind, "--timeout", "60", "--graceful-timeout", "15", "--log-level", "warning",
            "--error-logfile", str(self.log),
            # gthread keeps connections alive 2 s by default: nginx reopens them to gunicorn as
            # it needs (clients' connections are nginx's: keepalive_timeout 15 s).
            "--keep-alive", "75",
        ]
        serve_env = {
            "SERVE_PORT": self.port, "SERVE_APP_PORT": free_port(), "SERVE_WSGI_APP": app,
            "SERVE_RUN_DIR": args.workdir / f"serve-{self.port}",
            "WEB_CONCURRENCY": self.workers, "WEB_THREADS": self.threads,
            "GUNICORN_CMD_ARGS": " ".join(gunicorn_args),
        }
        command = [str(ROOT / "deploy" / "serve")]
        self.command = (f"deploy/serve (nginx {nginx_version()}) with WEB_CONCURRENCY={self.workers} WEB_THREADS={self.threads} "
                        f"GUNICORN_CMD_ARGS='{' '.join(gunicorn_args)}' SERVE_WSGI_APP={app}").replace(str(args.workdir) + "/", "")
        # Enough pooled connections for every thread, and no more.
        # The database whose backends this server's CPU meter reads.
        self.database = database or database_name(args.database_url)
        if env is None:
            env = app_env(args, DATABASE_POOL_MIN=min(2, self.threads), DATABASE_POOL_MAX=self.threads + 1, **(extra_env or {}))
        env = {**env, **{key: str(value) for key, value in serve_env.items()},
               "PATH": f"{VENV_BIN}:{env.get('PATH', os.defpath)}:/usr/sbin"}
        # Django logs a server error with its traceback to stderr, nginx its access log to
        # stdout: both next to gunicorn's log.
        with open(self.log.with_suffix(".stderr"), "w") as stderr:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True,
                                            stdout=stderr, stderr=subprocess.STDOUT)
        _servers.append(self.process)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"deploy/serve {setting} exited at start; see {self.log} and {self.log.with_suffix('.stderr')}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                    if answer.status == 200 and len(self.gunicorn_workers()) >= self.workers:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"deploy/serve {setting} did not answer /healthz within 60 s; see {self.log}")
            time.sleep(0.3)
        # Warm every worker (imports, URLconf, pool) so the first measured requests are not cold.
        for _ in range(self.workers * self.threads * 4):
            urllib.request.urlopen(f"{self.url}/bench/hello", timeout=5).read()

    def _master(self, name: str) -> int | None:
        for pid in children(self.process.pid):
            try:
                if name in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    return pid
            except OSError:
                continue
        return None

    def gunicorn_workers(self) -> list[int]:
        master = self._master("gunicorn")
        return children(master) if master else []

    def serving_pids(self) -> list[int]:
        """What serves a request: gunicorn's workers and nginx's (the masters only supervise)."""
        nginx = self._master("nginx")
        return self.gunicorn_workers() + (children(nginx) if nginx else [])

    def stop(self) -> None:
        stop_process(self.process)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    if process in _servers:
        _servers.remove(process)


def stop_everything(*_):
    for process in list(_servers):
        stop_process(process)


# ---------------------------------------------------------------- database


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[1].split("?")[0]


def create_database(args) -> None:
    import psycopg

    name = database_name(args.database_url)
    admin_url = args.database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
        settings = dict(connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('fsync','synchronous_commit','full_page_writes','wal_sync_method','shared_buffers','max_connections')"
        ).fetchall())
        version = connection.execute("SHOW server_version").fetchone()[0]
    args.postgres = {"version": version, **settings}


def floor_env(args) -> dict:
    """The write floor's environment (bench/floor): its own settings module and database."""
    return dict(os.environ, PYTHONPATH=str(ROOT / "bench" / "floor"), DJANGO_SETTINGS_MODULE="floorsite.settings",
                FLOOR_DATABASE_URL=args.floor_database_url,
                SECRET_KEY="bench-only-floor-key-padding-0123456789abcdefghijklmnop")


def setup_floor(args) -> str:
    import psycopg

    name = database_name(args.floor_database_url)
    admin_url = args.floor_database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    for command in ([str(VENV_BIN / "django-admin"), "migrate", "--noinput", "-v0"],
                    [sys.executable, str(ROOT / "bench" / "floor" / "seed.py"), "--count", str(args.capacity_users),
                     "--out", str(args.workdir / "floor-sessions.json")]):
        done = subprocess.run(command, cwd=ROOT, env=floor_env(args), capture_output=True, text=True, timeout=300)
        if done.returncode:
            raise SystemExit(f"write floor setup ({command[1]}) failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def setup(args) -> dict:
    started = time.perf_counter()
    floor = setup_floor(args)
    create_database(args)
    manage(args, "migrate", "--noinput")
    bank = manage(args, "load_bank").strip()
    seeded = subprocess.run(
        [sys.executable, str(HERE / "accounts.py"), "--count", str(args.accounts),
         "--sessions", str(args.workdir / "sessions.json"),
         "--signed-in-from", str(args.spike_offset if args.log_in else 0)],
        cwd=ROOT, env=app_env(args), capture_output=True, text=True, timeout=300,
    )
    if seeded.returncode:
        raise SystemExit(f"seeding accounts failed:\n{seeded.stderr}")
    return {"seconds": round(time.perf_counter() - started, 1), "bank": bank, "accounts": seeded.stdout.strip(), "floor": floor}


# ---------------------------------------------------------------- locust runs


def run_locust(args, server: Server, *, name: str, classes: list[str], users: int, spawn_rate: float,
               measure: float, offset: int = 0, extra_env: dict | None = None, during=None,
               think: tuple[float, float] | None = None) -> dict:
    out = args.workdir / name
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    cap = int(args.ramp_cap + measure + 15)
    command = [
        str(VENV_BIN / "locust"), "-f", str(HERE / "locustfile.py"), "--headless", "--only-summary",
        "-u", str(users), "-r", str(spawn_rate), "--run-time", f"{cap}s", "--stop-timeout", "0",
        "--host", server.url, "--loglevel", "WARNING", *classes,
    ]
    env = dict(os.environ, BENCH_OUT=str(out), BENCH_FLOOR_SESSIONS=str(args.workdir / "floor-sessions.json"), BENCH_SESSION_CACHE=str(args.workdir / "sessions.json"),
               BENCH_EXPECTED_USERS=str(users), BENCH_MEASURE_SECONDS=str(measure),
               BENCH_ACCOUNT_OFFSET=str(offset), BENCH_ACCOUNT_COUNT=str(args.accounts - offset),
               BENCH_FLOOR_USERS=str(args.floor_users), BENCH_THINK_MIN=str((think or args.think)[0]), BENCH_THINK_MAX=str((think or args.think)[1]),
               BENCH_SPIKE_WINDOW=str(args.spike_window),
               **(extra_env or {}))
    meter = CpuMeter(server, args.database_url, server.database)
    client_before = os.times()
    with open(out / "locust.log", "w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _servers.append(process)
        at_start = None
        side = None
        deadline = time.monotonic() + cap + 60
        while process.poll() is None:
            if at_start is None and (out / "ready-now").exists():
                at_start = meter.read()
                client_at_start = process_cpu(process.pid)
                if during:
                    side = during(server)
            if time.monotonic() > deadline:
                stop_process(process)
                raise SystemExit(f"locust run {name} overran {cap + 60} s; see {out / 'locust.log'}")
            time.sleep(0.2)
        client_end = sum(os.times()[2:4]) - sum(client_before[2:4])
        _servers.remove(process)
    at_end = meter.read()
    if at_start is None:
        raise SystemExit(f"locust run {name}: the users never all became ready; see {out / 'locust.log'}")
    if side is not None:
        side.wait(timeout=120)
    ready = json.loads((out / "ready.json").read_text())
    requests = read_requests(out / "requests.csv")
    window = (ready["ready_at"], ready["ready_at"] + measure)
    # Locust's own CPU in the window: its total minus what it had spent by the window's start.
    cpu = CpuMeter.spent(at_start, at_end, client_end - client_at_start)
    return {
        "name": name,
        "command": "BENCH_... " + " ".join(shlex.quote(part) for part in command[1:]).replace(str(ROOT) + "/", ""),
        "server": server.setting,
        "users": users,
        "measure_s": measure,
        "ramp_s": round(ready["ready_at"] - min((r[0] for r in requests), default=ready["ready_at"]), 1),
        "window": window,
        "endpoints": summarize(requests, window),
        "logins_ms": (lambda times: {"p50": percentile(times, 50), "p95": percentile(times, 95)} if times else None)(
            sorted(r[2] for r in requests if r[1] == "login")),
        "all_requests": len(requests),
        "failures_total": sum(1 for r in requests if not r[3]),
        "failures_by_endpoint": dict(Counter(r[1] for r in requests if not r[3])),
        "failure_statuses": dict(Counter(str(r[4]) for r in requests if not r[3])),
        "cpu": cpu,
        "out": str(out),
    }


def read_requests(path: Path) -> list[tuple]:
    with open(path, newline="") as source:
        reader = csv.reader(source)
        next(reader)
        return [(float(start), name, float(ms), ok == "1", int(status)) for start, name, ms, ok, status in reader]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    if not values:
        return float("nan")
    rank = max(1, -(-len(values) * q // 100))
    return values[int(rank) - 1]


def summarize(requests: list[tuple], window: tuple[float, float]) -> dict:
    start, end = window
    by_name = defaultdict(list)
    failures = Counter()
    for began, name, ms, ok, _ in requests:
        if start <= began < end:
            by_name[name].append(ms)
            failures[name] += not ok
    seconds = end - start
    return {
        name: {
            "count": len(times),
            "rps": len(times) / seconds,
            "p50": percentile(sorted(times), 50),
            "p95": percentile(sorted(times), 95),
            "p99": percentile(sorted(times), 99),
            "max": max(times),
            "failures": failures[name],
        }
        for name, times in sorted(by_name.items())
    }


def lost_answers(args, run: dict) -> dict:
    result = subprocess.run(
        [sys.executable, str(HERE / "lost_answers.py"), str(Path(run["out"]) / "saves.csv")],
        cwd=ROOT, env=app_env(args), capture_output=True, text=True, timeout=300,
    )
    if result.returncode:
        raise SystemExit(f"lost-answer check failed:\n{result.stderr}")
    return json.loads(result.stdout)


# ---------------------------------------------------------------- phases


WRITE_FLOOR = "write floor"
PAGE = "question page"
PARTIAL = "question partial"


def capacity(args, setting: str) -> dict:
    """One gunicorn setting at saturation: the write floor on its own server, then certprep's
    hello, answer save, question page and its htmx partial, each flat out in turn."""
    floor = Server(args, setting, app="floorsite.wsgi:application", env=floor_env(args),
                   database=database_name(args.floor_database_url))
    server = None
    try:
        server = Server(args, setting)

        def write_floor(turn):
            return run_locust(args, floor, name=f"capacity-{setting}-write-floor-{turn}", classes=["WriteFloorCapacity"],
                              users=args.capacity_users, spawn_rate=args.capacity_users, measure=args.measure_capacity)

        # The write floor before and after certprep's phases: on a shared machine the load of
        # others drifts, and the mean of the two is what certprep's phases are divided by.
        writes = [write_floor(1)]
        phases = {}
        for label, cls in (("hello", "HelloCapacity"), ("save", "SaveCapacity"), ("page", "PageCapacity"),
                           ("partial", "PartialCapacity")):
            if label in ("page", "partial") and args.no_pages:
                continue
            phases[label] = run_locust(args, server, name=f"capacity-{setting}-{label}", classes=[cls],
                                       users=args.capacity_users, spawn_rate=args.capacity_users, measure=args.measure_capacity,
                                       offset=0 if label == "hello" else args.capacity_offset)
        writes.append(write_floor(2))
        phases["save"]["lost"] = lost_answers(args, phases["save"])
    finally:
        floor.stop()
        if server is not None:
            server.stop()
    write = merge_phases(writes)
    floor_rps = write["endpoints"][WRITE_FLOOR]["rps"]
    endpoint = {"save": SAVE, "page": PAGE, "partial": PARTIAL}

    def cpu_per_request(phase, name):
        return (phase["cpu"]["workers"] + phase["cpu"]["backends"]) / max(1, phase["endpoints"][name]["count"])

    return {"setting": setting, "command": server.command, "floor_command": floor.command, "write": write, **phases,
            "write_runs": [w["endpoints"][WRITE_FLOOR]["rps"] for w in writes],
            "ratio": phases["save"]["endpoints"][SAVE]["rps"] / phases["hello"]["endpoints"][FLOOR]["rps"],
            "over_write_floor": {label: phases[label]["endpoints"][endpoint[label]]["rps"] / floor_rps
                                 for label in endpoint if label in phases},
            # What the ratio would be if CPU were all that limits both (it is, at saturation on
            # two cores): the floor's CPU per request over this one's. Steady under others' load.
            "cpu_over_write_floor": {label: cpu_per_request(write, WRITE_FLOOR) / cpu_per_request(phases[label], endpoint[label])
                                     for label in endpoint if label in phases}}


def merge_phases(runs: list[dict]) -> dict:
    """Two runs of one phase as one: requests and CPU summed, throughput over both windows."""
    merged = dict(runs[0])
    merged["cpu"] = {key: sum(run["cpu"][key] for run in runs) for key in runs[0]["cpu"]}
    merged["failures_total"] = sum(run["failures_total"] for run in runs)
    endpoints = {}
    for name in runs[0]["endpoints"]:
        parts = [run["endpoints"][name] for run in runs if name in run["endpoints"]]
        count = sum(part["count"] for part in parts)
        endpoints[name] = {**parts[0], "count": count, "rps": sum(part["rps"] for part in parts) / len(parts),
                           "p50": max(part["p50"] for part in parts), "p95": max(part["p95"] for part in parts)}
    merged["endpoints"] = endpoints
    return merged


def spike(args, setting: str, offset: int) -> dict:
    """A cohort's start: SPIKE users already signed in press "Start mock" within the window and follow the redirect."""
    server = Server(args, setting)
    try:
        run = run_locust(args, server, name=f"spike-{setting}", classes=["SpikeStarter"], users=args.spike_users,
                         spawn_rate=args.spike_users, measure=args.spike_window + 120, offset=offset)
    finally:
        server.stop()
    run["starts"] = run["endpoints"].get("start mock", {})
    run["pages"] = run["endpoints"].get("question page", {})
    return run


def ramp(args, setting: str) -> list[dict]:
    """Learners at a realistic pace, more at each step, until the p95 answer save passes 100 ms."""
    server = Server(args, setting)
    steps = []
    try:
        for level in args.ramp:
            run = run_locust(args, server, name=f"ramp-{setting}-{level}", classes=["Learner"], users=level,
                             spawn_rate=args.spawn_rate, measure=args.measure_ramp, offset=args.ramp_offset,
                             think=args.ramp_think)
            run["learners"] = level
            run["lost"] = lost_answers(args, run)
            steps.append(run)
            save = run["endpoints"].get(SAVE, {})
            print(f"  ramp {level} learners: save p95 {save.get('p95', float('nan')):.0f} ms, failures {run['failures_total']}",
                  flush=True)
            if save.get("p95", float("inf")) >= args.ramp_p95 or run["failures_total"]:
                break
    finally:
        server.stop()
    return steps


def learners(args, setting: str) -> list[dict]:
    server = Server(args, setting)
    runs = []
    try:
        for level in args.learners:
            cache = args.workdir / "sessions.json"
            cached = set(json.loads(cache.read_text())) if cache.exists() else set()
            logins = sum(f"learner{index:04d}" not in cached for index in range(level))
            # Learners who must log in arrive at a pace the CPU can hash their passwords at.
            rate = args.login_rate if logins else args.spawn_rate
            run = run_locust(args, server, name=f"learners-{setting}-{level}", classes=["Learner", "Floor"],
                             users=level + args.floor_users, spawn_rate=rate, measure=args.measure_learners)
            run["learners"] = level
            run["logins"] = logins
            run["spawn_rate"] = rate
            run["lost"] = lost_answers(args, run)
            runs.append(run)
    finally:
        server.stop()
    return runs


def profile(args, setting: str) -> dict:
    """Answer saves under cProfile (SQL counted), then under py-spy, on the given setting."""
    profile_dir = args.workdir / "profile"
    profile_dir.mkdir(parents=True, exist_ok=True)
    for old in profile_dir.iterdir():
        old.unlink()
    server = Server(args, setting, app="bench.load.profiled_wsgi:application",
                    extra_env={"BENCH_PROFILE_DIR": profile_dir, "BENCH_PROFILE_EVERY": 100})
    try:
        run_locust(args, server, name=f"profile-{setting}-cprofile", classes=["SaveCapacity"],
                   users=args.capacity_users, spawn_rate=args.capacity_users, measure=args.measure_profile,
                   offset=args.capacity_offset)
    finally:
        server.stop()
    stats = None
    for dump in sorted(profile_dir.glob("profile-*.pstats")):
        stats = pstats.Stats(str(dump)) if stats is None else stats.add(str(dump))
    tally = {"requests": 0, "wall_s": 0.0, "queries": 0, "query_s": 0.0, "statements": Counter()}
    for dump in profile_dir.glob("queries-*.json"):
        part = json.loads(dump.read_text())
        for key in ("requests", "wall_s", "queries", "query_s"):
            tally[key] += part[key]
        tally["statements"].update(dict(part["statements"]))
    result = {"setting": setting, "cprofile": pstats_table(stats, tally["requests"]) if stats else [], "sql": {
        "requests": tally["requests"],
        "queries_per_request": tally["queries"] / max(1, tally["requests"]),
        "wall_ms_per_request": 1000 * tally["wall_s"] / max(1, tally["requests"]),
        "sql_ms_per_request": 1000 * tally["query_s"] / max(1, tally["requests"]),
        "statements": [(count / max(1, tally["requests"]), sql) for sql, count in tally["statements"].most_common(25)],
    }}
    pyspy = VENV_BIN / "py-spy"
    if pyspy.exists() and not args.no_py_spy:
        result["py_spy"] = py_spy_profile(args, setting, pyspy)
    return result


def pstats_table(stats: pstats.Stats, requests: int) -> list[dict]:
    """Functions by cumulative time per profiled request, Django and app frames kept."""
    rows = []
    for (filename, line, function), (calls, _, tottime, cumtime, _) in stats.stats.items():
        short = re.sub(r".*/site-packages/", "", filename).replace(str(ROOT) + "/", "")
        rows.append({"function": f"{short}:{line}({function})", "calls": calls / max(1, requests),
                     "tottime_ms": 1000 * tottime / max(1, requests), "cumtime_ms": 1000 * cumtime / max(1, requests)})
    return sorted(rows, key=lambda row: -row["cumtime_ms"])[:150]


def py_spy_profile(args, setting: str, pyspy: Path) -> dict:
    """py-spy on every worker while answer saves run flat out: where the wall-clock time goes."""
    raw_dir = args.workdir / "py-spy"
    raw_dir.mkdir(parents=True, exist_ok=True)
    spies = []

    def attach(server):
        for pid in server.gunicorn_workers():
            output = raw_dir / f"worker-{pid}.txt"
            spies.append(subprocess.Popen(
                [str(pyspy), "record", "--pid", str(pid), "--duration", str(int(args.measure_profile) - 2), "--rate", "250",
                 "--format", "raw", "--idle", "--nonblocking", "--output", str(output)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            ))
            _servers.append(spies[-1])

        class Waiter:
            @staticmethod
            def wait(timeout):
                for spy in spies:
                    try:
                        spy.wait(timeout=timeout)
                    except subprocess.TimeoutExpired:
                        stop_process(spy)
                    if spy in _servers:
                        _servers.remove(spy)

        return Waiter

    server = Server(args, setting)
    try:
        run_locust(args, server, name=f"profile-{setting}-pyspy", classes=["SaveCapacity"],
                   users=args.capacity_users, spawn_rate=args.capacity_users, measure=args.measure_profile,
                   offset=args.capacity_offset, during=attach)
    finally:
        server.stop()
    return collapse_stacks(sorted(raw_dir.glob("worker-*.txt")))


# What a request-handling sample was doing: the innermost frame that matches names it.
COMPONENTS = [
    ("pool: borrow a connection and check it (one empty-query round trip)", re.compile(r"psycopg_pool/")),
    ("session: SELECT django_session", re.compile(r"sessions/backends/db\.py|SessionBase\._get_session|SessionStore\.load")),
    ("auth: SELECT auth_user", re.compile(r"contrib/auth/__init__\.py:\d+\)$|^get_user \(django/contrib/auth")),
    ("owned_attempt: SELECT attempt FOR UPDATE", re.compile(r"owned_attempt \(exams/access\.py")),
    ("_slot: SELECT response + version + question, then picks", re.compile(r"_slot \(exams/room/views/question\.py")),
    ("record_answer: DELETE + INSERT picks, UPDATE answered_at", re.compile(r"record_answer \(exams/models\.py")),
    ("_navigator: 60 slots with COUNT(picks)", re.compile(r"_navigator \(exams/room/views/question\.py")),
    ("AnswerForm", re.compile(r"AnswerForm|django/forms/")),
    ("templates: render the two partials", re.compile(r"render_to_string|django/template/")),
    ("transaction: BEGIN / COMMIT", re.compile(r"django/db/transaction\.py|Atomic\.__(enter|exit)__")),
    ("saving: the one-statement save (exams/saving.py)", re.compile(r"\(exams/saving\.py")),
    ("question view: other statements (COUNT(*) of the slots for the form)", re.compile(r"^question \(exams/room/views/question\.py")),
    ("middleware (CSRF, CSP, axes, htmx, messages, security)", re.compile(r"django/middleware/|axes/|django_htmx/|whitenoise/|contrib/messages/")),
    ("Django request handling and response", re.compile(r"django/core/handlers/|django/http/")),
]


def collapse_stacks(files: list[Path]) -> dict:
    """Share of a worker's wall-clock samples per component, and waiting on PostgreSQL vs running Python."""
    components, app_lines = Counter(), Counter()
    total = handling = waiting = 0
    for file in files:
        for line in file.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            count, frames = int(count), stack.split(";")
            # The pool's own threads sleep in threading; a sync worker serves on its main thread.
            if frames[0].startswith("Thread._bootstrap") or not frames[0].startswith("<module> (gunicorn"):
                continue
            total += count
            if not any("handle_request (gunicorn" in frame for frame in frames):
                components["gunicorn: waiting for the next request"] += count
                continue
            handling += count
            if re.search(r"psycopg/(waiting|generators)|psycopg_c|PGconn|\bwait\b.*psycopg", frames[-1]):
                waiting += count
            name = next((label for frame in reversed(frames) for label, pattern in COMPONENTS if pattern.search(frame)),
                        "other")
            components[name] += count
            view = next((frame for frame in frames if frame.startswith("question (exams/room/views/question.py")), None)
            if view:
                app_lines[view] += count
    return {
        "samples": total,
        "handling_share": handling / max(1, total),
        "waiting_share_of_handling": waiting / max(1, handling),
        "components": [(name, count / max(1, total)) for name, count in components.most_common()],
        "view_lines": [(frame, count / max(1, handling)) for frame, count in app_lines.most_common(12)],
    }


# ---------------------------------------------------------------- report


def fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def endpoint_table(run: dict) -> list[str]:
    lines = ["| endpoint | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | failures |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    order = ["start mock", "question page", SAVE, "answer save + next", "review", "submit", "results", FLOOR]
    endpoints = run["endpoints"]
    for name in sorted(endpoints, key=lambda n: order.index(n) if n in order else 99):
        e = endpoints[name]
        lines.append(f"| {name} | {e['count']:,} | {fmt(e['rps'], 1)} | {fmt(e['p50'])} | {fmt(e['p95'])} | {fmt(e['p99'])} "
                     f"| {fmt(e['max'])} | {e['failures']} |")
    return lines


def cpu_line(run: dict) -> str:
    cpu = run["cpu"]
    requests = sum(e["count"] for e in run["endpoints"].values())
    return (f"CPU in the window ({fmt(cpu['seconds'])} s, {os.cpu_count()} cores = {fmt(cpu['seconds'] * os.cpu_count())} CPU-s available): "
            f"gunicorn and nginx workers {fmt(cpu['workers'], 1)} s ({fmt(1000 * cpu['workers'] / max(1, requests), 2)} ms/request), "
            f"PostgreSQL backends {fmt(cpu['backends'], 1)} s ({fmt(1000 * cpu['backends'] / max(1, requests), 2)} ms/request), "
            f"locust {fmt(cpu['client'], 1)} s, other processes on the machine {fmt(cpu['others'], 1)} s.")


def report(args, results: dict) -> str:
    m = results["machine"]
    pg = results["postgres"]
    lines = [
        f"Command: `{results['command']}` · certprep at `{results['code']}` · date {results['date']} · "
        f"machine: {m['nproc']} cores ({m['cpu_model']}), {m['memory_gib']} GiB, Linux {m['kernel']}, Python {m['python']}, "
        f"Django {m['versions']['django']}, gunicorn {m['versions']['gunicorn']}, locust {m['versions']['locust']}, "
        f"PostgreSQL {pg['version']} on the same machine (defaults: fsync={pg['fsync']}, synchronous_commit={pg['synchronous_commit']}, "
        f"full_page_writes={pg['full_page_writes']}, shared_buffers={int(pg['shared_buffers']) * 8 // 1024} MB). "
        f"Total time {fmt(results['elapsed_s'] / 60, 1)} min.",
        "",
        f"Load average at the start {results['loadavg_start']}, at the end {results['loadavg_end']}. "
        f"{results['shared_note']}",
        "",
        f"Setup (database `{database_name(args.database_url)}` created, migrated, `load_bank`, {args.accounts} accounts): "
        f"{results['setup']['seconds']} s. {results['setup']['bank']}",
        "",
        "### Targets",
        "",
        "| target | measured | result |",
        "|---|---|---|",
    ]
    for target in results["targets"]:
        lines.append(f"| {target['target']} | {target['measured']} | **{'pass' if target['passed'] else 'miss'}** |")
    lines += [
        "",
        "### Capacity sweep: the floors, answer saves and the question page at saturation",
        "",
        f"{args.capacity_users} users with no think time, one phase after another on each gunicorn setting: the *write "
        "floor* (bench/floor: a minimal Django project on its own gunicorn with the same setting and its own database — "
        "database session, user, CSRF, then BEGIN, lock the user's row, UPDATE it, COMMIT), `/bench/hello` on certprep "
        "(hello world behind certprep's middleware), answer saves (each user on its own mock, two answers alternating on "
        "its slot, so every save writes), then the question page whole (a reload) and as the htmx partial (a move). "
        f"{fmt(args.measure_capacity)} s measured per phase after every user was signed in and on its mock. CPU per request "
        "is read from /proc for the server's workers (gunicorn's and nginx's) and for the phase's database's PostgreSQL backends only, so it "
        "holds even on a shared machine; the throughput ratios are within one run, the write floor measured before and "
        "after certprep's phases (its req/s is the mean of the two). In brackets, the ratio by CPU per request (workers + "
        "PostgreSQL backends: the floor's over the endpoint's), which is what the throughput ratio comes to when the two "
        "cores are all that limit both, and which other processes' load does not move.",
        "",
        "| gunicorn | write floor req/s | hello req/s | save req/s | save p50 / p95 ms | **save ÷ write floor** | page req/s | **page ÷ write floor** | partial req/s | **partial ÷ write floor** | save ÷ hello | worker CPU ms per write floor / hello / save / page / partial | PostgreSQL CPU ms per write floor / save | failures | lost answers |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def per(phase, name, kind="workers"):
        if phase is None:
            return float("nan")
        return 1000 * phase["cpu"][kind] / max(1, phase["endpoints"].get(name, {"count": 0})["count"])

    for c in results["capacity"]:
        write, hello, save = c["write"]["endpoints"][WRITE_FLOOR], c["hello"]["endpoints"][FLOOR], c["save"]["endpoints"][SAVE]
        page = c.get("page", {}).get("endpoints", {}).get(PAGE, {"rps": float("nan")})
        partial = c.get("partial", {}).get("endpoints", {}).get(PARTIAL, {"rps": float("nan")})
        ratios, by_cpu = c["over_write_floor"], c["cpu_over_write_floor"]
        failures = sum(c[k]["failures_total"] for k in ("write", "hello", "save", "page", "partial") if k in c)
        lines.append(
            f"| `{c['setting']}` | {fmt(write['rps'])} | {fmt(hello['rps'])} | {fmt(save['rps'])} | {fmt(save['p50'], 1)} / {fmt(save['p95'], 1)} "
            f"| **{ratios['save']:.2f}** ({by_cpu['save']:.2f}) | {fmt(page['rps'])} | **{ratios.get('page', float('nan')):.2f}** "
            f"({by_cpu.get('page', float('nan')):.2f}) | {fmt(partial['rps'])} "
            f"| **{ratios.get('partial', float('nan')):.2f}** ({by_cpu.get('partial', float('nan')):.2f}) | {c['ratio']:.2f} "
            f"| {per(c['write'], WRITE_FLOOR):.2f} / {per(c['hello'], FLOOR):.2f} / {per(c['save'], SAVE):.2f} / "
            f"{per(c.get('page'), PAGE):.2f} / {per(c.get('partial'), PARTIAL):.2f} "
            f"| {per(c['write'], WRITE_FLOOR, 'backends'):.2f} / {per(c['save'], SAVE, 'backends'):.2f} "
            f"| {failures} | {c['save']['lost']['lost']} |"
        )
    lines += [
        "",
        f"Settings are `worker-class:workers[xthreads]`; every server, the write floor's too, was the image's: "
        f"`{results['capacity'][0]['command']}` with each setting's numbers (the write floor: "
        f"`{results['capacity'][0]['floor_command']}`). Best setting by answer-save throughput: "
        f"**`{results['best']}`**. Other processes on the machine used "
        + ", ".join(f"{fmt(c['save']['cpu']['others'], 1)} CPU-s" for c in results["capacity"])
        + " during the save phases (of "
        + fmt(args.measure_capacity * os.cpu_count()) + " available each).",
        "",
        "### Learners taking mocks, with the floor alongside",
        "",
        ("Each learner logs in (one POST per account for the whole benchmark: sessions are reused by later runs), "
         if args.log_in else "Each learner starts signed in (a session made by the seeding; `--log-in` makes them log in), ")
        + f"then loops over mocks: start, the question page, 60 × (answer save, then save + next), review, submit, "
        f"results. Think time {args.think[0]:g}–{args.think[1]:g} s (uniform) before every request: a fast learner who "
        f"answers a question every ~{args.think[0] + args.think[1]:g} s where the exam allows 60 s, so each simulated "
        f"learner offers the load of ~{60 / (args.think[0] + args.think[1]):.0f} real ones. Warm start: each learner's first "
        f"mock opens at a random slot, so learners are spread over the journey from the first minute. "
        f"{args.floor_users} floor users request `/bench/hello` at the same pace. Users arrive at {args.login_rate:g}/s "
        f"while some must log in (a login hashes the password with PBKDF2, 1,500,000 iterations: ~0.9 s of CPU), "
        f"else {args.spawn_rate:g}/s. Figures are for the {fmt(args.measure_learners)} s after every user was logged "
        "in and on a question; failures and lost answers count the whole run, ramp and logins included.",
        "",
    ]
    for run in results["learners"]:
        lost = run["lost"]
        lines += [
            f"#### {run['learners']} learners, gunicorn `{run['server']}`",
            "",
            *endpoint_table(run),
            "",
            f"Failures in the whole run: {run['failures_total']} of {run['all_requests']:,} requests"
            + (f" ({run['failures_by_endpoint']}, statuses {run['failure_statuses']})" if run["failures_total"] else "")
            + f". Answers confirmed to the client: {lost['confirmed_saves']:,} saves on {lost['slots_checked']:,} slots, "
            f"all looked up in the database: **{lost['lost']} lost**. Ramp {run['ramp_s']} s "
            f"({run['logins']} logins, users started at {run['spawn_rate']:g}/s)"
            + (f"; login p50 {fmt(run['logins_ms']['p50'])} ms, p95 {fmt(run['logins_ms']['p95'])} ms" if run.get("logins_ms") else "")
            + ".",
            "",
            cpu_line(run),
            "",
        ]
    if results.get("draw"):
        draw = results["draw"]
        lines += [
            "### \"Start mock\"'s draw, alone",
            "",
            f"`bench/load/draw.py`: {draw['draws']} first mocks of new learners drawn one after another in one process "
            f"(`services.attempt_start`, all the POST does besides session, user and redirect): median {fmt(draw['wall_ms_p50'], 1)} ms "
            f"wall (p95 {fmt(draw['wall_ms_p95'], 1)} ms), {fmt(draw['cpu_ms_p50'], 1)} ms of Python CPU at the median, "
            f"{fmt(draw['postgres_cpu_ms_mean'], 1)} ms of PostgreSQL CPU on average.",
            "",
        ]
    if results.get("pages"):
        lines += [
            "### What each page of a mock costs, in-process",
            "",
            "`bench/load/pages.py`: each page 60 times through `django.test.Client` with the whole middleware stack (no "
            "HTTP server), for one learner with a running mock and a finished one; CPU is the process's and its PostgreSQL "
            "backend's. Statement counts are asserted by `tests/exams/room/test_page_costs.py`.",
            "",
            "| page | statements | wall ms (median) | Python CPU ms | PostgreSQL CPU ms |",
            "|---|---:|---:|---:|---:|",
            *[f"| {name} | {page['statements']} | {fmt(page['wall_ms_p50'], 1)} | {fmt(page['cpu_ms'], 1)} | {fmt(page['postgres_cpu_ms'], 1)} |"
              for name, page in results["pages"].items()],
            "",
        ]
    if results.get("spikes"):
        lines += [
            "### A cohort's start spike",
            "",
            f"{args.spike_users} learners, already signed in (sessions made by the seeding), each press \"Start mock\" once at a "
            f"random moment (uniform) within {args.spike_window:g} s and follow the redirect to their first question; every "
            "press draws a new mock.",
            "",
            "| gunicorn | start mock POSTs | p50 ms | p95 ms | max ms | question page p95 ms | errors | worker CPU ms per start (with its page) | PostgreSQL CPU ms per start |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for run in results["spikes"]:
            starts, pages = run["starts"], run["pages"]
            count = max(1, starts.get("count", 0))
            lines.append(
                f"| `{run['server']}` | {starts.get('count', 0)} | {fmt(starts.get('p50', float('nan')))} | {fmt(starts.get('p95', float('nan')))} "
                f"| {fmt(starts.get('max', float('nan')))} | {fmt(pages.get('p95', float('nan')))} | {run['failures_total']} "
                f"| {1000 * run['cpu']['workers'] / count:.1f} | {1000 * run['cpu']['backends'] / count:.1f} |")
        lines.append("")
    if results.get("ramp"):
        lines += [
            f"### Capacity at a realistic pace: a ramp on `{args.baseline}`",
            "",
            f"Learners as above but with {args.ramp_think[0]:g}–{args.ramp_think[1]:g} s of think time before every request "
            f"(an answer every {2 * args.ramp_think[0]:g}–{2 * args.ramp_think[1]:g} s, each followed by its move), signed in "
            f"by the seeding; each level runs {fmt(args.measure_ramp)} s once every learner is on a question, and the ramp stops "
            f"at the first level whose p95 answer save reaches {args.ramp_p95:g} ms.",
            "",
            "| learners | answer saves/s | save p50 ms | save p95 ms | save + next p95 ms | question page p95 ms | start mock p95 ms | errors | lost | worker + PostgreSQL CPU of 2 cores |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for step in results["ramp"]:
            e = step["endpoints"]
            save = e.get(SAVE, {})
            busy = (step["cpu"]["workers"] + step["cpu"]["backends"]) / max(1.0, step["cpu"]["seconds"] * os.cpu_count())
            lines.append(
                f"| {step['learners']} | {fmt(save.get('rps', 0), 1)} | {fmt(save.get('p50', float('nan')))} | {fmt(save.get('p95', float('nan')))} "
                f"| {fmt(e.get('answer save + next', {}).get('p95', float('nan')))} | {fmt(e.get('question page', {}).get('p95', float('nan')))} "
                f"| {fmt(e.get('start mock', {}).get('p95', float('nan')))} | {step['failures_total']} | {step['lost']['lost']} | {busy:.0%} |")
        lines.append("")
    if results.get("profile"):
        lines += profile_section(results["profile"])
    return "\n".join(lines) + "\n"


def profile_section(profile: dict) -> list[str]:
    sql = profile["sql"]
    lines = [
        "### Where an answer save's time goes",
        "",
        f"Answer saves at saturation on gunicorn `{profile['setting']}`, each request under cProfile "
        f"(`bench/load/profiled_wsgi.py`, app code untouched; cProfile inflates Python time, so read shares, not totals): "
        f"{sql['requests']:,} requests, **{sql['queries_per_request']:.1f} SQL statements per save**, "
        f"{sql['wall_ms_per_request']:.1f} ms wall per save of which {sql['sql_ms_per_request']:.1f} ms waiting on SQL.",
        "",
        "Statements per save (literals elided):",
        "",
        "| per save | statement |",
        "|---:|---|",
    ]
    for per, statement in sql["statements"][:20]:
        lines.append(f"| {per:.2f} | `{statement[:150].replace('|', '¦')}` |")
    keep = re.compile(r"exams/|accounts/|config/|django/(template/(base|loader_tags|response)|shortcuts|db/backends/utils|forms/forms|contrib/sessions/backends/db|contrib/auth/(middleware|__init__)|core/handlers/base|middleware/csrf)|axes/|django_htmx|psycopg_pool/pool")
    rows = [row for row in profile["cprofile"] if keep.search(row["function"])][:28]
    lines += ["", "cProfile, cumulative ms per save (selected frames):", "", "| function | calls/save | cumulative ms | own ms |", "|---|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| `{row['function']}` | {row['calls']:.1f} | {row['cumtime_ms']:.2f} | {row['tottime_ms']:.2f} |")
    spy = profile.get("py_spy")
    if spy:
        lines += ["", f"py-spy on both workers of a normal (unprofiled) server, answer saves flat out "
                  f"({spy['samples']:,} samples, wall clock: waiting on PostgreSQL counts): the workers were handling a "
                  f"request {spy['handling_share']:.0%} of the time, and within that waited on a PostgreSQL round trip "
                  f"{spy['waiting_share_of_handling']:.0%} of the time.", "",
                  "| component (innermost match on the stack) | share of worker time |", "|---|---:|"]
        lines += [f"| {name} | {share:.0%} |" for name, share in spy["components"]]
        lines.append("")
    return lines


def targets(results: dict) -> list[dict]:
    rows = []
    by_level = defaultdict(list)
    for run in results["learners"]:
        by_level[run["learners"]].append(run)
    for level in sorted(by_level):
        runs = by_level[level]
        errors = sum(r["failures_total"] for r in runs)
        lost = sum(r["lost"]["lost"] for r in runs)
        if level >= 200:
            rows.append({"target": f"0 errors and 0 lost answers at {level} concurrent learners",
                         "measured": f"{errors} errors, {lost} lost ({', '.join(r['server'] for r in runs)})",
                         "passed": errors == 0 and lost == 0})
        if level == 50:
            p95 = {r["server"]: r["endpoints"].get(SAVE, {}).get("p95", float("nan")) for r in runs}
            rows.append({"target": "p95 answer save < 50 ms at 50 learners",
                         "measured": ", ".join(f"{fmt(v, 1)} ms (`{k}`)" for k, v in p95.items()),
                         "passed": any(v < TARGETS["p95_save_ms_at_50"] for v in p95.values())})
    if results.get("draw"):
        draw = results["draw"]
        rows.append({"target": "\"Start mock\"'s draw < 50 ms at the median (quiet machine) and ≲ 20 ms of CPU",
                     "measured": f"{fmt(draw['wall_ms_p50'], 1)} ms median, {fmt(draw['cpu_ms_p50'], 1)} ms CPU "
                                 f"(+ {fmt(draw['postgres_cpu_ms_mean'], 1)} ms PostgreSQL)",
                     "passed": draw["wall_ms_p50"] < 50 and draw["cpu_ms_p50"] <= 20})
    for run in results.get("spikes", []):
        starts = run["starts"]
        rows.append({"target": f"start spike ({run['users']} learners within the window, `{run['server']}`): 0 errors, p95 of the POST < 1 s",
                     "measured": f"{run['failures_total']} errors, p95 {fmt(starts.get('p95', float('nan')))} ms",
                     "passed": run["failures_total"] == 0 and starts.get("p95", float("inf")) < 1000})
    if results.get("ramp"):
        served = [step["learners"] for step in results["ramp"]
                  if step["endpoints"].get(SAVE, {}).get("p95", float("inf")) < 100 and not step["failures_total"]]
        rows.append({"target": "learners at a realistic pace served by `sync:2` with p95 save < 100 ms (ramp)",
                     "measured": f"{max(served) if served else 0} learners (levels tried: {', '.join(str(s['learners']) for s in results['ramp'])})",
                     "passed": bool(served)})
    for label, target in (("save", 0.5), ("page", 0.5), ("partial", 0.7)):
        ratios = {c["setting"]: c["over_write_floor"][label] for c in results["capacity"] if label in c["over_write_floor"]}
        if not ratios:
            continue
        what = {"save": "answer save", "page": "question page (whole GET)", "partial": "question page (htmx partial)"}[label]
        by_cpu = {c["setting"]: c["cpu_over_write_floor"][label] for c in results["capacity"] if label in c["cpu_over_write_floor"]}
        rows.append({"target": f"{what} ≥ {target} × the write floor's throughput",
                     "measured": ", ".join(f"{v:.2f} (`{k}`; by CPU per request {by_cpu[k]:.2f})" for k, v in ratios.items()),
                     "passed": max(ratios.values()) >= target})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/certprep_bench")
    parser.add_argument("--floor-database-url", default=None,
                        help="the write floor's database (default: the benchmark database's name + _floor)")
    parser.add_argument("--no-pages", action="store_true", help="skip the question page phases of the capacity sweep")
    parser.add_argument("--learners", default="50,200", help="concurrent learner levels (default 50,200)")
    parser.add_argument("--baseline", default="sync:2", help="gunicorn setting every level runs on (default sync:2)")
    parser.add_argument("--sweep", default="sync:2,sync:4,gthread:2x4,gthread:4x4",
                        help="gunicorn settings for the capacity sweep, worker-class:workers[xthreads]")
    parser.add_argument("--capacity-users", type=int, default=16)
    parser.add_argument("--floor-users", type=int, default=2)
    parser.add_argument("--think", default="1,5", help="think time range in seconds before each request (default 1,5)")
    parser.add_argument("--spawn-rate", type=float, default=20, help="users started per second when all have sessions")
    parser.add_argument("--login-rate", type=float, default=1.5,
                        help="users started per second while some must log in (a login costs ~1 s of CPU)")
    parser.add_argument("--measure-learners", type=float, default=60, help="seconds measured per learner level")
    parser.add_argument("--measure-capacity", type=float, default=15, help="seconds measured per capacity phase")
    parser.add_argument("--measure-profile", type=float, default=12)
    parser.add_argument("--ramp-cap", type=float, default=300, help="longest wait for all users to log in (s)")
    parser.add_argument("--profile", action="store_true", help="profile answer saves even when every target passes")
    parser.add_argument("--log-in", action="store_true",
                        help="learners and capacity users log in (PBKDF2: ~1 s of CPU each) instead of starting signed in")
    parser.add_argument("--spike-users", type=int, default=200, help="learners pressing Start mock in the spike")
    parser.add_argument("--spike-window", type=float, default=5, help="seconds the spike's presses are spread over")
    parser.add_argument("--no-spike", action="store_true")
    parser.add_argument("--ramp", default="100,200,400,800",
                        help="learner levels of the capacity ramp at a realistic pace, on the baseline setting")
    parser.add_argument("--ramp-think", default="10,20", help="think time of the ramp: a question every 20–40 s")
    parser.add_argument("--ramp-p95", type=float, default=100, help="the ramp stops once the p95 answer save reaches this (ms)")
    parser.add_argument("--measure-ramp", type=float, default=45, help="seconds measured per ramp level")
    parser.add_argument("--no-py-spy", action="store_true")
    parser.add_argument("--no-profile", action="store_true", help="never profile, even when a target is missed")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/certprep-bench-load"))
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    args = parser.parse_args()
    args.floor_database_url = args.floor_database_url or args.database_url.split("?")[0] + "_floor"
    args.learners = [int(level) for level in args.learners.split(",") if level]
    args.think = tuple(float(value) for value in args.think.split(","))
    args.sweep = [setting.strip() for setting in args.sweep.split(",")]
    # Capacity users use the accounts after the learners'.
    args.ramp = [int(level) for level in args.ramp.split(",") if level]
    args.ramp_think = tuple(float(value) for value in args.ramp_think.split(","))
    args.capacity_offset = max(args.learners, default=0)
    # Accounts signed in by the seeding (no login): two spikes' cohorts, then the ramp's learners.
    args.spike_offset = args.capacity_offset + args.capacity_users
    args.ramp_offset = args.spike_offset + 2 * args.spike_users
    args.accounts = args.ramp_offset + max(args.ramp, default=0)
    args.workdir.mkdir(parents=True, exist_ok=True)

    if not (ROOT / "staticfiles" / "staticfiles.json").exists():
        raise SystemExit("staticfiles/staticfiles.json is missing: run collectstatic first (make bench does)")
    signal.signal(signal.SIGTERM, lambda *_: (stop_everything(), sys.exit(143)))
    started = time.time()
    results = {
        "command": "make bench" if os.environ.get("MAKELEVEL") else " ".join([".venv/bin/python", "bench/load/run.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "code": code_version(),
        "loadavg_start": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }
    try:
        (args.workdir / "sessions.json").unlink(missing_ok=True)
        print("setting up the benchmark database ...", flush=True)
        results["setup"] = setup(args)
        results["postgres"] = args.postgres
        results["capacity"] = []
        for setting in args.sweep:
            print(f"capacity: {setting} ...", flush=True)
            results["capacity"].append(capacity(args, setting))
            c = results["capacity"][-1]
            print(f"  write floor {c['write']['endpoints'][WRITE_FLOOR]['rps']:.0f} req/s, hello {c['hello']['endpoints'][FLOOR]['rps']:.0f} req/s, "
                  f"save {c['save']['endpoints'][SAVE]['rps']:.0f} req/s; ÷ write floor: "
                  + ", ".join(f"{k} {v:.2f}" for k, v in c["over_write_floor"].items()), flush=True)
        results["best"] = max(results["capacity"], key=lambda c: c["save"]["endpoints"][SAVE]["rps"])["setting"]
        results["learners"] = []
        for setting in dict.fromkeys([args.baseline, results["best"]]):
            print(f"learners on {setting}: {args.learners} ...", flush=True)
            for run in learners(args, setting):
                results["learners"].append(run)
                save = run["endpoints"].get(SAVE, {})
                print(f"  {run['learners']} learners: save {save.get('rps', 0):.0f} req/s p95 {save.get('p95', 0):.0f} ms, "
                      f"failures {run['failures_total']}, lost {run['lost']['lost']}", flush=True)
        print("the draw, alone ...", flush=True)
        drawn = subprocess.run([sys.executable, str(HERE / "draw.py"), "--count", "40"], cwd=ROOT, env=app_env(args),
                               capture_output=True, text=True, timeout=600)
        if drawn.returncode:
            raise SystemExit(f"draw benchmark failed:\n{drawn.stderr}")
        results["draw"] = json.loads(drawn.stdout)
        print("the pages of a mock, in-process ...", flush=True)
        measured = subprocess.run([sys.executable, str(HERE / "pages.py")], cwd=ROOT,
                                  env=app_env(args, ALLOWED_HOSTS="testserver"), capture_output=True, text=True, timeout=600)
        if measured.returncode:
            raise SystemExit(f"page costs failed:\n{measured.stderr}")
        results["pages"] = json.loads(measured.stdout)
        results["spikes"] = []
        if not args.no_spike:
            for turn, setting in enumerate(dict.fromkeys([args.baseline, results["best"]])):
                print(f"start spike on {setting}: {args.spike_users} learners within {args.spike_window:g} s ...", flush=True)
                results["spikes"].append(spike(args, setting, args.spike_offset + turn * args.spike_users))
                run = results["spikes"][-1]
                print(f"  start mock p50 {run['starts'].get('p50', float('nan')):.0f} ms, p95 {run['starts'].get('p95', float('nan')):.0f} ms, "
                      f"failures {run['failures_total']}", flush=True)
        results["ramp"] = []
        if args.ramp:
            print(f"ramp on {args.baseline}: {args.ramp} ...", flush=True)
            results["ramp"] = ramp(args, args.baseline)
        results["targets"] = targets(results)
        if args.profile or (not args.no_profile and not all(t["passed"] for t in results["targets"])):
            print("profiling answer saves ...", flush=True)
            results["profile"] = profile(args, args.baseline)
    finally:
        stop_everything()
    results["elapsed_s"] = time.time() - started
    results["loadavg_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    phases = [c[k] for c in results.get("capacity", []) for k in ("write", "hello", "save", "page", "partial") if k in c]
    others = [run["cpu"]["others"] / max(1.0, run["cpu"]["seconds"])
              for run in [*results.get("learners", []), *phases, *results.get("spikes", []), *results.get("ramp", [])]]
    results["shared_note"] = (
        f"The machine was shared: other processes used on average {fmt(sum(others) / len(others), 2)} of "
        f"{os.cpu_count()} cores during the measured phases (up to {fmt(max(others), 2)})."
        if others and max(others) > 0.1 else "Nothing else ran on the machine to speak of."
    )
    write_results(args.results, args.doc, "load", results, report(args, results))


if __name__ == "__main__":
    main()
