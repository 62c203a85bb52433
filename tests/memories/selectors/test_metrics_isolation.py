"""Issue 12, finding 1: one owner's metrics and caches reveal nothing about another owner."""

import pytest

from memories.drafts import MemoryDraft
from memories.services import embeddings
from memories.services.decisions import memory_write

SECRET = "User's bank PIN is 9911"


class CountingEmbedder:
    """The hashing embedder, counting the texts it is asked to compute (what a cache hit skips)."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.computed = inner, inner.name, inner.dim, []

    def embed(self, texts):
        self.computed += texts
        return self.inner.embed(texts)


@pytest.fixture
def counting(monkeypatch):
    embedder = CountingEmbedder(embeddings.get_embedder())
    # Stored and query vectors alike (with the hashing provider both are the same embedder).
    monkeypatch.setattr(embeddings, "get_embedder", lambda query=False: embedder)
    return embedder


def test_a_guess_of_another_owners_memory_is_not_a_cache_hit(user, other_user, api, other_api, counting):
    # given Alice's memory, embedded (and cached) when she wrote it
    memory_write(owner=user, draft=MemoryDraft(content=SECRET), actor="alice")
    before = other_api.get("/api/v1/metrics/").json()["embedding_cache"]

    # when Bob searches for the exact text as a guess
    assert other_api.post("/api/v1/search/", {"query": SECRET}, format="json").status_code == 200

    # then his search computed the embedding itself (no time saved by Alice's entry) and his metrics
    # count one miss, no hit
    assert counting.computed.count(SECRET) == 2
    after = other_api.get("/api/v1/metrics/").json()["embedding_cache"]
    assert (before["hits"], before["misses"]) == (0, 0)
    assert (after["hits"], after["misses"], after["hit_rate"]) == (0, 1, 0.0)


def test_an_owners_metrics_count_only_their_own_searches_and_cache_use(user, other_user, api, other_api):
    # given Alice searching three times and writing a memory
    memory_write(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="alice")
    for _ in range(3):
        api.post("/api/v1/search/", {"query": "green tea"}, format="json")

    # when Bob reads his metrics
    bob = other_api.get("/api/v1/metrics/").json()
    alice = api.get("/api/v1/metrics/").json()

    # then none of Alice's figures are in Bob's
    assert bob["retrieval_latency_ms"] == {"count": 0, "p50": None, "p95": None, "p99": None}
    assert bob["embedding_cache"] == {"hits": 0, "misses": 0, "hit_rate": None}
    # and Alice's are hers: three searches, one miss then two hits for the query, one miss for the write
    assert alice["retrieval_latency_ms"]["count"] == 3
    assert (alice["embedding_cache"]["hits"], alice["embedding_cache"]["misses"]) == (2, 2)
