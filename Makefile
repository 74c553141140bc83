# certprep: `make run` serves a working local copy; `make test` runs the whole suite on PostgreSQL.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/certprep
# Tests run with production-like settings (DEBUG off) and a throwaway key.
TEST_ENV := DATABASE_URL=$(TEST_DATABASE_URL) SECRET_KEY=test-only-certprep-key-padding-0123456789abcdefghij \
	DEBUG=0 SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 DJANGO_ALLOW_ASYNC_UNSAFE=true
RUN_ENV := DEBUG=1
PYTEST_WORKERS ?= 2
PORT ?= 8000

.PHONY: run test test-fault test-sqlite fuzz venv conformance check-chromium clean screenshots bench bench-scale bench-scale-out bench-calibration

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@python=$$(PYTHON="$(PYTHON)" tools/find-python) || exit 1; \
	echo "Using $$python ($$($$python --version))"; \
	[ -x $(PY) ] || $$python -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

run: venv
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(RUN_ENV) $(PY) manage.py load_bank
	$(RUN_ENV) PORT=$(PORT) $(PY) manage.py create_demo_accounts
	$(RUN_ENV) $(PY) manage.py create_demo_history
	$(RUN_ENV) $(PY) manage.py create_demo_cohort
	@echo "Serving certprep on http://127.0.0.1:$(PORT), with a background worker  (Ctrl-C stops both)"
	@# The worker runs large imports and finishes expired attempts every minute; it stops with the server.
	$(RUN_ENV) $(PY) manage.py worker --no-reload & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT; \
	  $(RUN_ENV) $(PY) manage.py runserver 127.0.0.1:$(PORT)

check-chromium:
	@command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || { \
	  echo "make test needs Chromium for the browser tests: apt-get install -y chromium" >&2; exit 1; }

# axe-core for the accessibility scans in the browser tests (npm registry; nothing ships).
node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { echo "make test needs npm (Node.js) for axe-core: apt-get install -y npm" >&2; exit 1; }
	npm ci --no-audit --no-fund --silent
	@touch $@

test: venv check-chromium node_modules/.installed
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(TEST_ENV) $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -q -m "not fault"
	$(MAKE) --no-print-directory test-fault

# Fault injection: real gunicorn (alone, and as the image serves it: deploy/serve with the host's
# nginx) and a throwaway PostgreSQL cluster of their own, one at a time.
test-fault: venv
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(TEST_ENV) $(PY) -m pytest -q -p no:xdist -m fault tests/fault

# The fuzzer of tests/fuzz/ (every URL pattern, every form on the pages, every importer) at
# ten times the examples make test gives it: hypothesis's "fuzz" profile (tests/conftest.py).
fuzz: venv
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(TEST_ENV) HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -q tests/fuzz

# The embedded default (no DATABASE_URL) keeps working: the suite without browser and
# PostgreSQL-only tests, on SQLite.
test-sqlite: venv
	DATABASE_URL= SECRET_KEY=test-only-sqlite-key-padding-0123456789abcdefghij DEBUG=0 SECURE_SSL_REDIRECT=0 \
	  $(PY) manage.py collectstatic --noinput --verbosity 0
	DATABASE_URL= SECRET_KEY=test-only-sqlite-key-padding-0123456789abcdefghij DEBUG=0 SECURE_SSL_REDIRECT=0 \
	  $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -q -m "not postgres_only and not browser and not fault"

# The README's pictures, taken by the browser journeys themselves.
SCREENSHOT_TESTS := tests/browser/test_mock.py::test_a_whole_60_question_mock_by_keyboard \
	tests/browser/test_progress.py tests/browser/test_errata.py tests/browser/test_admin_import.py
screenshots: venv check-chromium node_modules/.installed
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(TEST_ENV) $(PY) -m pytest -q -p no:xdist $(SCREENSHOT_TESTS) --screenshots docs/screenshots

# Load (locust against the image's server, deploy/serve: nginx in front of gunicorn, beside the
# /bench/hello floor and the write floor of bench/floor on a server of its own alike: capacity
# sweep, learners, draw, page costs, start spike, capacity ramp; needs nginx) and scale benchmarks; both write their figures into docs/BENCHMARKS.md.
# Each takes its own database (the load run two: certprep_bench and certprep_bench_floor).
bench: venv
	$(PY) -m pip install --quiet -e '.[bench]'
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) bench/load/run.py

bench-scale: venv
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) bench/scale/run.py

# Scale-out (docs/DEPLOY.md "Scaling out"): a primary and a streaming replica of its own, PgBouncer
# in transaction mode, two gunicorn servers behind nginx round robin, 200 learners, the replica
# stopped mid-run; needs pgbouncer and nginx (apt-get install -y pgbouncer nginx). About 6 minutes.
bench-scale-out: venv
	$(TEST_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) bench/scale_out/run.py

# Readiness and mis-key calibration on simulated learners (docs/MEASUREMENT.md), about 6
# minutes; its database writes are rolled back.
bench-calibration: venv
	$(TEST_ENV) $(PY) bench/calibration/run.py

conformance: venv
	$(PY) tools/moodle_conformance.py --report docs/CONFORMANCE.md

clean:
	rm -rf $(VENV) node_modules staticfiles db.sqlite3*
