"""Fault-injection fixtures: a private PostgreSQL cluster, real gunicorn servers, seeded learners and exams."""
import itertools
import os

import pytest

from tests.fault.cluster import ThrowawayCluster
from tests.fault.learner import Learner
from tests.fault.servers import Gunicorn, app_environment, run_manage, run_snippet

PASSWORD = "correct-horse-battery-fault"
LEARNERS = [f"learner{n}" for n in range(1, 21)]


@pytest.fixture(scope="session")
def cluster():
    """A PostgreSQL cluster of our own on a free port, migrated, with learners; removed at the end."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("fault tests restart servers and kill workers: run them alone, with -p no:xdist")
    cluster = ThrowawayCluster()
    try:
        cluster.create()
        cluster.start()
        env = app_environment(cluster)
        run_manage(env, "migrate", "--noinput")
        # One password hash for everyone: the production hasher costs seconds per user.
        run_snippet(env, f"""
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from accounts.models import Profile
hashed = make_password({PASSWORD!r})
for name in {LEARNERS!r}:
    Profile.objects.for_user(User.objects.create(username=name, email=name + "@example.com", password=hashed))
emit(len({LEARNERS!r}))
""")
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture(scope="session")
def app_env(cluster) -> dict[str, str]:
    return app_environment(cluster)


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fault-logs")


@pytest.fixture
def start_gunicorn(app_env, log_dir, request):
    """Start gunicorn servers for this test (2 sync workers unless asked); all stopped after it."""
    servers: list[Gunicorn] = []
    names = itertools.count(1)

    def start(*, workers: int = 2, threads: int = 1) -> Gunicorn:
        name = f"{request.node.name}-{next(names)}"
        server = Gunicorn(env=app_env, log_dir=log_dir, name=name, workers=workers, threads=threads)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        # Shown by pytest only when the test failed.
        print(f"--- {server.log_path.name} (tail) ---\n{server.log_tail()}")
        server.stop()


_exam_numbers = itertools.count(1)


@pytest.fixture
def new_exam(app_env):
    """Seed a published exam whose 10 questions (two domains of 5, key A) all go into every mock."""

    def create(**fields) -> str:
        code = f"FAULT-{next(_exam_numbers)}"
        fields = {"weights": (50, 50), "per_domain": 5, "question_count": 10, "time_limit_minutes": 60, **fields}
        return run_snippet(app_env, f"""
from tests.factories import exam_with_bank
emit(exam_with_bank(code={code!r}, **{fields!r}).code)
""")

    return create


@pytest.fixture
def sessions_for(app_env):
    """Signed-in sessions made directly in the database, as Client.force_login does.

    For crowds of learners: a real login costs a production password hash each.
    """

    def create(usernames: list[str]) -> dict[str, str]:
        return run_snippet(app_env, f"""
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
keys = {{}}
for user in User.objects.filter(username__in={usernames!r}):
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "accounts.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    keys[user.username] = session.session_key
emit(keys)
""")

    return create


@pytest.fixture
def log_in():
    """A learner signed in through the login form of `server`."""

    def sign_in(server: Gunicorn, username: str) -> Learner:
        learner = Learner(server.url)
        learner.log_in(username, PASSWORD)
        return learner

    return sign_in
