""""Start mock"'s draw, alone: wall time and CPU (this process and its PostgreSQL backend) per draw.

Each draw is a new learner's first mock (services.attempt_start, what the "Start mock" POST
runs besides the session, the user and the redirect), on the loaded bank. Prints one JSON
object. Usage (environment as for manage.py): python bench/load/draw.py --count 40
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
HZ = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--exam", default="NCA-GENM")
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db import connection

    from exams.models import AttemptMode, Exam
    from exams.room.services import attempt_start

    exam = Exam.objects.get(code=args.exam)
    users = [User.objects.get_or_create(username=f"drawer{index:04d}")[0] for index in range(args.count + 5)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    walls, cpus, pg = [], [], []
    for index, user in enumerate(users):
        wall, cpu, pg_before = time.perf_counter(), time.process_time(), backend_cpu(backend)
        attempt_start(user=user, exam=exam, mode=AttemptMode.MOCK)
        if index >= 5:  # the first few warm the caches
            walls.append(1000 * (time.perf_counter() - wall))
            cpus.append(1000 * (time.process_time() - cpu))
            pg.append(1000 * (backend_cpu(backend) - pg_before))
    print(json.dumps({"draws": len(walls), "wall_ms_p50": statistics.median(walls), "wall_ms_p95": sorted(walls)[int(0.95 * len(walls)) - 1],
                      "cpu_ms_p50": statistics.median(cpus), "postgres_cpu_ms_mean": statistics.mean(pg)}))


if __name__ == "__main__":
    main()
