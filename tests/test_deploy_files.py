"""The image and compose serve through deploy/serve, the script tests/fault/test_served_image.py runs
on the host (there is no Docker engine here): the files must say so, and pin the nginx tested."""
import re
import shutil
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
DOCKERFILE = (PROJECT / "Dockerfile").read_text()
COMPOSE = (PROJECT / "docker-compose.yml").read_text()


def test_the_image_runs_deploy_serve_and_checks_health_through_it():
    instructions = [line for line in DOCKERFILE.splitlines() if line and not line.startswith("#")]
    assert instructions[-1] == 'CMD ["/app/deploy/serve"]'
    assert 'HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["/app/deploy/serve", "check"]' in instructions
    assert (PROJECT / "deploy" / "serve").stat().st_mode & 0o111, "deploy/serve must be executable (COPY keeps the mode)"


def test_the_image_pins_the_bookworm_nginx_the_tests_ran():
    assert re.findall(r"^FROM (\S+)", DOCKERFILE, re.M) == ["python:3.12-slim-bookworm", "python:3.12-slim-bookworm"]
    pinned = re.search(r"apt-get install -y --no-install-recommends nginx=(\d+\.\d+\.\d+)-\S+\+deb12u\d+", DOCKERFILE)
    assert pinned, "the image installs Debian 12's nginx at an exact version"
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    tested = subprocess.run([binary, "-v"], capture_output=True, text=True, check=True).stderr
    assert f"nginx/{pinned[1]}" in tested, f"the tests ran {tested.strip()}, the image pins {pinned[1]}"


def test_compose_web_runs_the_images_own_server():
    web = COMPOSE[COMPOSE.index("\n  web:\n"):COMPOSE.index("\n  worker:\n")]
    assert "command:" not in web, "compose's web must run the image's CMD (deploy/serve), not bare gunicorn"
    assert 'test: ["CMD", "/app/deploy/serve", "check"]' in web
