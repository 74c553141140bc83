"""certprep's WSGI app under cProfile, for finding where an endpoint's time goes (bench only).

gunicorn bench.load.profiled_wsgi:application — requests whose "METHOD path" matches
BENCH_PROFILE_MATCH (a regex; default: POSTs to a question slot, i.e. answer saves) run
under one cProfile.Profile per worker, with their SQL statements counted and timed.
Every BENCH_PROFILE_EVERY profiled requests, and when the worker exits, the worker writes
BENCH_PROFILE_DIR/profile-<pid>.pstats and queries-<pid>.json. App code is untouched.
"""
import atexit
import cProfile
import json
import os
import re
import time
from collections import Counter
from pathlib import Path

from config.wsgi import application as certprep

MATCH = re.compile(os.environ.get("BENCH_PROFILE_MATCH", r"^POST /attempts/\d+/q/\d+/$"))
OUT = Path(os.environ.get("BENCH_PROFILE_DIR", "/tmp/certprep-profile"))
EVERY = int(os.environ.get("BENCH_PROFILE_EVERY", "200"))

_profile = cProfile.Profile()
_tally = {"requests": 0, "wall_s": 0.0, "queries": 0, "query_s": 0.0, "statements": Counter()}


def _statement_kind(sql: str) -> str:
    # The statement's shape without literals, to see which ones repeat.
    head = re.sub(r"\s+", " ", sql.strip())[:160]
    return re.sub(r"%s(, %s)*", "%s…", head)


def _count_queries(execute, sql, params, many, context):
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        _tally["queries"] += 1
        _tally["query_s"] += time.perf_counter() - started
        _tally["statements"][_statement_kind(sql)] += 1


def _dump() -> None:
    if not _tally["requests"]:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    _profile.dump_stats(OUT / f"profile-{os.getpid()}.pstats")
    summary = dict(_tally, statements=_tally["statements"].most_common())
    (OUT / f"queries-{os.getpid()}.json").write_text(json.dumps(summary, indent=1))


atexit.register(_dump)


def _body(response):
    # Consume the response inside the profile so rendering and closing are counted.
    try:
        return list(response)
    finally:
        if hasattr(response, "close"):
            response.close()


def application(environ, start_response):
    if not MATCH.match(f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO', '')}"):
        return certprep(environ, start_response)
    from django.db import connection

    started = time.perf_counter()
    with connection.execute_wrapper(_count_queries):
        body = _profile.runcall(lambda: _body(certprep(environ, start_response)))
    _tally["requests"] += 1
    _tally["wall_s"] += time.perf_counter() - started
    if _tally["requests"] % EVERY == 0:
        _dump()
    return body
