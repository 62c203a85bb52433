import pytest
from rest_framework.test import APIClient

from integrations.services.webhook_scheduler import webhook_scheduler_close
from memories.selectors.search.workers import search_workers_close
from memories.services.embeddings import embedding_cache_clear_local
from memory_project.background import background_close, background_drain
from memory_project.batching import batch_buffers_discard
from memory_project.pg_layer import channel_layers_close
from tests.factories import UserFactory, api_key_for


@pytest.fixture(scope="session", autouse=True)
def search_worker_connections(django_db_setup, django_db_blocker):
    """The BM25 threads of searches outside a transaction, the in-process background thread and the
    channel layer keep their connections; they are closed before the test database is dropped."""
    yield
    with django_db_blocker.unblock():
        search_workers_close()
        background_close()
        webhook_scheduler_close()
        channel_layers_close()


@pytest.fixture(autouse=True)
def background_work_finished():
    """What a test left on the in-process background thread (a turn-vector fill after its commit)
    finishes before the database is emptied for the next test: a fill still reading the turns held
    locks that the flush's TRUNCATE deadlocked with. (For a test marked `django_db`, as every
    transactional test here is, pytest-django sets the database up before this fixture and tears it
    down after; a test that takes `db` as an argument gets it the other way round, which is harmless
    there: its rows are never committed, so no other connection reads them.)

    What a test left in the write buffers (access log, request statistics, access counts) is dropped
    with its rows: left to the buffer's timer, it was sent during the next test's setup, where the
    database is blocked, and its task's retries outlasted that test's drain (a TimeoutError in CI)."""
    yield
    batch_buffers_discard()
    background_drain()


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    """Rate-limit counters live in the process (no Redis): each test starts with none."""
    from django.core.cache import caches

    caches["throttle"].clear()
    yield
    caches["throttle"].clear()


@pytest.fixture(autouse=True)
def access_counts_sent_per_search(settings):
    """Each search's access counts go to the background at once (as tests read them after a drain);
    tests/memories/services/test_access.py covers the batching."""
    settings.ACCESS_COUNT_FLUSH_SEARCHES = 1


@pytest.fixture(autouse=True)
def quick_password_hashing(settings):
    """Speed only: PBKDF2 made every UserFactory call cost half a second. Tests whose users log in
    to a server subprocess hash with PBKDF2 themselves (tests/dashboard/test_browser.py)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def hashing_embedder(settings):
    """Tests embed with the deterministic hashing provider unless they ask for the local model."""
    settings.EMBEDDING_PROVIDER = "hashing"
    embedding_cache_clear_local()
    yield
    embedding_cache_clear_local()


@pytest.fixture(autouse=True)
def attachment_dir(settings, tmp_path):
    """Attachment files go to the test's own folder, not the checkout's data folder."""
    folder = tmp_path / "attachments"
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(folder)}},
    }
    return folder


@pytest.fixture
def local_embedder(settings):
    """The real offline model (all-MiniLM-L6-v2), for tests about meaning rather than words."""
    settings.EMBEDDING_PROVIDER = "local"
    embedding_cache_clear_local()
    yield
    embedding_cache_clear_local()


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def other_user(db):
    return UserFactory(username="bob")


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_for(user)}")
    return client


@pytest.fixture
def api(user):
    return client_for(user)


@pytest.fixture
def other_api(other_user):
    return client_for(other_user)
