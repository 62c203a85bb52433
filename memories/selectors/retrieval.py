"""Hybrid retrieval over memories and turns.

Candidates come from pgvector (HNSW, cosine) and PostgreSQL full-text search, fused by reciprocal
rank fusion; the fused relevance is then weighted with importance and recency (DESIGN §4):
score = w_rel × relevance + w_imp × importance + w_rec × recency, with the memory's strength as a
soft bias so archived memories are still found but rank lower. Forgotten, rejected and expired
memories never come back.
"""

import json
import math
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories import scoring
from memories.selectors.temporal import is_when_question, mentions_time, query_time_window
from memories.services.access import memory_access_record
from memories.services.embeddings import embedding_get
from memories.services.metrics import metric_observe
from memories.services.search_stats import corpus_size, search_stats_request
from memories.text import cjk_ngrams

SCOPES = ("memories", "turns", "all")
SEARCHABLE_STATUSES = ("active", "archived")
# A turn has no importance of its own; it sits in the middle of the scale.
TURN_IMPORTANCE = 0.5


@dataclass
class Candidate:
    type: str
    id: str
    vector_rank: int | None = None
    lexical_rank: int | None = None
    similarity: float = 0.0
    lexical: float = 0.0
    row: dict = field(default_factory=dict)


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in vector) + "]"


def _memory_filters(owner_id, categories, include_archived, agent, since, until) -> tuple[str, list]:
    statuses = SEARCHABLE_STATUSES if include_archived else ("active",)
    sql = ["m.owner_id = %s", "m.status = ANY(%s)", "(m.expires_at IS NULL OR m.expires_at > now())"]
    params: list = [owner_id, list(statuses)]
    if categories:
        sql.append("m.category = ANY(%s)")
        params.append(list(categories))
    if agent is not None:
        sql.append("m.agent = %s")
        params.append(agent)
    if since is not None:
        sql.append("m.observed_at >= %s")
        params.append(since)
    if until is not None:
        sql.append("m.observed_at <= %s")
        params.append(until)
    return " AND ".join(sql), params


def _turn_filters(owner_id, agent, since, until) -> tuple[str, list]:
    sql = ["t.owner_id = %s"]
    params: list = [owner_id]
    if agent is not None:
        sql.append("s.agent = %s")
        params.append(agent)
    if since is not None:
        sql.append("t.created_at >= %s")
        params.append(since)
    if until is not None:
        sql.append("t.created_at <= %s")
        params.append(until)
    return " AND ".join(sql), params


# Timestamps come as integer microseconds since the epoch: a few hundred candidates are ranked per
# query and only the top k returned, and parsing every timestamp cost more than the ranking itself.
MEMORY_COLUMNS = (
    "m.id, m.content, m.category, m.importance, m.strength, m.status, "
    "(extract(epoch FROM m.observed_at) * 1000000)::int8 AS observed_us, "
    "(extract(epoch FROM m.created_at) * 1000000)::int8 AS created_us, m.source_session_id, m.agent"
)
TURN_COLUMNS = (
    "t.id, t.content, t.role, t.speaker, t.metadata, (extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us, "
    "t.session_id, t.sequence"
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


JSON_COLUMNS = ("metadata",)


def _fetch(cursor, sql, params) -> list[dict]:
    cursor.execute(sql, params)
    names = [c.name for c in cursor.description]
    rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    # Django's PostgreSQL backend hands jsonb to raw cursors as text.
    for row in rows:
        for column in JSON_COLUMNS:
            if isinstance(row.get(column), str):
                row[column] = json.loads(row[column])
    return rows


_STATS_TTL_SECONDS = 120
_stats_cache: dict[tuple[str, int], tuple[float, int, float]] = {}


def _corpus_count(cursor, *, kind: str, owner_id: int) -> tuple[int, float]:
    """(document count, average tsvector length), counted, for an owner without stored statistics.

    Cached briefly per process: BM25 needs only approximate collection statistics.
    """
    key = (kind, owner_id)
    cached = _stats_cache.get(key)
    now = time.monotonic()
    if cached and now - cached[0] < _STATS_TTL_SECONDS:
        return cached[1], cached[2]
    count, avg_len = corpus_size(cursor, corpus=kind, owner_id=owner_id)
    stats = (now, max(1, count), avg_len or 1.0)
    _stats_cache[key] = stats
    return stats[1], stats[2]


def _collection(cursor, *, kind: str, owner_id: int, lexemes: list[str], stored) -> tuple[int, float, dict | None]:
    """(documents, average length, document frequency of each query lexeme or None when unknown).

    `stored` is the owner's stored statistics for this corpus (read with the query's lexemes),
    refreshed off the query path when stale. Without them the collection is counted here, and a
    refresh is asked for once it is large enough for the frequencies to matter.
    """
    if stored is None:
        documents, average_length = _corpus_count(cursor, kind=kind, owner_id=owner_id)
        if documents > settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]:
            search_stats_request(owner_id=owner_id, corpus=kind)
        return documents, average_length, None
    documents, average_length, refreshed_at, known, counts = stored
    age = (timezone.now() - refreshed_at).total_seconds()
    if age > settings.MEMORY_RETRIEVAL["STATS_MAX_AGE_SECONDS"]:
        search_stats_request(owner_id=owner_id, corpus=kind)
    frequencies = dict(zip(known or [], counts or []))
    # A lexeme unknown to the stored figures only occurs in documents written since their refresh.
    return max(1, documents), float(average_length) or 1.0, {lexeme: frequencies.get(lexeme, 0) for lexeme in lexemes}


