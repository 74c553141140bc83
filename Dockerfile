# certprep: the same steps as `make run`/`make test` (venv, pip install -e ., collectstatic),
# then gunicorn as a non-root user. docker-compose.yml migrates and loads the bank at start,
# and runs the same image as the background worker (`manage.py worker`, as `make run` does).

FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config ./config
COPY exams ./exams
COPY accounts ./accounts
COPY jobs ./jobs
COPY cohorts ./cohorts
RUN python -m venv /venv && /venv/bin/pip install --upgrade pip && /venv/bin/pip install -e .

FROM python:3.12-slim
ENV PATH=/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DEBUG=0
RUN useradd --create-home --uid 10001 certprep
COPY --from=build /venv /venv
WORKDIR /app
COPY --chown=certprep:certprep . .
# Static files are collected into the image; whitenoise serves them compressed.
RUN SECRET_KEY=collectstatic-only-not-a-secret-0123456789abcdefghijklmnop python manage.py collectstatic --noinput --verbosity 0
USER certprep
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD python -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"
CMD ["sh", "-c", "exec gunicorn config.wsgi --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-2} --threads ${WEB_THREADS:-1} --access-logfile -"]
