"""A throwaway PostgreSQL cluster on a free loopback port, owned by the fault tests alone."""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

SERVER_BINARIES = Path("/usr/lib/postgresql")
DATABASE = "certprep_fault"
# pg_ctl's own wait, and the subprocess timeout around it (a little longer).
PG_CTL_WAIT = 60


def free_port() -> int:
    """A port nobody listens on right now (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_bin_dir() -> Path:
    """The newest PostgreSQL server installed the Debian way (/usr/lib/postgresql/<major>/bin)."""
    found = [path.parent for path in SERVER_BINARIES.glob("*/bin/pg_ctl") if (path.parent / "initdb").exists()]
    if not found:
        raise RuntimeError(
            f"no PostgreSQL server binaries under {SERVER_BINARIES}/*/bin: the fault tests start a cluster "
            "of their own (apt-get install -y postgresql)"
        )
    return max(found, key=lambda bin_dir: int(re.sub(r"\D", "", bin_dir.parent.name) or 0))


class ThrowawayCluster:
    """initdb, start, restart and remove one private cluster; never the shared one on 5432.

    Runs the server as the `postgres` OS user when we are root (initdb refuses root),
    listens on 127.0.0.1 only, no Unix socket, trust authentication from loopback.
    Durability settings (fsync, synchronous_commit, full_page_writes) stay at defaults.
    """

    def __init__(self) -> None:
        self.bin_dir = server_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="certprep-fault-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port: int | None = None
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.root.chmod(0o700)

    # ---- commands -----------------------------------------------------------------
    def _run(self, *args: str, timeout: float) -> subprocess.CompletedProcess:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}\n"
                f"server log:\n{self.log_tail()}"
            )
        return result

    def _pg_ctl(self, action: str, *extra: str) -> None:
        self._run(
            "pg_ctl", action, "-D", str(self.data), "-l", str(self.log), "-w", "-t", str(PG_CTL_WAIT), *extra,
            timeout=PG_CTL_WAIT + 15,
        )

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    # ---- life cycle ---------------------------------------------------------------
    def create(self) -> None:
        # --no-sync only skips initdb's own final flush of a cluster we throw away; the
        # server's durability settings are untouched.
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions", timeout=120)
        (self.data / "pg_hba.conf").write_text("host all all 127.0.0.1/32 trust\n")

    def start(self) -> None:
        # A port found free may be taken before the server binds it: try a few.
        last_error = None
        for _ in range(3):
            self.port = free_port()
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(
                    f"\n# certprep fault tests\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                    "unix_socket_directories = ''\nmax_connections = 200\n"
                )
            try:
                self._pg_ctl("start")
                break
            except RuntimeError as error:
                last_error = error
        else:
            raise RuntimeError(f"the throwaway cluster did not start on three ports: {last_error}")
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=10) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")

    def restart(self) -> None:
        """pg_ctl restart -m fast: open sessions are cut, committed data stays."""
        self._pg_ctl("restart", "-m", "fast")

    def remove(self) -> None:
        """Stop the server (fast, then immediate, then SIGKILL by its pid) and delete its files."""
        if self.data.exists():
            for mode in ("fast", "immediate"):
                try:
                    self._run("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "30", timeout=45)
                    break
                except (RuntimeError, subprocess.TimeoutExpired):
                    continue
            else:
                self._kill_postmaster()
        shutil.rmtree(self.root, ignore_errors=True)

    def _kill_postmaster(self) -> None:
        pid_file = self.data / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    # ---- access -------------------------------------------------------------------
    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, **options) -> psycopg.Connection:
        return psycopg.connect(self.url(), connect_timeout=10, **options)

    def rows(self, sql: str, params=()) -> list[tuple]:
        """Run one read in its own autocommit connection (a fresh one, so it survives restarts)."""
        with self.connect(autocommit=True) as connection:
            return connection.execute(sql, params).fetchall()

    def wait_until_accepting(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.rows("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