def _query_terms(cursor, *, query: str, owner_id: int) -> tuple[list[str], dict[str, tuple]]:
    """The query's lexemes as PostgreSQL normalises documents (English stems without stopwords, plus
    CJK n-grams), and the owner's stored BM25 statistics per corpus for them, in one round trip."""
    cursor.execute(
        """
        WITH q AS (SELECT tsvector_to_array(to_tsvector('english', %s) || to_tsvector('simple', %s)) AS lexemes)
        SELECT q.lexemes, s.corpus, s.documents, s.average_length, s.refreshed_at, f.known, f.counts
        FROM q LEFT JOIN memories_searchstats s ON s.owner_id = %s
        LEFT JOIN LATERAL (
            SELECT array_agg(lf.lexeme) AS known, array_agg(lf.documents) AS counts FROM memories_lexemefrequency lf
            WHERE lf.owner_id = s.owner_id AND lf.corpus = s.corpus AND lf.lexeme = ANY(q.lexemes)
        ) f ON true
        """,
        [query, cjk_ngrams(query, for_query=True), owner_id],
    )
    rows = cursor.fetchall()
    return list(rows[0][0] or []), {row[1]: row[2:] for row in rows if row[1]}


def _probe_frequencies(cursor, *, table: str, alias: str, owner_id: int, lexemes: list[str]) -> dict[str, int]:
    """Each lexeme's document count through the GIN index, capped at the match budget, in one statement."""
    budget = settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]
    cursor.execute(
        f"SELECT l, (SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {alias}.owner_id = %s "
        f"AND {alias}.search_vector @@ quote_literal(l)::tsquery LIMIT %s) hits) FROM unnest(%s::text[]) l",
        [owner_id, budget, lexemes],
    )
    return dict(cursor.fetchall())


def _within_budget(frequencies: dict[str, int]) -> list[str]:
    """The query lexemes worth matching on, rarest first, while the rows they match stay within budget.

    BM25 is computed over every row that matches a chosen lexeme, so on a large collection a
    common word ("user", "like") would make it score most of the owner's rows while adding almost
    nothing (its IDF is near zero).
    """
    budget = settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]
    by_rarity = sorted(frequencies.items(), key=lambda item: (item[1], item[0]))
    kept, matched = [], 0
    for lexeme, hits in by_rarity:
        if kept and matched + hits > budget:
            break
        kept.append(lexeme)
        matched += hits
    return kept


