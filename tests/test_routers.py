"""The replica router: statistics reads go to the replica when one is configured; nothing else does."""
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from config.routers import StatisticsReplicaRouter, statistics_reads
from exams.models import Attempt, Question

ROOT = settings.BASE_DIR


def test_without_a_replica_everything_stays_on_the_primary():
    router = StatisticsReplicaRouter()
    with statistics_reads():
        assert router.db_for_read(Question) is None
    assert router.db_for_write(Attempt) == "default"


def database_url() -> str:
    params = connection.settings_dict
    return f"postgres://{params['USER']}@{params['HOST']}:{params['PORT']}/{params['NAME']}"


def route_in_a_process(replica_url: str) -> list[str]:
    """Where a fresh process on the test database, with DATABASE_REPLICA_URL, sends reads in
    and out of statistics_reads(); a statistics query then runs where it was sent."""
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from config.routers import StatisticsReplicaRouter, statistics_reads;"
        "from exams.models import Attempt, Question; r = StatisticsReplicaRouter();"
        "outside = r.db_for_read(Attempt)\n"
        "with statistics_reads():\n"
        "    inside = r.db_for_read(Attempt); again = r.db_for_read(Question)\n"
        "    Question.objects.using(inside or 'default').count()\n"
        "print(outside, inside, again, r.db_for_write(Attempt))"
    )
    env = {**os.environ, "DATABASE_URL": database_url(), "DATABASE_REPLICA_URL": replica_url}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.postgres_only
@pytest.mark.django_db
def test_statistics_reads_go_to_the_replica_and_only_they():
    # The test database stands in for a streaming copy of the primary: the same rows.
    assert route_in_a_process(database_url()) == ["None", "replica", "replica", "default"]
    assert StatisticsReplicaRouter().allow_migrate("replica", "exams") is False


@pytest.mark.postgres_only
@pytest.mark.django_db
def test_a_replica_that_is_down_sends_statistics_to_the_primary_instead_of_failing():
    from tests.fault.cluster import free_port

    # Nothing listens there: the first statistics read finds out, and the next does not ask again.
    assert route_in_a_process(f"postgres://postgres@127.0.0.1:{free_port()}/certprep") == ["None", "None", "None", "default"]


@pytest.mark.postgres_only
@pytest.mark.django_db
def test_the_admins_item_statistics_read_the_replica():
    """The statistics the admin shows (the question list's columns, the question's panel, the
    exam's test statistics) are read inside statistics_reads(): on the replica, not the primary."""
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup();"
        "from django.contrib import admin; from django.db import connections;"
        "from django.test.utils import CaptureQueriesContext;"
        "from exams.models import Exam, Question\n"
        "with CaptureQueriesContext(connections['replica']) as replica, CaptureQueriesContext(connections['default']) as primary:\n"
        "    admin.site._registry[Question].statistics_panel(Question(pk=1))\n"
        "    admin.site._registry[Exam].test_statistics(Exam(pk=1))\n"
        "print(len(replica), len(primary))"
    )
    env = {**os.environ, "DATABASE_URL": database_url(), "DATABASE_REPLICA_URL": database_url()}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "0"]
