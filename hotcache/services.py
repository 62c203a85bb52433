"""Seed 000 §6.2: each owner's pinned memories and recent context blocks, cached.

Entries live in Redis when there is one (HOT_CACHE_REDIS_URL, else REDIS_URL: shared by every
process) and in this process otherwise. An entry belongs to a version of the owner's memories: the
id of their newest HotCacheChange row. The event that pushes memory.changed (and a lifecycle run,
which changes strengths in bulk) inserts a row inside the writer's transaction, so once the change
commits every process reads a new version and misses; a reader that raced the commit stored its
entry under the old version, which nobody asks for again. Rows are only inserted (older ones are
pruned after the commit), so concurrent writers of one owner never wait on each other.
"""

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.db import transaction

from hotcache.models import HotCacheChange

logger = logging.getLogger(__name__)

# Events after which an owner's cached context may be wrong. memory.changed is on every write path
# of a memory; a lifecycle run decays and archives in set-based SQL and announces itself once.
INVALIDATING_EVENTS = frozenset({"memory.changed", "lifecycle.completed"})
KEY_PREFIX = "memsvc:hot"
_STATS_TTL_SECONDS = 30 * 24 * 3600
# At most this many owners' hit counters are kept in a process; the least recently used go first.
_STATS_OWNERS = 10_000

_lock = threading.Lock()
_entries: OrderedDict[tuple[int, int, str], tuple[float, object]] = OrderedDict()
_stats: OrderedDict[int, list[int]] = OrderedDict()
_clients: dict[str, object] = {}


def _redis_url() -> str:
    return settings.HOT_CACHE_REDIS_URL or settings.REDIS_URL


def _redis():
    url = _redis_url()
    if not url:
        return None
    client = _clients.get(url)
    if client is None:
        import redis

        # A context call never waits long on a Redis that is down: it is answered from the database.
        client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        _clients[url] = client
    return client


def owner_prefix(owner_id: int) -> str:
    # `owner:<id>:` is what erasure scans for (erasure.hooks.owner_key_patterns).
    return f"{KEY_PREFIX}:owner:{int(owner_id)}:"


def _version(owner_id: int) -> int:
    latest = HotCacheChange.objects.filter(owner_id=owner_id).order_by("-id").values_list("id", flat=True).first()
    if latest is None:
        # No version yet (a new owner, or one just erased): start one, so an entry is never
        # shared with whatever was cached under an earlier, deleted version.
        latest = HotCacheChange.objects.create(owner_id=owner_id).pk
    return latest


