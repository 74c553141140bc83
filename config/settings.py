"""certprep settings: one module, configured from the environment (12-factor)."""
import copy
import ipaddress
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config.env import envbool, envint, envlist, envstr, load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
load_dotenv(BASE_DIR / ".env")

DEBUG = envbool("DEBUG", False)

SECRET_KEY = envstr("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off "
            "(for local work set DEBUG=1, or put SECRET_KEY in .env)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "django_tasks_db",
    "accounts",
    "exams",
    "jobs",
    "cohorts",
]

MIDDLEWARE = [
    "config.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.hostile.HostileTextMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.timezones.LearnerTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout into its response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
# /bench/hello, the floor the load benchmark compares against (bench/load); off in production.
BENCHMARK_ENDPOINTS = envbool("BENCHMARK_ENDPOINTS", False)
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _sqlite(name: Path) -> dict:
    # One learner on a laptop: an embedded file, WAL so readers never block the
    # writer, IMMEDIATE so a write transaction takes its lock up front.
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": name,
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;",
            "transaction_mode": "IMMEDIATE",
        },
    }


def _database(variable: str = "DATABASE_URL") -> dict:
    url = envstr(variable)
    if not url:
        return _sqlite(BASE_DIR / "db.sqlite3")
    try:
        config = dj_database_url.parse(url)
    except Exception as exc:  # dj-database-url raises several types for a bad URL
        raise ImproperlyConfigured(f"{variable} is not a valid database URL: {exc}") from None
    if config.get("ENGINE") == "django.db.backends.sqlite3":
        # dj-database-url's convention: sqlite:///relative.db, sqlite:////absolute/path.db.
        if not config.get("NAME") or config["NAME"] == ":memory:":
            raise ImproperlyConfigured(f"{variable} must name a SQLite file, e.g. sqlite:///certprep.db")
        return _sqlite(Path(config["NAME"]))
    if config.get("ENGINE") != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            f"{variable} must be a postgres:// or sqlite:/// URL (or unset for SQLite), got scheme of {url.split(':', 1)[0]!r}"
        )
    if not config.get("NAME"):
        raise ImproperlyConfigured(f"{variable} must name a database, e.g. postgres://postgres@127.0.0.1:5432/certprep")
    # Options given in the URL's query (sslmode=require, ...) are kept.
    options = config.setdefault("OPTIONS", {})
    # Parameters bound by the server (psycopg's own cursor instead of Django's client-side
    # one), so psycopg can prepare a statement: after `prepare_threshold` runs of the same
    # SQL on a connection it is planned once and then run from that plan (the answer save,
    # the question page's read, the session load and the user read run on every request).
    options["server_side_binding"] = True
    if envbool("DATABASE_PGBOUNCER", False):
        # Through PgBouncer in transaction mode, where consecutive transactions may run on
        # different server connections: no startup `options` (PgBouncer refuses them: set
        # `ALTER DATABASE … SET jit = off` on the server instead), no server-side cursors
        # and no prepared statements, which would outlive their transaction's connection.
        # (PgBouncer 1.21+ can keep them, `max_prepared_statements`: not measured here.)
        config["DISABLE_SERVER_SIDE_CURSORS"] = True
        options["prepare_threshold"] = None
    else:
        # psycopg's default: a statement run this often on one connection is prepared.
        options["prepare_threshold"] = 5
        # No JIT compiling: our statements are short, and when the planner's estimate of one
        # crosses jit_above_cost, compiling costs far more than running (measured: 98 of 104 ms
        # of the dashboard's mastery statement).
        options["options"] = " ".join(filter(None, ["-c jit=off", options.get("options")]))
    if envbool("DATABASE_POOL", True):
        from config.pool import check_connection

        # The pool checks each connection before lending it, so a restarted server
        # costs one reconnect instead of an error page; the check polls the socket and
        # makes a round trip only when the server has spoken (config/pool.py).
        options["pool"] = {
            "min_size": envint("DATABASE_POOL_MIN", 2, minimum=0),
            "max_size": envint("DATABASE_POOL_MAX", 10, minimum=1),
            "timeout": envint("DATABASE_POOL_TIMEOUT", 10, minimum=1),
            "check": check_connection,
        }
        config["CONN_MAX_AGE"] = 0
    else:
        config["CONN_MAX_AGE"] = envint("CONN_MAX_AGE", 0, minimum=0)
        config["CONN_HEALTH_CHECKS"] = True
    return config


DATABASES = {"default": _database()}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A second connection to the same database, on which a background job's progress
    # commits while the job's own transaction is still open (jobs.services). Only the
    # worker uses it, so it has no pool of its own.
    DATABASES["jobs"] = copy.deepcopy(DATABASES["default"])
    DATABASES["jobs"]["OPTIONS"].pop("pool", None)
    DATABASES["jobs"].update(CONN_MAX_AGE=0, CONN_HEALTH_CHECKS=True, TEST={"MIRROR": "default"})
