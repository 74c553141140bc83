"""Real gunicorn servers and Django snippets run against the throwaway cluster, as subprocesses."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.fault.cluster import ThrowawayCluster, free_port

PROJECT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
SECRET_KEY = "fault-only-certprep-key-padding-0123456789abcdefghijklmnop"
SNIPPET_MARK = "FAULT-SNIPPET-RESULT "


def _control_socket_off() -> list[str]:
    # gunicorn >= 25.1 opens a control socket at one path in $HOME: two servers would share it.
    from gunicorn.config import KNOWN_SETTINGS

    return ["--no-control-socket"] if any(s.name == "control_socket_disable" for s in KNOWN_SETTINGS) else []


CONTROL_SOCKET_OFF = _control_socket_off()


def app_environment(cluster: ThrowawayCluster) -> dict[str, str]:
    """The environment of every app process: production settings on plain http, our cluster."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_", "PG"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=cluster.url(),
        SECRET_KEY=SECRET_KEY,
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    env.pop("BENCHMARK_ENDPOINTS", None)
    return env


def run_manage(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=PROJECT, env=env, capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


SNIPPET_PREAMBLE = f"""
import json, django
django.setup()
def emit(value):
    print({SNIPPET_MARK!r} + json.dumps(value), flush=True)
"""


def run_snippet(env: dict[str, str], code: str, *, timeout: float = 60):
    """Run Python with Django set up in a fresh process; return what it passed to emit()."""
    result = subprocess.run(
        [sys.executable, "-c", SNIPPET_PREAMBLE + code], cwd=PROJECT, env=env, capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Django snippet failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return parse_emitted(result.stdout)


def parse_emitted(stdout: str):
    for line in stdout.splitlines():
        if line.startswith(SNIPPET_MARK):
            return json.loads(line[len(SNIPPET_MARK):])
    raise RuntimeError(f"the Django snippet emitted nothing:\n{stdout[-2000:]}")


class Gunicorn:
    """One gunicorn master on a free loopback port; `threads` > 1 makes it a gthread server."""

    def __init__(self, *, env: dict[str, str], log_dir: Path, name: str, workers: int = 2, threads: int = 1):
        self.env, self.workers, self.threads = env, workers, threads
        self.log_path = log_dir / f"gunicorn-{name}.log"
        self.process: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 45) -> None:
        last_problem = ""
        # A port found free may be taken before gunicorn binds it: try a few.
        for _ in range(3):
            self.port = free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    [
                        str(VENV_BIN / "gunicorn"), "config.wsgi",
                        "--bind", f"127.0.0.1:{self.port}",
                        "--workers", str(self.workers), "--threads", str(self.threads),
                        # Longer than any lock a test holds, so only our SIGKILLs end workers.
                        "--timeout", "60", "--graceful-timeout", "5",
                        "--access-logfile", "-", "--error-logfile", "-",
                        *CONTROL_SOCKET_OFF,
                    ],
                    cwd=PROJECT, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    # Its own process group, so teardown can reach a worker the master lost.
                    start_new_session=True,
                )
            if self.wait_healthy(timeout):
                return
            last_problem = self.log_tail()
            self.stop()
        raise RuntimeError(f"gunicorn never answered /healthz:\n{last_problem}")

    def wait_healthy(self, timeout: float) -> bool:
        """Poll /healthz until 200, the master exits, or the time is up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as reply:
                    if reply.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        return False

    def worker_pids(self) -> list[int]:
        """The master's children, read from /proc (no psutil)."""
        pid = self.process.pid
        children: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                children += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
        return sorted(set(children))

    def worker_connected_from(self, local_port: int) -> int | None:
        """The worker owning the loopback TCP socket bound to `local_port` (e.g. its database connection).

        /proc/net/tcp gives the socket's inode, /proc/<worker>/fd the process holding it.
        """
        wanted = f"0100007F:{local_port:04X}"
        inode = None
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[1] == wanted:
                inode = fields[9]
                break
        if inode is None:
            return None
        for pid in self.worker_pids():
            try:
                links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
            except OSError:
                continue
            if f"socket:[{inode}]" in links:
                return pid
        return None

    def wait_for_workers(self, count: int, *, exclude: set[int] = frozenset(), timeout: float = 30) -> list[int]:
        """Wait until the master runs `count` workers none of which is in `exclude`."""
        deadline = time.monotonic() + timeout
        while True:
            pids = [pid for pid in self.worker_pids() if pid not in exclude]
            if len(pids) >= count:
                return pids
            if time.monotonic() > deadline:
                raise AssertionError(f"gunicorn runs {pids}, wanted {count} fresh workers:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:]) or "(no gunicorn log)"

    def stop(self) -> None:
        """SIGTERM the master (it stops its workers), then SIGKILL its process group if it hangs."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                # The master is still alive, so its process group is still ours to end.
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.process = None
