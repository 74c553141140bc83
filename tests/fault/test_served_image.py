"""The image's server as its CMD runs it (deploy/serve: nginx in front of gunicorn), on the host's
nginx and our gunicorn: slow clients hold no worker, and the login lockout counts the client (issue 28).

The outside check's attack: six sockets sending a body one byte a second left /healthz
unanswered while gunicorn faced clients. Here the same sockets, slow headers and clients that
never read run against deploy/serve while /healthz and the login page must answer within 2 s,
and nginx ends each slow socket after its timeout (deploy/nginx-image.conf: 10 s).
"""
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.accounts.test_client_address import nginx_conf
from tests.fault.cluster import free_port
from tests.fault.conftest import PASSWORD
from tests.fault.servers import CONTROL_SOCKET_OFF, PROJECT, VENV_BIN

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]

PROMPT = 2.0  # seconds a probe may take while the slow clients run
NGINX_TIMEOUT = 10  # client_header_timeout, client_body_timeout and send_timeout in deploy/nginx-image.conf
CUT_WITHIN = NGINX_TIMEOUT + 5
ATTACKER, VICTIM, OUTER_PROXY = "127.0.0.2", "127.0.0.3", "127.0.0.4"  # loopback answers every 127/8 address
FAILURE_LIMIT = 3  # LOGIN_FAILURE_LIMIT for these servers: fewer production password hashes
# A large download (a bank export, an exhibit) as a static file whitenoise serves: 6 MB, more
# than the kernel's buffers on loopback take (up to 4 MB of send buffer), so whoever writes it
# waits for the client. Written before the server starts (whitenoise indexes files at start).
LARGE = "/static/test-served-image/large.bin"
LARGE_SIZE = 6 * 1024 * 1024


