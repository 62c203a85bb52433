"""Search and context recall as an agent uses them: the read-only selectors (memory_search,
context_recall) with what such a use records around them: the memories returned count as used,
the search's latency is observed, and the owner's BM25 statistics are refreshed when the search
found them missing or old. Given `served_as` (the access log's kind: "search", "context", "tool"),
what was handed out is announced through memories.signals.memories_served."""

from memories.selectors.context import context_recall
from memories.selectors.retrieval import memory_search
from memories.services.access import memory_access_record
from memories.services.metrics import metric_observe
from memories.services.search_stats import search_stats_request
from memories.signals import memories_served


def memory_search_run(*, owner, query: str, served_as: str | None = None, **options) -> dict:
    """memory_search (options as there) for an agent, recorded; returns {results, took_ms}."""
    found = memory_search(owner=owner, query=query, **options)
    if served_as:
        _served(owner.pk, served_as, query, options.get("agent"), found["results"])
    _search_record(owner_id=owner.pk, found=found)
    memory_ids = [r["id"] for r in found["results"] if r["type"] == "memory"]
    if memory_ids:
        memory_access_record(memory_ids=memory_ids)
    return {"results": found["results"], "took_ms": found["took_ms"]}


def context_deliver(*, owner, served_as: str | None = None, **options) -> dict:
    """The context block handed to an agent (options as context_recall): the recalled memories count
    as used, also when the block's memories came from the hot cache."""
    block, recall = context_recall(owner=owner, **options)
    if recall["search"] is not None:
        _search_record(owner_id=owner.pk, found=recall["search"])
    if recall["searched"]:
        memory_access_record(memory_ids=recall["searched"])
    if served_as:
        _served(owner.pk, served_as, options.get("query") or "", options.get("agent"), block["memories"])
    return block


def _served(owner_id: int, kind: str, query: str, agent: str | None, results: list[dict]) -> None:
    memories_served.send(sender=None, owner_id=owner_id, kind=kind, query=query, agent=agent, results=results)


def _search_record(*, owner_id: int, found: dict) -> None:
    for corpus in found["stale_corpora"]:
        search_stats_request(owner_id=owner_id, corpus=corpus)
    metric_observe(name="search_ms", value=found["took_ms"], owner_id=owner_id)
