"""Fixtures for the API campaign, re-exported by the conftest.py of each test folder that uses them."""

import pytest

from memories.services.turn_embeddings import turn_embeddings_overdue_reset
from memories.tasks import extraction_job_run
from memory_project.background import background_process_attach
from tests.conftest import client_for
from tests.factories import UserFactory


@pytest.fixture
def staff_user(db):
    return UserFactory(username="root", is_staff=True)


@pytest.fixture
def staff_api(staff_user):
    return client_for(staff_user)


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """Speed only, no behaviour of the API changes.

    Factories hash a password for every user (PBKDF2: half a second each), and every new test
    client builds WhiteNoise, which scans all static files up front unless it looks them up on
    demand (autorefresh), which serves the same files.
    """
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.WHITENOISE_AUTOREFRESH = True


@pytest.fixture
def dispatched(monkeypatch):
    """Job ids handed to the extraction task, instead of running it (the extractor is tested elsewhere)."""
    calls = []
    monkeypatch.setattr(extraction_job_run, "delay", lambda job_id: calls.append(job_id))
    return calls


@pytest.fixture
def attached():
    """This process is a web worker of a server with a background process."""
    background_process_attach()
    turn_embeddings_overdue_reset()  # a check cached by an earlier test would answer for this one
    yield
    background_process_attach(False)
