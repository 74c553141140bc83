"""The dashboard of a learner with a long history: its time and statement count (issue 24: < 100 ms at 1,000 attempts).

    DATABASE_URL=postgres://…/certprep_dashboard .venv/bin/python bench/dashboard/run.py [--attempts 1000]

Builds, in the database it is given (migrated and loaded with the shipped bank, `load_bank`),
one learner with --attempts finished attempts of 60 answered slots each (real rows, bulk
inserted), calibrates the bank from them (the statistics refresh), then requests the dashboard
through Django's test client: 2 warm-up runs, 9 timed, the median and the statement count printed
(and written to bench/results/dashboard.json). The full-scale figure is bench/scale's.
"""
import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from exams.models import Attempt, AttemptMode, AttemptStatus, Exam, Question, QuestionVersion, Response  # noqa: E402
from exams.statistics.refresh import item_statistics_refresh  # noqa: E402


def build(attempts: int) -> None:
    call_command("migrate", verbosity=0)
    if not Question.objects.exists():
        call_command("load_bank", verbosity=0)
    exam = Exam.objects.get(code="NCA-GENM")
    user, created = get_user_model().objects.get_or_create(username="heavy-dashboard")
    if not created and Attempt.objects.filter(user=user).count() >= attempts:
        return
    Attempt.objects.filter(user=user).delete()
    rng = random.Random(1)
    questions = list(Question.objects.active().filter(exam=exam).values_list("pk", "domain_id"))
    versions = QuestionVersion.objects.current_for(list(Question.objects.filter(pk__in=[q for q, _ in questions])))
    now = timezone.now()
    made = Attempt.objects.bulk_create(
        Attempt(user=user, exam=exam, mode=rng.choice([AttemptMode.MOCK, AttemptMode.PRACTICE]), status=AttemptStatus.SUBMITTED,
                started_at=now - timedelta(hours=2 * i + 1), finished_at=now - timedelta(hours=2 * i),
                score=Decimal(70), published_score=Decimal(70), passed=True, right_count=42, total_count=60)
        for i in range(attempts)
    )
    rows = []
    for attempt in made:
        for position, (question_id, domain_id) in enumerate(rng.sample(questions, 60), start=1):
            rows.append(Response(attempt=attempt, position=position, question_id=question_id, domain_id=domain_id,
                                 version=versions[question_id], choice_order=[], is_correct=rng.random() < 0.7,
                                 answered_at=attempt.started_at + timedelta(minutes=position)))
    Response.objects.bulk_create(rows, batch_size=5000)
    item_statistics_refresh(exam=exam)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=1000)
    args = parser.parse_args()
    build(args.attempts)
    client = Client()
    client.force_login(get_user_model().objects.get(username="heavy-dashboard"))
    for _ in range(2):
        assert client.get("/dashboard/").status_code == 200
    runs = []
    for _ in range(9):
        started = time.perf_counter()
        assert client.get("/dashboard/").status_code == 200
        runs.append(1000 * (time.perf_counter() - started))
    with CaptureQueriesContext(connection) as queries:
        client.get("/dashboard/")
    result = {"attempts": args.attempts, "median_ms": round(statistics.median(runs), 1),
              "runs_ms": [round(r, 1) for r in runs], "statements": len(queries.captured_queries)}
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "dashboard.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
