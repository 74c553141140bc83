"""/healthz: 200 with a working database, 503 without, reachable over plain http."""
import json
import os
import subprocess
import sys

from django.conf import settings


def test_healthz_answers_200_when_the_database_answers(client, db):
    response = client.get("/healthz", headers={"host": "10.0.0.7:8000"})
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "up"}
    assert response["Cache-Control"] == "no-store"


def test_healthz_is_not_redirected_to_https_in_production(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/").status_code == 301


def test_healthz_answers_503_when_the_database_is_down():
    script = (
        "import django, os, json; django.setup();"
        "from django.test import Client;"
        "r = Client().get('/healthz'); print(r.status_code, r.content.decode())"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:9/nowhere",
        "DATABASE_POOL": "0",
    }
    result = subprocess.run([sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60)
    status, body = result.stdout.strip().split(" ", 1)
    assert status == "503", result.stderr
    assert json.loads(body)["database"] == "down"
