"""Personas and shared fixtures: a learner, another learner, an instructor; the NCA-GENM bank."""
import os

import pytest
from hypothesis import settings as hypothesis_settings
from django.contrib.auth.models import User
from django.core.management import call_command

from exams.roles import instructors_group
from tests.factories import UserFactory


# Timing is not asserted anywhere; a loaded CI machine must not fail a property on speed.
# "certprep" is the suite's profile (make test); "fuzz" (make fuzz: HYPOTHESIS_PROFILE=fuzz)
# runs the fuzzer in tests/fuzz/ at ten times its example count.
hypothesis_settings.register_profile("certprep", deadline=None)
hypothesis_settings.register_profile("fuzz", parent=hypothesis_settings.get_profile("certprep"), max_examples=1000)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "certprep"))


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
