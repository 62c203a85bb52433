"""The hot cache in Redis (distributed mode): shared entries and counters, erased with the owner."""

from hotcache.services import hot_cache_clear_local, owner_prefix
from tests.factories import MemoryFactory


def _context(api, params=None) -> dict:
    response = api.get("/api/v1/context/", params or {"query": "tea"})
    assert response.status_code == 200, response.content
    return response.json()


def test_entries_and_counters_live_in_redis_under_the_owner(api, user, other_user, hot_redis):
    # given Alice's context asked for twice
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)
    first = _context(api)
    # (another process has none of this process's copies)
    hot_cache_clear_local()
    second = _context(api)

    # then the second was served from Redis, and every key is under Alice's prefix
    assert (first["cached"], second["cached"]) == (False, True)
    keys = sorted(k.decode() for k in hot_redis.scan_iter("*"))
    assert len(keys) == 2
    assert all(k.startswith(owner_prefix(user.pk)) for k in keys)
    assert hot_redis.hgetall(owner_prefix(user.pk) + "stats") == {b"hits": b"1", b"misses": b"1"}
    assert api.get("/api/v1/metrics/").json()["context_cache"] == {
        "store": "redis",
        "hits": 1,
        "misses": 1,
        "hit_rate": 0.5,
    }
    # and no memory text is in a key name or in another owner's keys
    assert not any("tea" in k for k in keys)
    assert list(hot_redis.scan_iter(f"*owner:{other_user.pk}:*")) == []


def test_a_change_reaches_every_process_through_the_version(api, user, hot_redis):
    # given a cached context
    memory = MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)
    _context(api)
    assert _context(api)["cached"] is True

    # when the memory is forgotten
    assert api.delete(f"/api/v1/memories/{memory.pk}/").status_code == 204

    # then the next call misses (a new version), without the memory
    after = _context(api)
    assert (after["cached"], after["memories"]) == (False, [])


def test_erasure_removes_the_owners_keys(
    api, user, other_api, other_user, hot_redis, django_capture_on_commit_callbacks
):
    # given Alice's and Bob's cached contexts
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)
    MemoryFactory(owner=other_user, content="Drinks coffee", strength=0.9)
    _context(api)
    _context(other_api)
    bob_keys = sorted(hot_redis.scan_iter(f"*owner:{other_user.pk}:*"))
    assert len(bob_keys) == 2

    # when Alice erases her data
    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(f"/api/v1/data/?confirm={user.username}")
    assert response.status_code == 200, response.content

    # then none of her keys is left, the receipt counts them, and Bob's are untouched
    assert list(hot_redis.scan_iter(f"*owner:{user.pk}:*")) == []
    assert response.json()["counts"]["redis_keys"] == 2
    assert sorted(hot_redis.scan_iter(f"*owner:{other_user.pk}:*")) == bob_keys


def test_a_redis_that_is_down_means_answers_from_the_database(api, user, settings):
    # given a hot cache pointed at a Redis that does not answer
    settings.HOT_CACHE_REDIS_URL = "redis://127.0.0.1:1/0"
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)

    # when the context is asked for
    body = _context(api)

    # then it is built from the tables
    assert body["cached"] is False
    assert [m["content"] for m in body["memories"]] == ["Drinks green tea every morning"]