def _bm25_sql(*, table: str, join: str, alias: str, where: str) -> str:
    """Okapi BM25 (k1=1.2, b=0.75) computed in PostgreSQL over the documents matching any query term.

    ts_rank has no inverse document frequency, which is what makes BM25 work on conversations:
    a rare word ("pottery") must outweigh a common one ("like"). Term frequencies come from the
    stored tsvector's positions; document frequencies from the matching set itself (a document
    contains a lexeme exactly when it matches that term). Only the query's lexemes are unnested:
    setweight marks them and ts_filter keeps them (documents carry no weights of their own).
    A binary term frequency was measured ~40% cheaper here but lost 0.007 of LoCoMo Recall@10.
    """
    return f"""
        WITH query AS (
            SELECT %s::text[] AS lexemes,
                   (SELECT string_agg(quote_literal(l), ' | ')::tsquery FROM unnest(%s::text[]) l) AS q
        ), matched AS (
            SELECT {alias}.id, {alias}.search_vector AS sv FROM {table}{join}, query
            WHERE {where} AND {alias}.search_vector @@ query.q
        ), terms AS (
            SELECT m.id, length(m.sv) AS dl, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
            FROM matched m, query, unnest(ts_filter(setweight(m.sv, 'A', query.lexemes), '{{a}}')) u
        ), df AS (
            SELECT lexeme, count(*) AS df FROM terms GROUP BY lexeme
        )
        SELECT terms.id, sum(
            ln(1.0 + (%s::float8 - df.df + 0.5) / (df.df + 0.5))
            * terms.tf * 2.2 / (terms.tf + 1.2 * (0.25 + 0.75 * terms.dl / %s::float8))
        ) AS bm25
        FROM terms JOIN df USING (lexeme) GROUP BY terms.id ORDER BY bm25 DESC LIMIT %s
    """


def _candidates(cursor, *, kind, where, params, vec, lexemes, stored, limit) -> dict[str, Candidate]:
    if kind == "memory":
        table, columns, join = "memories_memory m", MEMORY_COLUMNS, ""
        alias = "m"
    else:
        table, columns = "chat_sessions_conversationturn t", TURN_COLUMNS
        join = " JOIN chat_sessions_chatsession s ON s.id = t.session_id"
        alias = "t"
    found: dict[str, Candidate] = {}
    rows = _fetch(
        cursor,
        f"SELECT {columns}, 1 - ({alias}.embedding <=> %s::vector) AS similarity FROM {table}{join} "
        f"WHERE {where} AND {alias}.embedding IS NOT NULL ORDER BY {alias}.embedding <=> %s::vector LIMIT %s",
        [vec, *params, vec, limit],
    )
    for rank, row in enumerate(rows, 1):
        key = str(row["id"])
        found[key] = Candidate(type=kind, id=key, vector_rank=rank, similarity=float(row["similarity"]), row=row)
    if lexemes:
        owner_id = params[0]
        count, avg_len, frequencies = _collection(
            cursor, kind=kind, owner_id=owner_id, lexemes=lexemes, stored=stored.get(kind)
        )
        selective = lexemes
        if len(lexemes) > 1 and count > settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]:
            if frequencies is None:
                frequencies = _probe_frequencies(cursor, table=table, alias=alias, owner_id=owner_id, lexemes=lexemes)
            selective = _within_budget(frequencies)
        bm25 = _bm25_sql(table=table, join=join, alias=alias, where=where)
        rows = _fetch(
            cursor,
            f"SELECT {columns}, lex.bm25 AS lexical, 1 - ({alias}.embedding <=> %s::vector) AS similarity "
            f"FROM ({bm25}) lex JOIN {table} ON {alias}.id = lex.id{join} ORDER BY lex.bm25 DESC, {alias}.id",
            [vec, selective, selective, *params, count, avg_len, limit],
        )
        for rank, row in enumerate(rows, 1):
            key = str(row["id"])
            cand = found.get(key)
            if cand is None:
                cand = found[key] = Candidate(type=kind, id=key, row=row)
                cand.similarity = float(row["similarity"] or 0.0)
            cand.lexical_rank = rank
            cand.lexical = float(row["lexical"])
    return found


def _us(when: datetime) -> int:
    return (when - EPOCH) // timedelta(microseconds=1)