if envstr("DATABASE_REPLICA_URL"):
    # A streaming replica of the primary, read only by item statistics (config.routers).
    DATABASES["replica"] = _database("DATABASE_REPLICA_URL")
    if "pool" in DATABASES["replica"]["OPTIONS"]:
        # A stopped replica is found out in this long, then statistics read the primary.
        DATABASES["replica"]["OPTIONS"]["pool"]["timeout"] = envint("DATABASE_REPLICA_TIMEOUT", 2, minimum=1)
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["config.routers.StatisticsReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Per process: what is cached is keyed on the rows it was read from, so workers never need to
# agree (the dashboard's bank reference, exams.study.ability.bank_reference).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Background work (django.tasks): stored in the database by django-tasks-db and run by
# `manage.py worker` (a service in docker-compose.yml; `make run` starts one).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
# Started by the worker command; each run schedules the next (jobs.periodic).
PERIODIC_TASKS = [
    "exams.tasks.finalize_expired_attempts", "exams.statistics.tasks.refresh_statistics_nightly",
    "jobs.tasks.reclaim_interrupted_jobs",
]
# A running job renews its lease this often; a job whose lease ran out lost its worker
# (killed, redeployed) and is queued again once, then failed (jobs.services.job_reclaim_interrupted).
JOB_HEARTBEAT_SECONDS = envint("JOB_HEARTBEAT_SECONDS", 15, minimum=1)
JOB_LEASE_SECONDS = envint("JOB_LEASE_SECONDS", 60, minimum=2)
if JOB_LEASE_SECONDS < 2 * JOB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("JOB_LEASE_SECONDS must be at least twice JOB_HEARTBEAT_SECONDS")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # Counts failed logins and refuses further tries for a while (django-axes).
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, with the user read of every signed-in request in plain SQL.
    "accounts.backends.ModelBackend",
]
# Django's database sessions, with their load in plain SQL (accounts/sessions.py): Django's
# own engine and backend compile an ORM query for each read, 0.7 ms of CPU a request, which
# cost a plain save more than a fifth (issue 23, docs/BENCHMARKS.md). psycopg prepares both
# reads. No cache: logout deletes the row, which ends the session on every worker at once.
SESSION_ENGINE = "accounts.sessions"
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
# Lock the username from one address, so one attacker cannot lock a learner out everywhere.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# The lockout page says how long is left (accounts.views.locked_out).
AXES_LOCKOUT_CALLABLE = "accounts.views.locked_out"
# Past this many failures for one username from all addresses in the cool-off window, each
# try waits this long after the latest: slower guessing, never a locked-out owner.
LOGIN_USERNAME_CEILING = envint("LOGIN_USERNAME_CEILING", 20, minimum=1)
LOGIN_USERNAME_DELAY_SECONDS = envint("LOGIN_USERNAME_DELAY_SECONDS", 10, minimum=1)
AXES_RESET_ON_SUCCESS = True
# The address a failure is counted against: the client as the trusted proxy saw it
# (accounts/client_address.py); X-Forwarded-For is read only from TRUSTED_PROXIES.
AXES_CLIENT_IP_CALLABLE = "accounts.client_address.client_address"
TRUSTED_PROXIES = envlist("TRUSTED_PROXIES", [])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXIES must list addresses or CIDRs separated by commas, got {_proxy!r}"
        ) from None
if envstr("PROXY_COUNT"):
    # It set django-ipware's proxy count, which never reached django-axes (issue 28).
    raise ImproperlyConfigured(
        "PROXY_COUNT is no longer read: list the proxies' addresses in TRUSTED_PROXIES instead (docs/DEPLOY.md)"
    )
AXES_VERBOSE = False

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "exams:catalogue"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Mail goes to the console unless an SMTP host is configured (Django 6.1's MAILERS).
_email_host = envstr("EMAIL_HOST")
if _email_host:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": _email_host,
                "port": envint("EMAIL_PORT", 587, minimum=1),
                "username": envstr("EMAIL_HOST_USER"),
                "password": envstr("EMAIL_HOST_PASSWORD"),
                "use_tls": envbool("EMAIL_USE_TLS", True),
            },
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "certprep <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# HTTPS: on by default in production (/healthz is answered before the redirect).
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
_proxy_header = envstr("SECURE_PROXY_SSL_HEADER")
if _proxy_header:
    _name, _, _value = _proxy_header.partition("=")
    if not _value:
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER must look like HTTP_X_FORWARDED_PROTO=https, got {_proxy_header!r}"
        )
    SECURE_PROXY_SSL_HEADER = (_name.strip(), _value.strip())
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# No inline script or style anywhere: JavaScript and CSS come from static files.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    # django-axes logs every login at INFO; lockouts still come through as warnings.
    "loggers": {"axes": {"level": "WARNING"}},
}
