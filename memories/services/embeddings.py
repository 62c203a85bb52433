"""Embeddings through the content-hash cache: in-process LRU first, then the EmbeddingCache table."""

import hashlib
import threading
from collections import OrderedDict

from memories.models import EmbeddingCache
from memories.providers.embeddings import get_embedder
from memories.text import normalize

_LRU_SIZE = 4096
_lru: OrderedDict[str, list[float]] = OrderedDict()
_lru_lock = threading.Lock()
stats = {"hits": 0, "misses": 0}


def _key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


def embedding_get_many(*, texts: list[str], persist: bool = True) -> list[list[float]]:
    """Embed `texts`, reusing cached vectors; new vectors are stored for the next caller.

    With persist=False (search queries) only the in-process cache is used, not the table: a query
    is rarely asked twice across processes, and a row per distinct query would grow without bound
    while costing every search a read and a write.
    """
    if not texts:
        return []
    embedder = get_embedder()
    cleaned = [normalize(t) for t in texts]
    keys = [_key(embedder.name, t) for t in cleaned]
    found: dict[str, list[float]] = {}
    with _lru_lock:
        for key in keys:
            if key in _lru:
                _lru.move_to_end(key)
                found[key] = _lru[key]
    missing = [k for k in dict.fromkeys(keys) if k not in found]
    if missing and persist:
        for row in EmbeddingCache.objects.filter(key__in=missing).values_list("key", "vector"):
            found[row[0]] = list(row[1])
    to_compute = [k for k in dict.fromkeys(keys) if k not in found]
    if to_compute:
        text_of = dict(zip(keys, cleaned))
        vectors = embedder.embed([text_of[k] for k in to_compute])
        if persist:
            EmbeddingCache.objects.bulk_create(
                [EmbeddingCache(key=k, model=embedder.name, vector=v) for k, v in zip(to_compute, vectors)],
                ignore_conflicts=True,
            )
        found.update(zip(to_compute, vectors))
    with _lru_lock:
        stats["hits"] += len(keys) - len(to_compute)
        stats["misses"] += len(to_compute)
        for key in keys:
            _lru[key] = found[key]
            _lru.move_to_end(key)
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)
    return [found[k] for k in keys]


def embedding_get(*, text: str, persist: bool = True) -> list[float]:
    return embedding_get_many(texts=[text], persist=persist)[0]


def embedding_cache_clear_local() -> None:
    """Forget the in-process copies (used when the provider changes, e.g. between tests)."""
    with _lru_lock:
        _lru.clear()
