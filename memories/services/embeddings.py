"""Embeddings through the content-hash cache: in-process LRU first, then the EmbeddingCache table.

The cache is scoped by owner: the key hashes the owner's id with the model and the text. A cache
shared by all owners was a side channel (issue 12): whether another owner had embedded a text showed
in the hit counters of /api/v1/metrics/ and in the time a search took (a hit skips the model), so
anyone could confirm a guess such as "User's bank PIN is 9911". Keeping it global and hiding the
counters would not close the timing difference, and padding every miss to a hit's time is not
possible (a hit must skip the model to be worth having). Scoping it costs one extra embedding when
two owners store the same text, which is rare for personal memories. Hit and miss counts are kept
per owner as well.
"""

import hashlib
import math
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import transaction

from memories.models import EmbeddingCache
from memories.providers.embeddings import get_embedder
from memory_project.text import normalize

_LRU_SIZE = 4096
_lru: OrderedDict[str, list[float]] = OrderedDict()
_lru_lock = threading.Lock()
# owner id → [hits, misses] in this process; the least recently counted owners are dropped first.
_STATS_OWNERS = 10_000
_stats: OrderedDict[int, list[int]] = OrderedDict()


def _owner_id(owner) -> int:
    return int(getattr(owner, "pk", owner))


def _key(model: str, owner_id: int, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{owner_id}\x00{text}".encode()).hexdigest()


def embedding_cache_keys(*, owner_id: int, texts, models: list[str]) -> list[str]:
    """The cache keys of `texts` for this owner under each of `models`."""
    return [_key(model, owner_id, text) for model in models for text in texts]


def embedding_cache_forget_local(*, keys: list[str]) -> None:
    """Drop these keys from this process's copies (their rows are gone)."""
    with _lru_lock:
        for key in keys:
            _lru.pop(key, None)


def embedding_get_many(*, owner, texts: list[str], query: bool = False) -> list[list[float]]:
    """Embed `texts` for `owner` (a user or its id), reusing that owner's cached vectors; new vectors
    are stored for the owner's next call.

    Search queries (query=True) are embedded by the query embedder (`get_embedder(query=True)`) and
    only the in-process cache is used, not the table: a query is rarely asked twice across
    processes, and a row per distinct query would grow without bound while costing every search a
    read and a write.
    """
    if not texts:
        return []
    owner_id = _owner_id(owner)
    embedder = get_embedder(query=query)
    persist = not query
    cleaned = [normalize(t) for t in texts]
    keys = [_key(embedder.name, owner_id, t) for t in cleaned]
    found: dict[str, list[float]] = {}
    with _lru_lock:
        for key in keys:
            if key in _lru:
                _lru.move_to_end(key)
                found[key] = _lru[key]
    missing = [k for k in dict.fromkeys(keys) if k not in found]
    if missing and persist:
        rows = EmbeddingCache.objects.filter(owner_id=owner_id, key__in=missing).values_list("key", "vector")
        for key, vector in rows:
            found[key] = list(vector)
    to_compute = [k for k in dict.fromkeys(keys) if k not in found]
    if to_compute:
        text_of = dict(zip(keys, cleaned))
        vectors = embedder.embed([text_of[k] for k in to_compute])
        if persist:
            # In key order: two fills storing some of the same keys then wait on each other in one
            # direction only, never in a cycle (a deadlock under concurrent turn-vector fills).
            EmbeddingCache.objects.bulk_create(
                [
                    EmbeddingCache(key=k, owner_id=owner_id, model=embedder.name, vector=v)
                    for k, v in sorted(zip(to_compute, vectors), key=lambda pair: pair[0])
                ],
                ignore_conflicts=True,
            )
        found.update(zip(to_compute, vectors))
    with _lru_lock:
        counts = _stats.setdefault(owner_id, [0, 0])
        _stats.move_to_end(owner_id)
        counts[0] += len(keys) - len(to_compute)
        counts[1] += len(to_compute)
        while len(_stats) > _STATS_OWNERS:
            _stats.popitem(last=False)
    stored = set(to_compute) if persist else set()
    _lru_put({k: found[k] for k in keys if k not in stored})
    if stored:
        # A vector stored inside a transaction is kept in memory only once the row is committed: a
        # rollback (a deadlock the caller retries) must not leave a copy that stops it being stored.
        fresh = {k: found[k] for k in stored}
        transaction.on_commit(lambda: _lru_put(fresh))
    return [found[k] for k in keys]


def _lru_put(vectors: dict[str, list[float]]) -> None:
    with _lru_lock:
        for key, vector in vectors.items():
            _lru[key] = vector
            _lru.move_to_end(key)
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)


def embedding_get(*, owner, text: str, query: bool = False) -> list[float]:
    return embedding_get_many(owner=owner, texts=[text], query=query)[0]


def embedding_cache_stats(*, owner) -> dict:
    """This owner's cache hits and misses in this process (never anyone else's)."""
    with _lru_lock:
        hits, misses = _stats.get(_owner_id(owner), (0, 0))
    return {"hits": hits, "misses": misses, "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None}


def embedding_cache_clear_local() -> None:
    """Forget the in-process copies (used when the provider changes, e.g. between tests)."""
    with _lru_lock:
        _lru.clear()
        _stats.clear()


# Query vectors computed beside the caller's first statements (memory_search): the model runs outside
# the GIL, on its own thread, while the caller waits on the database.
_query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")


def _new_query_pool_after_fork() -> None:
    global _query_pool
    _query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")


os.register_at_fork(after_in_child=_new_query_pool_after_fork)


def embedding_get_soon(*, owner, texts: list[str]) -> Future:
    """A search query's vectors for `owner`, one per text (`query=True`), computed in one call of the
    model on another thread while the caller goes on."""
    return _query_pool.submit(embedding_get_many, owner=owner, texts=texts, query=True)


def vector_mean_direction(vectors: list[list[float]]) -> list[float]:
    """The unit vector along the sum of the given embeddings (unit vectors, as every provider returns
    them): cosine similarity to it weighs each of them alike."""
    if len(vectors) == 1:
        return vectors[0]
    total = [sum(values) for values in zip(*vectors)]
    norm = math.sqrt(sum(t * t for t in total)) or 1.0
    return [t / norm for t in total]
