"""What each learner page of a mock costs per request, in-process: statements, wall time, CPU.

Through django.test.Client with the whole middleware stack (no HTTP server, so no socket
or HTTP parsing), on the loaded bank, for one learner with a running mock and one finished
mock: catalogue, exam start page, question page, its htmx partial, an answer save, review,
results. CPU is this process's plus its PostgreSQL backend's. Prints one JSON object.
Usage (environment as for manage.py, ALLOWED_HOSTS including testserver): python bench/load/pages.py
"""
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
HZ = os.sysconf("SC_CLK_TCK")
ROUNDS = 60


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def main() -> None:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.signals import request_started
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from exams.models import Attempt, AttemptMode, Exam
    from exams.room.services import attempt_start, attempt_submit

    # Each request would empty the query log that the statement count reads.
    request_started.disconnect(reset_queries)
    exam = Exam.objects.get(code="NCA-GENM")
    user, _ = User.objects.get_or_create(username="pages-learner")
    finished = Attempt.objects.filter(user=user, status="submitted").first()
    if finished is None:
        finished = attempt_start(user=user, exam=exam, mode=AttemptMode.MOCK).attempt
        attempt_submit(user=user, attempt_id=finished.pk)
    running = attempt_start(user=user, exam=exam, mode=AttemptMode.MOCK).attempt
    client = Client()
    client.force_login(user)
    htmx = {"HX-Request": "true"}
    question = f"/attempts/{running.pk}/q/3/"
    turn = iter(range(10**6))
    pages = {
        "catalogue": lambda: client.get("/"),
        "exam start page": lambda: client.get(f"/exams/{exam.code}/"),
        "question page": lambda: client.get(question),
        "question partial": lambda: client.get(question, headers=htmx),
        "answer save": lambda: client.post(question, f"choice={1 + next(turn) % 2}", content_type="application/x-www-form-urlencoded",
                                           headers=htmx),
        "review": lambda: client.get(f"/attempts/{running.pk}/review/"),
        "results": lambda: client.get(f"/attempts/{finished.pk}/results/"),
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    out = {}
    for name, request in pages.items():
        for _ in range(5):
            assert request().status_code == 200, name
        with CaptureQueriesContext(connection) as queries:
            request()
        walls = []
        cpu, pg = time.process_time(), backend_cpu(backend)
        for _ in range(ROUNDS):
            started = time.perf_counter()
            request()
            walls.append(1000 * (time.perf_counter() - started))
        out[name] = {"statements": len(queries.captured_queries), "wall_ms_p50": statistics.median(walls),
                     "cpu_ms": 1000 * (time.process_time() - cpu) / ROUNDS,
                     "postgres_cpu_ms": 1000 * (backend_cpu(backend) - pg) / ROUNDS}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
