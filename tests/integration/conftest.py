import pytest

from tests.fixtures import fast_password_hasher
from tests.integration.harness import RedisServer

__all__ = ["fast_password_hasher"]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer.find_or_start(tmp_path_factory.mktemp("redis"))
    if server is None:
        pytest.skip("no Redis on 127.0.0.1:6379 and no redis-server to start one")
    yield server
    server.stop()


@pytest.fixture
def log_dir(tmp_path):
    return tmp_path


@pytest.fixture
def procs(log_dir):
    """Processes a test starts, stopped (and their logs kept for the report) however it ends."""
    started = []
    yield started
    for proc in reversed(started):
        proc.stop()
