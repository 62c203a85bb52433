import pytest

from hotcache.services import hot_cache_clear_local
from tests.fixtures import fast_password_hasher
from tests.integration.harness import RedisServer

__all__ = ["fast_password_hasher"]


@pytest.fixture(autouse=True)
def empty_hot_cache():
    hot_cache_clear_local()
    yield
    hot_cache_clear_local()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer.find_or_start(tmp_path_factory.mktemp("redis"))
    if server is None:
        pytest.skip("no Redis on 127.0.0.1:6379 and no redis-server to start one")
    yield server
    server.stop()


@pytest.fixture
def hot_redis(redis_server, settings):
    """The hot cache in Redis (distributed mode), in a database of its own, empty."""
    redis_server.flush(11)
    settings.HOT_CACHE_REDIS_URL = redis_server.url(11)
    import redis

    client = redis.Redis.from_url(redis_server.url(11))
    yield client
    redis_server.flush(11)