def _datetime(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def _fused_relevance(cand: Candidate, *, max_lexical: float, cfg: dict) -> float:
    """Lexical and vector evidence on one scale.

    The default ("score") is a convex combination of max-normalised BM25 and cosine similarity;
    on the LoCoMo development conversations it beat reciprocal rank fusion clearly (RRF throws away
    how much better the best lexical match is than the rest). "rrf" is kept as a setting.
    """
    if cfg["FUSION"] == "rrf":
        k = cfg["RRF_K"]
        rrf = sum(1.0 / (k + r) for r in (cand.vector_rank, cand.lexical_rank) if r is not None)
        return rrf / (2.0 / (k + 1))
    lexical = cand.lexical / max_lexical if cand.lexical_rank and max_lexical > 0 else 0.0
    weight = cfg["LEXICAL_WEIGHT"]
    return weight * lexical + (1.0 - weight) * max(0.0, cand.similarity)


def _rank(candidates: list[Candidate], *, query: str, now: datetime, top_k: int) -> list[dict]:
    """The top_k candidates by score, each with its score breakdown."""
    cfg = settings.MEMORY_RETRIEVAL
    k = cfg["RRF_K"]
    w_rel, w_imp, w_rec = cfg["WEIGHT_RELEVANCE"], cfg["WEIGHT_IMPORTANCE"], cfg["WEIGHT_RECENCY"]
    lowered = query.casefold()
    window = query_time_window(query, now=now)
    window_us = (_us(window[0]), _us(window[1])) if window else None
    now_us = _us(now)
    when_question = is_when_question(query)
    max_lexical = {
        kind: max((c.lexical for c in candidates if c.type == kind and c.lexical_rank), default=0.0)
        for kind in ("memory", "turn")
    }

    base: dict[str, float] = {}
    boosts: dict[str, dict] = {}
    for cand in candidates:
        row = cand.row
        relevance = _fused_relevance(cand, max_lexical=max_lexical[cand.type], cfg=cfg)
        when = row["observed_us"] if cand.type == "memory" else row["created_us"]
        speaker = (row.get("speaker") or "").casefold()
        extra = {
            # A question about a person is answered by what that person said.
            "speaker": cfg["SPEAKER_BOOST"] if len(speaker) > 1 and _names_in(speaker, lowered) else 0.0,
            "when": cfg["WHEN_BOOST"] if when_question and mentions_time(row["content"]) else 0.0,
            "time_window": cfg["TIME_WINDOW_BOOST"] if window_us and window_us[0] <= when <= window_us[1] else 0.0,
        }
        base[cand.id] = relevance + sum(extra.values())
        boosts[cand.id] = extra

    # Conversations answer across turns: a turn next to a strong match is likely part of the answer.
    by_position = {(c.row["session_id"], c.row["sequence"]): c.id for c in candidates if c.type == "turn"}
    scored = []
    for cand in candidates:
        row = cand.row
        relevance = base[cand.id]
        neighbour = 0.0
        if cand.type == "turn":
            around = (by_position.get((row["session_id"], row["sequence"] + d)) for d in (-1, 1))
            neighbour = cfg["NEIGHBOR_WEIGHT"] * max((base[i] for i in around if i), default=0.0)
        relevance += neighbour
        if cand.type == "memory":
            importance, strength, when = float(row["importance"]), float(row["strength"]), row["observed_us"]
        else:
            importance, strength, when = TURN_IMPORTANCE, 1.0, row["created_us"]
        recency = scoring.recency(max(0.0, (now_us - when) / 86_400_000_000))
        weighted = w_rel * relevance + w_imp * importance + w_rec * recency
        # Decay is a soft bias: a faded or archived memory is still found, just lower.
        score = weighted * (0.5 + 0.5 * strength)
        if cand.type == "memory" and row["status"] == "archived":
            score *= cfg["ARCHIVED_FACTOR"]
        scored.append((score, cand, relevance, neighbour, importance, recency, strength))
    scored.sort(key=lambda item: (-item[0], item[1].id))

    ranked = []
    for score, cand, relevance, neighbour, importance, recency, strength in scored[:top_k]:
        rrf = sum(1.0 / (k + r) for r in (cand.vector_rank, cand.lexical_rank) if r is not None)
        ranked.append(
            {
                "candidate": cand,
                "score": score,
                "scores": {
                    "relevance": round(relevance, 6),
                    "similarity": round(cand.similarity, 6),
                    "bm25": round(cand.lexical, 6),
                    "rrf": round(rrf, 6),
                    "vector_rank": cand.vector_rank,
                    "lexical_rank": cand.lexical_rank,
                    **{f"{name}_boost": round(v, 6) for name, v in boosts[cand.id].items()},
                    "neighbor_boost": round(neighbour, 6),
                    "importance": round(importance, 6),
                    "recency": round(recency, 6),
                    "strength": round(strength, 6),
                },
            }
        )
    return ranked


def _names_in(speaker: str, query: str) -> bool:
    """Whether the speaker's name (or its first word) appears as a word in the query."""
    first = speaker.split()[0]
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query) for name in {speaker, first} if len(name) > 1)


