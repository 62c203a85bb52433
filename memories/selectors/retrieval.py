"""Hybrid retrieval over memories and turns (reads only: memories.services.search records access,
metrics and statistics refreshes around it).

Candidates come from pgvector (HNSW, cosine; exact for small owners) and BM25 over the postings
of memories.SearchPosting, fused by score (or reciprocal rank fusion, a setting); the fused
relevance is then weighted with importance and recency (DESIGN §4):
score = w_rel × relevance + w_imp × importance + w_rec × recency, with the memory's strength as a
soft bias so archived memories are still found but rank lower. Forgotten, rejected and expired
memories never come back. The parts live in memories.selectors.search.
"""

import math
import time
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.selectors.search.collection import owner_speakers, query_terms, source_build
from memories.selectors.search.fusion import Candidate, candidates_merge, candidates_rank
from memories.selectors.search.lexical import lexical_statement
from memories.selectors.search.questions import without_speakers
from memories.selectors.search.statements import (
    fetch_rows,
    from_epoch_us,
    memory_filters,
    turn_filters,
    vector_literal,
)
from memories.selectors.search.vector import source_turns, turn_neighbours, vector_rows
from memories.selectors.search.workers import lexical_submit
from memories.selectors.supersession import current_first
from memories.services.embeddings import embedding_get_soon, vector_mean_direction
from memory_project.postgresql.prepared import prepared_cursor

SCOPES = ("memories", "turns", "all")


def memory_search(
    *,
    owner,
    query: str,
    top_k: int = 10,
    scope: str = "memories",
    categories: list[str] | None = None,
    include_archived: bool = True,
    agent: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    group_ids: list | None = None,
    use_decay: bool = True,
) -> dict:
    """Rank the owner's memories and/or turns for `query`.

    Returns {results, took_ms, stale_corpora}: the last names the corpora whose stored BM25
    statistics want a refresh (memories.services.search.memory_search_run asks for it).
    """
    started = time.perf_counter()
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}")
    with_turns = scope in ("turns", "all") and not categories and group_ids is None
    # A question about a person names them, the turns it is answered by do not (their speaker is a
    # field of its own, which ranking weighs): over turns, the full text is searched without the
    # speakers' names, and the query vector is the mean of the question's with and without them.
    nameless = without_speakers(query, owner_speakers(owner_id=owner.pk)) if with_turns else query
    texts = [query, nameless] if nameless and nameless != query else [query]
    # The query's vectors are computed while the first statements (query terms, statistics) run.
    query_vectors = embedding_get_soon(owner=owner, texts=texts)
    cfg = settings.MEMORY_RETRIEVAL
    # Each source contributes a pool that grows with the results asked for, up to CANDIDATES.
    limit = max(top_k * 2, min(cfg["CANDIDATES"], max(cfg["CANDIDATES_MIN"], cfg["CANDIDATES_PER_RESULT"] * top_k)))
    now = timezone.now()
    candidates: list[Candidate] = []
    # Inside a caller's transaction the search must see that transaction's own writes, so it runs
    # every statement on the caller's connection.
    parallel = not connection.in_atomic_block and cfg["PARALLEL_WORKERS"] > 0
    # What both corpora are narrowed by.
    narrowed = {"owner_id": owner.pk, "agent": agent, "since": since, "until": until}
    with transaction.atomic(), prepared_cursor() as cursor:
        lexemes, stored = query_terms(cursor, query=texts[-1], owner_id=owner.pk, ef_search=cfg["HNSW_EF_SEARCH"])
        sources = []
        if scope in ("memories", "all"):
            where, params = memory_filters(
                categories=categories, include_archived=include_archived, group_ids=group_ids, **narrowed
            )
            sources.append(
                source_build(cursor, kind="memory", where=where, params=params, lexemes=lexemes, stored=stored)
            )
        if with_turns:
            where, params = turn_filters(**narrowed)
            sources.append(
                source_build(cursor, kind="turn", where=where, params=params, lexemes=lexemes, stored=stored)
            )
        vec = vector_literal(vector_mean_direction(query_vectors.result()))
        statements = [lexical_statement(source, vec=vec, limit=limit) if source.lexemes else None for source in sources]
        pending = [lexical_submit(*statement) if parallel and statement else None for statement in statements]
        for source, statement, future in zip(sources, statements, pending):
            vector_found = vector_rows(cursor, source, vec=vec, limit=limit)
            if future is not None:
                lexical_found = future.result()
            else:
                lexical_found = fetch_rows(cursor, *statement) if statement else []
            found = candidates_merge(kind=source.kind, vector_rows=vector_found, lexical_rows=lexical_found)
            candidates += found.values()
            if source.kind == "turn":
                candidates += turn_neighbours(
                    cursor, found, where=source.where, params=source.params, vec=vec, top_k=top_k
                )
        ranked = candidates_rank(candidates, query=query, now=now, top_k=top_k, use_decay=use_decay)
        memory_ids = [r["candidate"].id for r in ranked if r["candidate"].type == "memory"]
        provenance = source_turns(cursor, memory_ids=memory_ids, vec=vec)
    results = current_first(results=[_result(r, provenance) for r in ranked], owner_id=owner.pk)
    took_ms = (time.perf_counter() - started) * 1000
    return {
        "results": results,
        "took_ms": round(took_ms, 3),
        "stale_corpora": [source.kind for source in sources if source.stale],
    }


def _result(ranked: dict, provenance: dict[str, list[dict]]) -> dict:
    cand: Candidate = ranked["candidate"]
    row = cand.row
    score = ranked["score"]
    if cand.type == "memory":
        return {
            "type": "memory",
            "id": cand.id,
            "content": row["content"],
            "score": round(score, 6) if math.isfinite(score) else 0.0,
            "scores": ranked["scores"],
            "created_at": from_epoch_us(row["created_us"]),
            "observed_at": from_epoch_us(row["observed_us"]),
            "session_id": str(row["source_session_id"]) if row["source_session_id"] else None,
            "metadata": {"category": row["category"], "status": row["status"], "agent": row["agent"]},
            "category": row["category"],
            "status": row["status"],
            "source_turns": provenance.get(cand.id, []),
        }
    return {
        "type": "turn",
        "id": cand.id,
        "content": row["content"],
        "score": round(score, 6),
        "scores": ranked["scores"],
        "created_at": from_epoch_us(row["created_us"]),
        "session_id": str(row["session_id"]),
        "metadata": row["metadata"],
        "role": row["role"],
        "speaker": row["speaker"],
        "sequence": row["sequence"],
        "source_turns": [],
    }
