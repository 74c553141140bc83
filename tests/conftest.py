"""Personas and shared fixtures: a learner, another learner, an instructor; the NCA-GENM bank."""
import os

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from hypothesis import settings as hypothesis_settings

from exams.roles import instructors_group
from tests.factories import UserFactory

IMMEDIATE_TASKS = "django.tasks.backends.immediate.ImmediateBackend"
# A job's progress commits on the "jobs" connection while its transaction is open
# (PostgreSQL only): tests that run jobs use django_db(databases=JOB_DATABASES).
JOB_DATABASES = ["default", "jobs"] if "jobs" in django_settings.DATABASES else ["default"]
DATABASE_TASKS = "django_tasks_db.DatabaseBackend"


# Timing is not asserted anywhere; a loaded CI machine must not fail a property on speed.
# "certprep" is the suite's profile (make test); "fuzz" (make fuzz: HYPOTHESIS_PROFILE=fuzz)
# runs the fuzzer in tests/fuzz/ at ten times its example count.
hypothesis_settings.register_profile("certprep", deadline=None)
hypothesis_settings.register_profile("fuzz", parent=hypothesis_settings.get_profile("certprep"), max_examples=1000)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "certprep"))


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def use_tasks_backend(settings, backend: str) -> None:
    """Point django.tasks at another backend (its handler caches TASKS, so forget that too)."""
    from asgiref.local import Local
    from django.tasks import task_backends

    settings.TASKS = {"default": {"BACKEND": backend, "QUEUES": ["default"]}}
    task_backends.__dict__.pop("settings", None)
    task_backends._settings = None
    task_backends._connections = Local(task_backends.thread_critical)


@pytest.fixture(autouse=True)
def _immediate_tasks(settings):
    """Tasks run at once, in the test; tests of the real worker ask for database_tasks."""
    use_tasks_backend(settings, IMMEDIATE_TASKS)
    yield
    use_tasks_backend(settings, DATABASE_TASKS)
    if "jobs" in connections:
        # Else its session outlives the test database, which then cannot be dropped.
        connections["jobs"].close()


@pytest.fixture
def database_tasks(settings, _immediate_tasks):
    """Tasks stored in the database, for a real `manage.py worker` to run."""
    use_tasks_backend(settings, DATABASE_TASKS)


@pytest.fixture
def learner(db) -> User:
    return UserFactory(username="learner")


@pytest.fixture
def other_learner(db) -> User:
    return UserFactory(username="other")


@pytest.fixture
def instructor(db) -> User:
    user = UserFactory(username="teacher", is_staff=True)
    user.groups.add(instructors_group())
    return user


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner)
    return client


@pytest.fixture
def instructor_client(client, instructor):
    client.force_login(instructor)
    return client


@pytest.fixture
def nca_genm(db):
    """The shipped NCA-GENM bank, loaded the way make run loads it."""
    call_command("load_bank", verbosity=0)
    from exams.models import Exam

    return Exam.objects.get(code="NCA-GENM")
