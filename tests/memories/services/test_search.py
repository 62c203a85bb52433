"""memory_search_run and context_deliver: the read-only selectors, recorded as an agent's use."""

import pytest

from memories.models import Memory, SearchCorpus, SearchStats
from memories.selectors.metrics import metrics_get
from memories.services.search import context_deliver, memory_search_run
from memory_project.background import background_drain
from tests.factories import MemoryFactory

# The access counts and statistics are written off the query path, on their own connection.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_stats_requests")]


def _access_counts(owner) -> dict[str, int]:
    return dict(Memory.objects.filter(owner=owner).values_list("content", "access_count"))


def test_a_search_counts_its_memories_as_used_and_observes_its_latency(user):
    # given two memories, one matching the query
    MemoryFactory(owner=user, content="Drinks green tea every morning")
    MemoryFactory(owner=user, content="Owns a red bicycle")

    # when the service searches for the tea
    found = memory_search_run(owner=user, query="green tea", top_k=1)
    background_drain()

    # then the one returned counted as used, the latency was observed, and no internals leak out
    assert [r["content"] for r in found["results"]] == ["Drinks green tea every morning"]
    assert set(found) == {"results", "took_ms"}
    assert _access_counts(user) == {"Drinks green tea every morning": 1, "Owns a red bicycle": 0}
    assert metrics_get(owner=user)["retrieval_latency_ms"]["count"] == 1


def test_a_search_asks_for_the_statistics_the_selector_found_missing(user, settings):
    # given a collection past the match budget without stored statistics
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "LEXICAL_MATCH_BUDGET": 2}
    for content in ("kiwi smoothie", "kiwi tart", "mango lassi"):
        MemoryFactory(owner=user, content=content)

    # when the service searches
    memory_search_run(owner=user, query="kiwi")
    background_drain()

    # then the statistics were counted off the query path
    assert SearchStats.objects.get(owner=user, corpus=SearchCorpus.MEMORY).documents == 3


def test_a_delivered_context_counts_its_recalled_memories_as_used(user):
    # given a weak memory (never pinned) that a query recalls
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.3)

    # when the context is delivered twice for that query (the second from the hot cache)
    first = context_deliver(owner=user, query="green tea")
    second = context_deliver(owner=user, query="green tea")
    background_drain()

    # then both deliveries counted it, and only the search that ran was observed
    assert [m["content"] for m in first["memories"]] == ["Drinks green tea every morning"]
    assert (first["cached"], second["cached"]) == (False, True)
    assert _access_counts(user) == {"Drinks green tea every morning": 2}
    assert metrics_get(owner=user)["retrieval_latency_ms"]["count"] == 1