def _source_turns(cursor, memory_ids: list[str], vec: str) -> dict[str, list[dict]]:
    if not memory_ids:
        return {}
    rows = _fetch(
        cursor,
        "SELECT ms.memory_id, t.id, t.metadata, t.session_id FROM memories_memorysource ms "
        "JOIN chat_sessions_conversationturn t ON t.id = ms.turn_id "
        "WHERE ms.memory_id = ANY(%s) "
        "ORDER BY ms.memory_id, (t.embedding <=> %s::vector) NULLS LAST, ms.position",
        [memory_ids, vec],
    )
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(str(row["memory_id"]), []).append(
            {"id": str(row["id"]), "metadata": row["metadata"], "session_id": str(row["session_id"])}
        )
    return out


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
    record_access: bool = True,
) -> dict:
    """Rank the owner's memories and/or turns for `query`; returns {results, took_ms}."""
    started = time.perf_counter()
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}")
    vec = _vector_literal(embedding_get(text=query))
    cfg = settings.MEMORY_RETRIEVAL
    # Each source contributes a pool that grows with the results asked for, up to CANDIDATES.
    limit = max(top_k * 2, min(cfg["CANDIDATES"], max(cfg["CANDIDATES_MIN"], cfg["CANDIDATES_PER_RESULT"] * top_k)))
    now = timezone.now()
    candidates: list[Candidate] = []
    with transaction.atomic(), connection.cursor() as cursor:
        # Iterative scans keep HNSW results complete when the owner filter removes most neighbours.
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [cfg["HNSW_EF_SEARCH"]])
        lexemes, stored = _query_terms(cursor, query=query, owner_id=owner.pk)
        if scope in ("memories", "all"):
            where, params = _memory_filters(owner.pk, categories, include_archived, agent, since, until)
            candidates += _candidates(
                cursor, kind="memory", where=where, params=params, vec=vec, lexemes=lexemes, stored=stored, limit=limit
            ).values()
        if scope in ("turns", "all") and not categories:
            where, params = _turn_filters(owner.pk, agent, since, until)
            candidates += _candidates(
                cursor, kind="turn", where=where, params=params, vec=vec, lexemes=lexemes, stored=stored, limit=limit
            ).values()
        ranked = _rank(candidates, query=query, now=now, top_k=top_k)
        memory_ids = [r["candidate"].id for r in ranked if r["candidate"].type == "memory"]
        provenance = _source_turns(cursor, memory_ids, vec)
    results = [_result(r, provenance) for r in ranked]
    if record_access and memory_ids:
        memory_access_record(memory_ids=memory_ids)
    took_ms = (time.perf_counter() - started) * 1000
    metric_observe(name="search_ms", value=took_ms)
    return {"results": results, "took_ms": round(took_ms, 3)}


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
            "created_at": _datetime(row["created_us"]),
            "observed_at": _datetime(row["observed_us"]),
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
        "created_at": _datetime(row["created_us"]),
        "session_id": str(row["session_id"]),
        "metadata": row["metadata"],
        "role": row["role"],
        "speaker": row["speaker"],
        "sequence": row["sequence"],
        "source_turns": [],
    }