def _digest(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _count(owner_id: int, hit: bool, client) -> None:
    if client is not None:
        key = owner_prefix(owner_id) + "stats"
        try:
            with client.pipeline() as pipe:
                pipe.hincrby(key, "hits" if hit else "misses", 1)
                pipe.expire(key, _STATS_TTL_SECONDS)
                pipe.execute()
            return
        except Exception:
            logger.warning("hot cache: could not count a lookup in Redis", exc_info=True)
    with _lock:
        counts = _stats.setdefault(owner_id, [0, 0])
        counts[0 if hit else 1] += 1
        _stats.move_to_end(owner_id)
        while len(_stats) > _STATS_OWNERS:
            _stats.popitem(last=False)


def _read(client, owner_id: int, version: int, digest: str):
    if client is not None:
        raw = client.get(f"{owner_prefix(owner_id)}v{version}:{digest}")
        return None if raw is None else json.loads(raw)
    with _lock:
        found = _entries.get((owner_id, version, digest))
        if found is None:
            return None
        deadline, value = found
        if deadline <= time.monotonic():
            del _entries[(owner_id, version, digest)]
            return None
        _entries.move_to_end((owner_id, version, digest))
        return value


def _write(client, owner_id: int, version: int, digest: str, value) -> None:
    ttl = settings.HOT_CACHE_TTL_SECONDS
    if client is not None:
        client.set(f"{owner_prefix(owner_id)}v{version}:{digest}", json.dumps(value), ex=ttl)
        return
    with _lock:
        _entries[(owner_id, version, digest)] = (time.monotonic() + ttl, value)
        _entries.move_to_end((owner_id, version, digest))
        while len(_entries) > settings.HOT_CACHE_MAX_ENTRIES:
            _entries.popitem(last=False)


def hot_cache_get(*, owner_id: int, parts: dict, compute: Callable[[], dict]) -> tuple[dict, bool]:
    """(value, hit): the owner's cached value for `parts`, or `compute()` stored for next time.

    `compute` returns a JSON-ready dict; its optional "valid_until" (epoch seconds) ends the entry
    early (a memory that expires). Redis failing means a database answer, never an error.
    """
    if not settings.HOT_CACHE_ENABLED:
        return compute(), False
    owner_id = int(owner_id)
    version = _version(owner_id)
    digest = _digest(parts)
    client = _redis()
    try:
        value = _read(client, owner_id, version, digest)
    except Exception:
        logger.warning("hot cache: Redis read failed; answering from the database", exc_info=True)
        value, client = None, None
    if value is not None and (value.get("valid_until") is None or value["valid_until"] > time.time()):
        _count(owner_id, True, client)
        return value, True
    value = compute()
    _count(owner_id, False, client)
    try:
        _write(client, owner_id, version, digest, value)
    except Exception:
        logger.warning("hot cache: Redis write failed", exc_info=True)
    return value, False


def hot_cache_invalidate(*, owner_id: int) -> None:
    """A new version of the owner's memories, inside the caller's transaction (visible at its commit)."""
    owner_id = int(owner_id)
    latest = HotCacheChange.objects.create(owner_id=owner_id).pk

    def prune():
        try:
            HotCacheChange.objects.filter(owner_id=owner_id, id__lt=latest)._raw_delete("default")
        except Exception:
            logger.warning("hot cache: could not prune the versions of owner %s", owner_id, exc_info=True)
        _forget_local(owner_id)

    transaction.on_commit(prune)


def hot_cache_event_listener(*, owner_id, type: str, data: dict) -> None:
    if type in INVALIDATING_EVENTS:
        hot_cache_invalidate(owner_id=owner_id)


def _forget_local(owner_id: int) -> None:
    with _lock:
        for key in [k for k in _entries if k[0] == owner_id]:
            del _entries[key]


def hot_cache_stats(*, owner_id: int) -> dict:
    """This owner's context lookups served from the cache (never anyone else's)."""
    owner_id = int(owner_id)
    client = _redis()
    hits = misses = 0
    if client is not None:
        try:
            raw = client.hgetall(owner_prefix(owner_id) + "stats")
            hits, misses = int(raw.get(b"hits", 0)), int(raw.get(b"misses", 0))
        except Exception:
            logger.warning("hot cache: could not read the counters from Redis", exc_info=True)
    # Lookups made while Redis was down were counted here.
    with _lock:
        local = _stats.get(owner_id, [0, 0])
        hits, misses = hits + local[0], misses + local[1]
    total = hits + misses
    return {
        "store": "redis" if client is not None else "process",
        "hits": hits,
        "misses": misses,
        "hit_rate": round(hits / total, 4) if total else None,
    }


def hot_cache_erasure_hook(*, context) -> None:
    """Erasing part of an owner (an agent, a memory) leaves their versions: start a new one. A whole
    owner's versions go with their rows, their Redis keys with the erasure's scan of `owner:<id>:`."""
    if context.plan.partial:
        hot_cache_invalidate(owner_id=context.owner_id)
    owner_id = int(context.owner_id)

    def forget():
        _forget_local(owner_id)
        with _lock:
            _stats.pop(owner_id, None)

    context.after_commit(forget)


def hot_cache_clear_local() -> None:
    """Forget this process's entries and counters (tests)."""
    with _lock:
        _entries.clear()
        _stats.clear()