class ServedImage:
    """deploy/serve in a process group of its own, as the container's CMD."""

    def __init__(self, env: dict[str, str], run_dir: Path, log_path: Path):
        self.port = free_port()
        self.log_path = log_path
        run_dir.mkdir(parents=True, exist_ok=True)
        env = {
            **env,
            "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}:/usr/sbin",
            "SERVE_PORT": str(self.port),
            "SERVE_APP_PORT": str(free_port()),
            "SERVE_RUN_DIR": str(run_dir),
            "WEB_CONCURRENCY": "2",
            "WEB_THREADS": "1",
            "GUNICORN_CMD_ARGS": " ".join(CONTROL_SOCKET_OFF),
            "LOGIN_FAILURE_LIMIT": str(FAILURE_LIMIT),
            # As compose's x-app sets it for its nginx; the image alone sets none.
            "TRUSTED_PROXIES": OUTER_PROXY,
        }
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen([str(PROJECT / "deploy" / "serve")], env=env, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 45
        while not self.healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"deploy/serve never answered /healthz:\n{self.log_tail()}")
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return False

    def children(self) -> list[int]:
        """serve's children: the gunicorn master and the nginx master."""
        pid = self.process.pid
        try:
            return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    def child(self, name: str) -> int:
        for pid in self.children():
            if name in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                return pid
        raise AssertionError(f"deploy/serve runs no {name}: {self.children()}")

    def group_alive(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def kill(self) -> None:
        if self.group_alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def start_served(app_env, log_dir, tmp_path, request):
    servers: list[ServedImage] = []

    def start() -> ServedImage:
        name = f"serve-{request.node.name}-{len(servers) + 1}"
        servers.append(ServedImage(app_env, tmp_path / name, log_dir / f"{name}.log"))
        return servers[-1]

    yield start
    for server in servers:
        print(f"--- {server.log_path.name} (tail) ---\n{server.log_tail()}")
        server.kill()


@pytest.fixture(scope="module")
def served(app_env, log_dir, tmp_path_factory):
    """One deploy/serve for the slow-client and lockout tests of this module, serving LARGE."""
    large = PROJECT / "staticfiles" / LARGE.removeprefix("/static/")
    large.parent.mkdir(exist_ok=True)
    large.write_bytes(os.urandom(LARGE_SIZE))
    try:
        server = ServedImage(app_env, tmp_path_factory.mktemp("serve"), log_dir / "serve-shared.log")
        yield server
        print(f"--- {server.log_path.name} (tail) ---\n{server.log_tail()}")
        server.kill()
    finally:
        shutil.rmtree(large.parent)


# Slow clients ----------------------------------------------------------------------------------

class SlowSocket(threading.Thread):
    """A client writing `head` then one byte of `trickle` a second, until told to go quiet or
    the server ends the connection; `cut_after` is how long after the last byte sent that took."""

    def __init__(self, port: int, head: bytes, trickle: bytes, *, receive_buffer: int | None = None):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect(("127.0.0.1", port))
        self.head, self.trickle = head, trickle
        self.quiet = threading.Event()
        self.closed = threading.Event()
        self.last_sent = time.monotonic()

    def run(self) -> None:
        try:
            if self.head:
                self.sock.sendall(self.head)
            self.last_sent = time.monotonic()
            for byte in self.trickle:
                if self.quiet.wait(1):
                    break
                self.sock.sendall(bytes([byte]))
                self.last_sent = time.monotonic()
        except OSError:
            self.closed.set()

    def cut_within(self, seconds: float) -> bool:
        """True once the server closed or reset the connection (read what it sent until then)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.closed.is_set():
                return True
            self.sock.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
            try:
                if self.sock.recv(65536) == b"":
                    return True
            except TimeoutError:
                continue
            except OSError:  # a reset: nginx's reset_timedout_connection
                return True
        return False

    def close(self) -> None:
        self.quiet.set()
        self.sock.close()


def probe_for(server: ServedImage, seconds: float) -> list[tuple[str, float]]:
    """/healthz and the login page (a real page: session, CSRF, template) once a second each,
    each within PROMPT seconds; returns what each took."""
    taken = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in ("/healthz", "/accounts/login/"):
            started = time.monotonic()
            try:
                with urllib.request.urlopen(f"{server.url}{path}", timeout=PROMPT) as reply:
                    reply.read()
                    assert reply.status == 200, (path, reply.status)
            except OSError as error:
                raise AssertionError(f"{path} unanswered within {PROMPT} s while slow clients ran: {error!r}") from None
            taken.append((path, time.monotonic() - started))
        time.sleep(max(0.0, 1 - (time.monotonic() - started)))
    return taken


def slow_clients(count: int, make) -> list[SlowSocket]:
    clients = [make() for _ in range(count)]
    for client in clients:
        client.start()
    return clients


def ended_short(client: SlowSocket) -> tuple[bool, int]:
    """Read what a client that never read was sent: (did the server end it, bytes received)."""
    received = 0
    client.sock.settimeout(CUT_WITHIN)
    try:
        while chunk := client.sock.recv(65536):
            received += len(chunk)
    except ConnectionResetError:  # nginx's reset_timedout_connection
        return True, received
    except TimeoutError:
        return False, received
    return True, received


def test_slow_clients_hold_no_worker_and_are_cut_after_the_timeouts(served):
    """At once, against two gunicorn workers: the outside check's six POST bodies sent a byte a
    second, four request headers sent a byte a second, and four clients asking for a 6 MB
    download through a 4 kB window and reading nothing. /healthz and the login page answer
    within 2 s throughout (bare gunicorn leaves both unanswered: its workers wait on these
    sockets). nginx ends the headers after client_header_timeout although they still arrive,
    the downloads after send_timeout without progress, and the bodies once they go quiet for
    client_body_timeout (a trickling body is held by nginx, which costs a connection, not a worker)."""
    body_head = (b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
    header = b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
    download = f"GET {LARGE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    bodies = slow_clients(6, lambda: SlowSocket(served.port, body_head, b"x" * 1000))
    headers = slow_clients(4, lambda: SlowSocket(served.port, b"", header))
    readers = slow_clients(4, lambda: SlowSocket(served.port, download, b"", receive_buffer=4096))
    try:
        taken = probe_for(served, NGINX_TIMEOUT + 2)
        assert max(seconds for _, seconds in taken) < PROMPT

        for client in headers:
            # Still trickling: client_header_timeout bounds the whole header, not a pause.
            assert client.cut_within(CUT_WITHIN - NGINX_TIMEOUT), "a header still arriving after 15 s was not cut"
        for client in readers:
            ended, received = ended_short(client)
            assert ended and received < LARGE_SIZE, f"a reader got {received} of {LARGE_SIZE} bytes, ended: {ended}"
        assert all(client.is_alive() and not client.closed.is_set() for client in bodies), \
            "a body still arriving was cut: client_body_timeout counts between two reads"
        for client in bodies:
            client.quiet.set()
        for client in bodies:
            assert client.cut_within(CUT_WITHIN), f"a stalled body was not ended within {CUT_WITHIN} s"
    finally:
        for client in [*bodies, *headers, *readers]:
            client.close()


# The login lockout through the image's nginx --------------------------------------------------

def login_from(source: str, port: int, username: str, password: str, *, forwarded: str | None = None) -> int:
    """A whole login as a browser at `source` does it (the page, then the post with its token)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20, source_address=(source, 0))
    connection.request("GET", "/accounts/login/", headers={"Host": "localhost"})
    page = connection.getresponse()
    body = page.read().decode()
    assert page.status == 200, (page.status, body[:500])
    cookie = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie", "")).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": username, "password": password})
    headers = {"Host": "localhost", "Cookie": f"csrftoken={cookie}", "Content-Type": "application/x-www-form-urlencoded"}
    if forwarded is not None:
        headers["X-Forwarded-For"] = forwarded
    connection.request("POST", "/accounts/login/", body=form, headers=headers)
    reply = connection.getresponse()
    reply.read()
    connection.close()
    return reply.status


