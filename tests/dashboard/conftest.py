import os

import pytest
from django.test import Client

from tests.factories import UserFactory
from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]

PASSWORD = "pw-for-tests"


@pytest.fixture
def alice(db):
    return UserFactory(username="alice")


@pytest.fixture
def bob(db):
    return UserFactory(username="bob")


@pytest.fixture
def staff(db):
    return UserFactory(username="root", is_staff=True)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice):
    return logged_in(alice)


@pytest.fixture
def bob_client(bob):
    return logged_in(bob)


@pytest.fixture
def staff_client(staff):
    return logged_in(staff)


# --- the browser tests' server and browser (one of each per test module) ---------------------------


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory):
    from tests.dashboard.browser import BUNDLE, AsgiServer

    if not BUNDLE.exists():
        pytest.fail("frontend/dist is missing: run `make frontend` (npm ci && npm run build in frontend/)")
    with django_db_blocker.unblock():
        asgi = AsgiServer(tmp_path_factory.mktemp("daphne") / "daphne.log")
        try:
            asgi.wait_ready()
            yield asgi
        finally:
            asgi.stop()
    assert "Traceback" not in asgi.log(), asgi.log()[-4000:]


@pytest.fixture(scope="module")
def browser():
    from tests.dashboard.browser import CHROMIUM, CHROMIUM_ARGS

    playwright_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (scripts/install-system.sh does)")
    # Playwright's sync API keeps an event loop running in this thread, which Django would take for
    # an async context; the ORM calls the tests make here are plain synchronous ones.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    manager = playwright_api.sync_playwright().start()
    chromium = manager.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield chromium
    finally:
        chromium.close()
        manager.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
