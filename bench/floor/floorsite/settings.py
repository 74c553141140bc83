"""The write floor's settings: database sessions, auth and CSRF, nothing else (bench only)."""
import os

import dj_database_url

SECRET_KEY = os.environ["SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions", "floorsite"]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "floorsite.urls"
WSGI_APPLICATION = "floorsite.wsgi.application"
# Persistent connections, no per-request health check: the cheapest way to reach the database.
DATABASES = {"default": dj_database_url.parse(os.environ["FLOOR_DATABASE_URL"], conn_max_age=600)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SESSION_ENGINE = "django.contrib.sessions.backends.db"
USE_TZ = True
TIME_ZONE = "UTC"
LOGGING = {"version": 1, "disable_existing_loggers": False,
           "handlers": {"console": {"class": "logging.StreamHandler"}}, "root": {"handlers": ["console"], "level": "WARNING"}}