def test_the_image_alone_counts_the_client_and_a_forged_header_changes_nothing(served):
    """gunicorn sees every request from nginx (127.0.0.1); the lockout still counts the client
    nginx saw, whatever X-Forwarded-For the client wrote."""
    statuses = [login_from(ATTACKER, served.port, "learner18", "wrong", forwarded=f"198.51.100.{n}")
                for n in range(FAILURE_LIMIT + 1)]
    assert statuses == [200] * (FAILURE_LIMIT - 1) + [429, 429]
    assert login_from(ATTACKER, served.port, "learner18", PASSWORD, forwarded=VICTIM) == 429
    assert login_from(VICTIM, served.port, "learner18", PASSWORD) == 302


@pytest.fixture
def outer_nginx(served, tmp_path):
    """compose's proxy: deploy/nginx.conf's location in front of the image's server, connecting
    to it from OUTER_PROXY, the address TRUSTED_PROXIES lists (compose: 172.30.87.250)."""
    port = free_port()
    conf = nginx_conf(tmp_path, listen=port, upstream=served.url)
    assert "proxy_pass $web;" in conf
    conf = conf.replace("proxy_pass $web;", f"proxy_bind {OUTER_PROXY};\n        proxy_pass $web;")
    (tmp_path / "nginx.conf").write_text(conf)
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen([binary, "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path), "-e", "stderr"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_behind_composes_nginx_the_lockout_is_per_client(outer_nginx):
    """Two proxies now (compose's nginx, then the image's): with the outer one's address in
    TRUSTED_PROXIES, six wrong passwords lock that client, and the victim logs in from another."""
    statuses = [login_from(ATTACKER, outer_nginx, "learner19", "wrong") for _ in range(FAILURE_LIMIT + 1)]
    assert statuses == [200] * (FAILURE_LIMIT - 1) + [429, 429]
    assert login_from(ATTACKER, outer_nginx, "learner19", PASSWORD, forwarded=VICTIM) == 429
    assert login_from(VICTIM, outer_nginx, "learner19", PASSWORD) == 302


# The entrypoint ---------------------------------------------------------------------------------

def test_sigterm_stops_both_servers(start_served):
    server = start_served()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0
    deadline = time.monotonic() + 10
    while server.group_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not server.group_alive(), "a gunicorn or nginx process outlived deploy/serve"


@pytest.mark.parametrize("dying", ["gunicorn", "nginx"])
def test_either_server_dying_ends_serve_so_the_container_restarts(start_served, dying):
    server = start_served()
    survivor = server.child("nginx" if dying == "gunicorn" else "gunicorn")
    os.kill(server.child(dying), signal.SIGKILL)
    assert server.process.wait(timeout=30) != 0
    deadline = time.monotonic() + 20
    while Path(f"/proc/{survivor}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{survivor}").exists(), f"{dying} died and the other server kept running"
