# certprep: the same steps as `make run`/`make test` (venv, pip install -e ., collectstatic),
# then deploy/serve as a non-root user: gunicorn on loopback behind the image's own nginx,
# which buffers requests and responses so slow clients cannot hold the workers (issue 28;
# tests/fault/test_served_image.py runs deploy/serve as this CMD does). docker-compose.yml
# migrates and loads the bank at start, and runs the same image as the background worker
# (`manage.py worker`, as `make run` does).
# Both stages on Debian 12 (bookworm): the nginx pinned below is bookworm's.

FROM python:3.12-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config ./config
COPY exams ./exams
COPY accounts ./accounts
COPY jobs ./jobs
COPY cohorts ./cohorts
RUN python -m venv /venv && /venv/bin/pip install --upgrade pip && /venv/bin/pip install -e .

FROM python:3.12-slim-bookworm
ENV PATH=/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DEBUG=0
# Debian's nginx at the exact version the tests ran (docs/DEPLOY.md "The image's server"): a
# Debian security update replaces it in the archive, and then this line fails the build until
# it names the new version, which is when to rerun tests/fault/test_served_image.py.
RUN apt-get update \
 && apt-get install -y --no-install-recommends nginx=1.22.1-9+deb12u11 \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 certprep
COPY --from=build /venv /venv
WORKDIR /app
COPY --chown=certprep:certprep . .
# Static files are collected into the image; whitenoise serves them compressed.
RUN SECRET_KEY=collectstatic-only-not-a-secret-0123456789abcdefghijklmnop python manage.py collectstatic --noinput --verbosity 0
USER certprep
EXPOSE 8000
# /healthz through nginx, so the check fails when either server is down.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["/app/deploy/serve", "check"]
# nginx on 0.0.0.0:8000, gunicorn (WEB_CONCURRENCY workers x WEB_THREADS) on 127.0.0.1:8001;
# exits when either does. deploy/serve is the entrypoint's whole logic (it forwards SIGTERM).
CMD ["/app/deploy/serve"]
