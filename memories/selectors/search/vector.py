"""The vector side of search (pgvector: HNSW, or exact for small collections), and the rows read
around the ranked candidates: turn neighbours and a memory's source turns."""

from django.conf import settings

from memories.selectors.search.collection import Source
from memories.selectors.search.fusion import Candidate
from memories.selectors.search.statements import TURN_COLUMNS, fetch_rows


def vector_rows(cursor, source: Source, *, vec: str, limit: int) -> list[dict]:
    """The source's nearest rows to the query vector, closest first."""
    alias = source.alias
    # The HNSW index answers `ORDER BY embedding <=> q`; ordering by the similarity instead reads
    # the owner's rows through the owner index and ranks them all, exactly.
    exact = source.count <= settings.MEMORY_RETRIEVAL["EXACT_VECTOR_MAX"]
    order = f"similarity DESC, {alias}.id" if exact else f"{alias}.embedding <=> %s::vector"
    return fetch_rows(
        cursor,
        f"SELECT {source.columns}, 1 - ({alias}.embedding <=> %s::vector) AS similarity FROM {source.table}"
        f"{source.join} WHERE {source.where} AND {alias}.embedding IS NOT NULL ORDER BY {order} LIMIT %s",
        [vec, *source.params, *([] if exact else [vec]), limit],
    )


def turn_neighbours(cursor, turns: dict[str, Candidate], *, where, params, vec, top_k) -> list[Candidate]:
    """The turns right before and after the best turn candidates that neither source found.

    An answer in a conversation often spans a question and its reply, and ranking boosts a turn
    next to a strong match (NEIGHBOR_WEIGHT); that only works when the neighbour is a candidate too.
    """
    best = [c for c in turns.values() if min(c.vector_rank or top_k + 1, c.lexical_rank or top_k + 1) <= top_k]
    have = {(c.row["session_id"], c.row["sequence"]) for c in turns.values()}
    wanted = {(c.row["session_id"], c.row["sequence"] + d) for c in best for d in (-1, 1)} - have
    if not wanted:
        return []
    sessions, sequences = zip(*sorted(wanted))
    rows = fetch_rows(
        cursor,
        f"SELECT {TURN_COLUMNS}, 1 - (t.embedding <=> %s::vector) AS similarity "
        "FROM chat_sessions_conversationturn t JOIN chat_sessions_chatsession s ON s.id = t.session_id "
        f"JOIN unnest(%s::uuid[], %s::int[]) AS n(session_id, sequence) "
        f"ON t.session_id = n.session_id AND t.sequence = n.sequence WHERE {where}",
        [vec, list(sessions), list(sequences), *params],
    )
    return [Candidate(type="turn", id=row["id"], similarity=float(row["similarity"] or 0.0), row=row) for row in rows]


def source_turns(cursor, *, memory_ids: list[str], vec: str) -> dict[str, list[dict]]:
    """The turns each memory was extracted from, closest to the query first."""
    if not memory_ids:
        return {}
    rows = fetch_rows(
        cursor,
        "SELECT ms.memory_id, t.id, t.metadata, t.session_id FROM memories_memorysource ms "
        "JOIN chat_sessions_conversationturn t ON t.id = ms.turn_id "
        "WHERE ms.memory_id = ANY(%s::uuid[]) "
        "ORDER BY ms.memory_id, (t.embedding <=> %s::vector) NULLS LAST, ms.position",
        [memory_ids, vec],
    )
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(str(row["memory_id"]), []).append(
            {"id": str(row["id"]), "metadata": row["metadata"], "session_id": str(row["session_id"])}
        )
    return out
