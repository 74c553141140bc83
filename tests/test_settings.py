"""Settings from the environment: production passes check --deploy; bad values stop start-up."""
import os
import subprocess
import sys

import pytest
from django.conf import settings

ROOT = settings.BASE_DIR
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "a-long-random-production-secret-0123456789-abcdefghijklmnopqrstuvwxyz",
    "ALLOWED_HOSTS": "certprep.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://certprep.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/certprep",
    # Production sends real mail; the console backend is for local copies only.
    "EMAIL_HOST": "smtp.example.com",
}


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    ours = ("SECURE_", "EMAIL_", "SESSION_", "CSRF_", "DATABASE_", "DJANGO_ALLOW", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS")
    clean = {key: value for key, value in os.environ.items() if not key.startswith(ours)}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env},
        capture_output=True, text=True, timeout=120,
    )


def test_production_settings_pass_check_deploy():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DATABASE_URL", "mysql://root@localhost/certprep"),
        ("DATABASE_URL", "not a url at all"),
        ("DEBUG", "maybe"),
        ("DATABASE_POOL_MAX", "ten"),
        ("SECURE_PROXY_SSL_HEADER", "HTTP_X_FORWARDED_PROTO"),
        ("TRUSTED_PROXIES", "10.0.0.0/33"),
        ("TRUSTED_PROXIES", "172.30.87.250,nginx"),
        # Replaced by TRUSTED_PROXIES: a deployment that set it must not think it is protected.
        ("PROXY_COUNT", "1"),
    ],
)
def test_a_malformed_value_stops_start_up_naming_the_variable(name, value):
    result = run_manage("check", env={**PRODUCTION, name: value})
    assert result.returncode != 0
    assert name in result.stderr


def test_debug_off_without_a_secret_key_refuses_to_start():
    env = {key: value for key, value in PRODUCTION.items() if key != "SECRET_KEY"}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_without_database_url_the_app_uses_sqlite_in_wal_with_immediate_transactions(tmp_path):
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from django.conf import settings; from django.db import connection;"
        "db = settings.DATABASES['default'];"
        "print(db['ENGINE'], db['OPTIONS']['transaction_mode']);"
        "connection.ensure_connection(); cur = connection.cursor(); cur.execute('PRAGMA journal_mode');"
        "print(cur.fetchone()[0])"
    )
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(DEBUG="1")
    # Run in a copy of the settings' directory layout would be heavy; the default file is fine
    # because the script only opens it.
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    engine_line, journal = result.stdout.split("\n")[:2]
    assert engine_line == "django.db.backends.sqlite3 IMMEDIATE"
    assert journal == "wal"


@pytest.mark.postgres_only
def test_postgres_goes_through_a_checked_pool():
    from config.pool import check_connection

    pool = settings.DATABASES["default"]["OPTIONS"]["pool"]
    assert pool["check"] is check_connection


@pytest.mark.postgres_only
@pytest.mark.django_db
def test_the_pool_check_costs_a_live_connection_no_round_trip_and_finds_a_dead_one():
    import psycopg
    from django.db import connection

    from config.pool import check_connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as lent, psycopg.connect(**params, autocommit=True) as watcher:
        lent.execute("SELECT 'before the check'")
        check_connection(lent)
        ((last,),) = watcher.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [lent.info.backend_pid]).fetchall()
        assert last == "SELECT 'before the check'"  # the check sent nothing
        watcher.execute("SELECT pg_terminate_backend(%s, 5000)", [lent.info.backend_pid])
        with pytest.raises(psycopg.OperationalError):
            check_connection(lent)


@pytest.mark.postgres_only
@pytest.mark.django_db
def test_connections_run_without_jit_and_keep_the_urls_own_options():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from django.conf import settings; o = settings.DATABASES['default']['OPTIONS'];"
        "print(o['sslmode'], o['options'], 'pool' in o)"
    )
    env = {**os.environ, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/certprep?sslmode=require"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["require", "-c", "jit=off", "True"]


@pytest.mark.parametrize("url, expected", [("sqlite:///relative.db", "{cwd}/relative.db"), ("sqlite:////{tmp}/absolute.db", "{tmp}/absolute.db")])
def test_a_sqlite_database_url_opens_that_file_in_wal_with_immediate_transactions(tmp_path, url, expected):
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from django.conf import settings; from django.db import connection;"
        "db = settings.DATABASES['default'];"
        "connection.ensure_connection(); cur = connection.cursor(); cur.execute('PRAGMA journal_mode');"
        "print(os.path.abspath(db['NAME']), db['OPTIONS']['transaction_mode'], cur.fetchone()[0])"
    )
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": url.format(tmp=str(tmp_path).lstrip("/"))}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [expected.format(cwd=tmp_path, tmp=tmp_path), "IMMEDIATE", "wal"]


def test_a_sqlite_url_without_a_file_is_refused():
    result = run_manage("check", env={**PRODUCTION, "DATABASE_URL": "sqlite://"})
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def test_behind_pgbouncer_no_startup_options_server_side_cursors_or_prepared_statements():
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from django.conf import settings; d = settings.DATABASES['default'];"
        "print('options' in d['OPTIONS'], d['OPTIONS']['prepare_threshold'], d['DISABLE_SERVER_SIDE_CURSORS'])"
    )
    env = {**os.environ, "DATABASE_URL": "postgres://postgres@127.0.0.1:6432/certprep", "DATABASE_PGBOUNCER": "1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "None", "True"]
