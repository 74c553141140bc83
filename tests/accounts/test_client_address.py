"""The address django-axes counts a login against (accounts.client_address), and the lockout
behind a real nginx: per client address and username, never for everyone (issue 28)."""
import http.client
import re
import shutil
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
from django.conf import settings
from django.test import RequestFactory
from django.urls import reverse

from accounts.client_address import client_address
from tests.fault.cluster import free_port
from tests.factories import PASSWORD, UserFactory

NGINX = "127.0.0.1"
ATTACKER, VICTIM = "127.0.0.2", "127.0.0.3"  # loopback answers every 127/8 source address


def seen(remote: str, forwarded: str | None = None) -> str | None:
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return client_address(RequestFactory().post("/accounts/login/", REMOTE_ADDR=remote, **headers))


class TestTheRule:
    def test_without_trusted_proxies_the_header_is_never_read(self, settings):
        settings.TRUSTED_PROXIES = []
        assert seen("203.0.113.7", "198.51.100.1") == "203.0.113.7"
        assert seen("127.0.0.1", "198.51.100.1") == "127.0.0.1"

    def test_a_forged_header_straight_to_the_server_changes_nothing(self, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.5"]
        assert seen("203.0.113.7", "198.51.100.1") == "203.0.113.7"
        assert seen("203.0.113.7", "10.0.0.5") == "203.0.113.7"

    def test_nginx_alone_the_right_most_entry_is_the_client(self, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.5"]
        # nginx appends the address it saw; what the client wrote to its left is never read.
        assert seen("10.0.0.5", "198.51.100.1, 6.6.6.6, 203.0.113.7") == "203.0.113.7"
        assert seen("10.0.0.5", "203.0.113.7") == "203.0.113.7"

    def test_load_balancer_and_nginx_skip_every_trusted_hop(self, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.5", "192.0.2.0/28"]
        assert seen("10.0.0.5", "6.6.6.6, 203.0.113.7, 192.0.2.3") == "203.0.113.7"
        # A client that forged a trusted address still ends up as itself: it is right of the forgery.
        assert seen("10.0.0.5", "192.0.2.3, 203.0.113.7, 192.0.2.3") == "203.0.113.7"

    def test_a_trusted_proxy_without_a_readable_header_counts_as_itself(self, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
        assert seen("10.0.0.5") == "10.0.0.5"
        assert seen("10.0.0.5", "") == "10.0.0.5"
        assert seen("10.0.0.5", "203.0.113.7, not-an-address") == "10.0.0.5"
        assert seen("10.0.0.5", "6.6.6.6, garbage, 203.0.113.7") == "203.0.113.7"
        assert seen("10.0.0.5", "203.0.113.7:5678") == "203.0.113.7"  # a balancer that appends the port
        assert seen("10.0.0.5", "203.0.113.7:http") == "10.0.0.5"

    def test_ipv6_is_keyed_by_its_64_and_mapped_ipv4_as_ipv4(self, settings):
        settings.TRUSTED_PROXIES = ["fd00::1"]
        assert seen("2001:db8:1:2::abcd") == "2001:db8:1:2::"
        assert seen("2001:db8:1:2:ffff:ffff:ffff:ffff") == seen("2001:db8:1:2::1")
        assert seen("2001:db8:1:3::1") == "2001:db8:1:3::"
        assert seen("fd00::1", "2001:db8:9:9::77") == "2001:db8:9:9::"
        assert seen("fd00::1", "[2001:db8:9:9::77]") == "2001:db8:9:9::"
        assert seen("fd00::1", "[2001:db8:9:9::77]:5678") == "2001:db8:9:9::"
        assert seen("::ffff:203.0.113.7") == "203.0.113.7"


def log_in(client, remote: str, password: str, **headers):
    return client.post(reverse("login"), {"username": "victim", "password": password}, REMOTE_ADDR=remote, **headers)


@pytest.mark.django_db
def test_a_forged_header_cannot_escape_the_lockout_nor_move_it(client, settings):
    """Straight to the server (no trusted proxy): each try with a new forged address counts."""
    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    UserFactory(username="victim")
    for number in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "203.0.113.7", "wrong", HTTP_X_FORWARDED_FOR=f"198.51.100.{number}")
    assert log_in(client, "203.0.113.7", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.200").status_code == 429
    assert log_in(client, "203.0.113.8", PASSWORD).status_code == 302


@pytest.mark.django_db
def test_behind_a_trusted_proxy_one_clients_failures_do_not_lock_out_another(client, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    UserFactory(username="victim")
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        log_in(client, "10.0.0.5", "wrong", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert log_in(client, "10.0.0.5", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.7").status_code == 429
    assert log_in(client, "10.0.0.5", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.9").status_code == 302


# Behind a real nginx ------------------------------------------------------------------------

def nginx_conf(root: Path, *, listen: int, upstream: str) -> str:
    """deploy/nginx.conf's location block, in a server of its own on loopback."""
    shipped = (Path(settings.BASE_DIR) / "deploy" / "nginx.conf").read_text()
    location = shipped[shipped.index("    location / {"):shipped.rindex("}")]
    location = location.replace("set $web http://web:8000;", f"set $web {upstream};")
    temp = root / "tmp"
    temp.mkdir(exist_ok=True)
    return f"""
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {temp}/body;
  proxy_temp_path {temp}/proxy;
  fastcgi_temp_path {temp}/fastcgi;
  uwsgi_temp_path {temp}/uwsgi;
  scgi_temp_path {temp}/scgi;
  server {{
    listen {NGINX}:{listen};
{location}
  }}
}}
"""


@pytest.fixture
def nginx(live_server, tmp_path):
    """nginx on a free loopback port in front of the live server, configured as deploy/nginx.conf."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    port = free_port()
    conf = tmp_path / "nginx.conf"
    upstream = f"http://127.0.0.1:{live_server.thread.port}"  # an address: a variable proxy_pass resolves names per request
    conf.write_text(nginx_conf(tmp_path, listen=port, upstream=upstream))
    process = subprocess.Popen([binary, "-c", str(conf), "-p", str(tmp_path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                http.client.HTTPConnection(NGINX, port, timeout=2).request("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def login_from(source: str, port: int, password: str, *, forwarded: str | None = None) -> int:
    """A whole login as a browser at `source` does it (the page, then the post with its token)."""
    connection = http.client.HTTPConnection(NGINX, port, timeout=20, source_address=(source, 0))
    connection.request("GET", reverse("login"), headers={"Host": "localhost"})
    page = connection.getresponse()
    body = page.read().decode()
    assert page.status == 200, (page.status, body[:500])
    cookie = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie", "")).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": "victim", "password": password})
    headers = {"Host": "localhost", "Cookie": f"csrftoken={cookie}", "Content-Type": "application/x-www-form-urlencoded"}
    if forwarded is not None:
        headers["X-Forwarded-For"] = forwarded
    connection.request("POST", reverse("login"), body=form, headers=headers)
    status = connection.getresponse()
    status.read()
    connection.close()
    return status.status


@pytest.mark.django_db(transaction=True)
def test_behind_nginx_six_wrong_passwords_lock_that_address_not_the_victim(nginx, settings):
    """The outside check's attack: six wrong passwords for `victim` from one address, then the
    right one from another, through the documented nginx. With nginx's address trusted, the
    victim logs in; the attacker is locked out, and a forged X-Forwarded-For does not free it."""
    settings.TRUSTED_PROXIES = [NGINX]
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]
    UserFactory(username="victim")
    statuses = [login_from(ATTACKER, nginx, "wrong") for _ in range(6)]
    assert statuses[:settings.AXES_FAILURE_LIMIT - 1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)
    assert statuses[-1] == 429
    assert login_from(ATTACKER, nginx, PASSWORD, forwarded=VICTIM) == 429
    assert login_from(VICTIM, nginx, PASSWORD) == 302
