"""Hybrid retrieval over memories and turns.

Candidates come from pgvector (HNSW, cosine; exact for small owners) and BM25 over the postings
of memories.SearchPosting, fused by score (or reciprocal rank fusion, a setting); the fused
relevance is then weighted with importance and recency (DESIGN §4):
score = w_rel × relevance + w_imp × importance + w_rec × recency, with the memory's strength as a
soft bias so archived memories are still found but rank lower. Forgotten, rejected and expired
memories never come back.
"""

import json
import math
import os
import queue
import re
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.postgresql.base import ServerBindingCursor
from django.utils import timezone

from memories import scoring
from memories.selectors.supersession import current_first
from memories.selectors.temporal import is_when_question, mentions_time, query_time_window
from memories.services.access import memory_access_record
from memories.services.embeddings import embedding_get_soon
from memories.services.metrics import metric_observe
from memories.services.search_stats import corpus_size, search_stats_request
from memory_project.text import cjk_ngrams

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
    # A turn's session scored as one document (turn candidates found by full text).
    session_lexical: float = 0.0
    row: dict = field(default_factory=dict)


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in vector) + "]"


def _memory_filters(owner_id, categories, include_archived, agent, since, until, group_ids=None) -> tuple[str, list]:
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
    if group_ids is not None:
        # memory_groups: the memories in these groups (a group and those below it, resolved by the caller).
        sql.append("m.id IN (SELECT memory_id FROM memory_groups_memorygroupmember WHERE group_id = ANY(%s::uuid[]))")
        params.append([str(g) for g in group_ids])
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
# Ids come as text: a search reads a few hundred rows and needs ids only as strings, and building a
# uuid.UUID per row and formatting it back cost a noticeable part of the Python time.
MEMORY_COLUMNS = (
    "m.id::text AS id, m.content, m.category, m.importance, m.strength, m.status, "
    "(extract(epoch FROM m.observed_at) * 1000000)::int8 AS observed_us, "
    "(extract(epoch FROM m.created_at) * 1000000)::int8 AS created_us, "
    "m.source_session_id::text AS source_session_id, m.agent"
)
TURN_COLUMNS = (
    "t.id::text AS id, t.content, t.role, t.speaker, t.metadata, "
    "(extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us, t.session_id::text AS session_id, t.sequence"
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


def _query_terms(cursor, *, query: str, owner_id: int, ef_search: int) -> tuple[list[str], dict[str, tuple]]:
    """The query's lexemes as PostgreSQL normalises documents (English stems without stopwords, plus
    CJK n-grams), and the owner's stored BM25 statistics per corpus for them, in one round trip.

    The same statement sets the transaction's HNSW search: iterative scans keep its results complete
    when the owner filter removes most neighbours.
    """
    cursor.execute(
        """
        WITH q AS (
            SELECT tsvector_to_array(to_tsvector('english', %s) || to_tsvector('simple', %s)) AS lexemes,
                   set_config('hnsw.iterative_scan', 'relaxed_order', true) AS scan,
                   set_config('hnsw.ef_search', %s, true) AS ef
        )
        SELECT q.lexemes, s.corpus, s.documents, s.average_length, s.refreshed_at, f.known, f.counts
        FROM q LEFT JOIN memories_searchstats s ON s.owner_id = %s
        LEFT JOIN LATERAL (
            SELECT array_agg(lf.lexeme) AS known, array_agg(lf.documents) AS counts FROM memories_lexemefrequency lf
            WHERE lf.owner_id = s.owner_id AND lf.corpus = s.corpus AND lf.lexeme = ANY(q.lexemes)
        ) f ON true
        """,
        [query, cjk_ngrams(query, for_query=True), str(ef_search), owner_id],
    )
    rows = cursor.fetchall()
    return list(rows[0][0] or []), {row[1]: row[2:] for row in rows if row[1]}


def _probe_frequencies(cursor, *, corpus: str, owner_id: int, lexemes: list[str]) -> dict[str, int]:
    """Each lexeme's document count from the postings, capped at the match budget, in one statement."""
    budget = settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]
    cursor.execute(
        "SELECT l, (SELECT count(*) FROM (SELECT 1 FROM memories_searchposting p WHERE p.owner_id = %s "
        "AND p.corpus = %s AND p.lexeme = l LIMIT %s) hits) FROM unnest(%s::text[]) l",
        [owner_id, corpus, budget, lexemes],
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


def _bm25_sql(*, columns: str, table: str, join: str, alias: str, where: str, stored_df: bool) -> str:
    """Okapi BM25 (k1=1.2, b=0.75) over the postings of the query's lexemes, best documents first.

    ts_rank has no inverse document frequency, which is what makes BM25 work on conversations:
    a rare word ("pottery") must outweigh a common one ("like"). Term frequencies and document
    lengths are stored in each posting (memories.SearchPosting), so scoring is an index-only scan;
    document frequencies are counted from the same postings (the scan returns them by lexeme, so
    the window needs no sort), or, for an owner with stored statistics (a collection past the
    match budget), passed in from those (stored_df): counting is a third of the statement's cost
    there, and BM25 only needs approximate collection figures. The scored documents are then read
    best first, one primary-key lookup each, until `limit` of them pass the search's filters. The
    arithmetic is in float8 and in the order of the tsvector-based query it replaced, which gave
    the same scores to the bit.
    A binary term frequency was measured ~40% cheaper here but lost 0.007 of LoCoMo Recall@10.
    """
    postings = (
        """
            SELECT p.document_id AS id, p.frequency::float8 AS tf, p.document_length::float8 AS dl, q.idf
            FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) JOIN memories_searchposting p
            ON p.owner_id = %s AND p.corpus = %s AND p.lexeme = q.lexeme
        """
        if stored_df
        else """
            SELECT id, tf, dl, ln(1.0::float8 + (%s::float8 - df + 0.5::float8) / (df + 0.5::float8)) AS idf
            FROM (
                SELECT p.document_id AS id, p.frequency::float8 AS tf, p.document_length::float8 AS dl,
                       count(*) OVER (PARTITION BY p.lexeme) AS df
                FROM memories_searchposting p
                WHERE p.owner_id = %s AND p.corpus = %s AND p.lexeme = ANY(%s::text[])
            ) counted
        """
    )
    return f"""
        WITH postings AS ({postings}), scored AS (
            SELECT id, sum(
                idf * tf * 2.2::float8 / (tf + 1.2::float8 * (0.25::float8 + 0.75::float8 * dl / %s::float8))
            ) AS bm25
            FROM postings GROUP BY id
        )
        SELECT hit.*, lex.bm25 AS lexical
        FROM (SELECT id, bm25 FROM scored ORDER BY bm25 DESC, id) lex
        CROSS JOIN LATERAL (
            SELECT {columns}, 1 - ({alias}.embedding <=> %s::vector) AS similarity FROM {table}{join}
            WHERE {alias}.id = lex.id AND {where} LIMIT 1
        ) hit
        ORDER BY lex.bm25 DESC, lex.id LIMIT %s
    """


@dataclass
class _Source:
    """One corpus (memories or turns) of a search: where its rows are, how they are filtered, and
    the collection figures BM25 needs."""

    kind: str
    where: str
    params: list
    count: int = 0
    average_length: float = 1.0
    lexemes: list[str] = field(default_factory=list)
    # Document frequency of each lexeme from the owner's stored statistics; None: count them.
    frequencies: dict[str, int] | None = None

    @property
    def table(self) -> str:
        return "memories_memory m" if self.kind == "memory" else "chat_sessions_conversationturn t"

    @property
    def join(self) -> str:
        return "" if self.kind == "memory" else " JOIN chat_sessions_chatsession s ON s.id = t.session_id"

    @property
    def alias(self) -> str:
        return "m" if self.kind == "memory" else "t"

    @property
    def columns(self) -> str:
        return MEMORY_COLUMNS if self.kind == "memory" else TURN_COLUMNS


def _source(cursor, *, kind, where, params, lexemes, stored) -> _Source:
    """The corpus's size and, when it is large, the query lexemes worth matching on."""
    owner_id = params[0]
    count, average_length, frequencies = _collection(
        cursor, kind=kind, owner_id=owner_id, lexemes=lexemes, stored=stored.get(kind)
    )
    stored_frequencies = frequencies
    selective = lexemes
    if len(lexemes) > 1 and count > settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]:
        if frequencies is None:
            frequencies = _probe_frequencies(cursor, corpus=kind, owner_id=owner_id, lexemes=lexemes)
        selective = _within_budget(frequencies)
    return _Source(
        kind=kind,
        where=where,
        params=params,
        count=count,
        average_length=average_length,
        lexemes=selective,
        frequencies=stored_frequencies,
    )


def _vector_rows(cursor, source: _Source, *, vec: str, limit: int) -> list[dict]:
    alias = source.alias
    # The HNSW index answers `ORDER BY embedding <=> q`; ordering by the similarity instead reads
    # the owner's rows through the owner index and ranks them all, exactly.
    exact = source.count <= settings.MEMORY_RETRIEVAL["EXACT_VECTOR_MAX"]
    order = f"similarity DESC, {alias}.id" if exact else f"{alias}.embedding <=> %s::vector"
    return _fetch(
        cursor,
        f"SELECT {source.columns}, 1 - ({alias}.embedding <=> %s::vector) AS similarity FROM {source.table}"
        f"{source.join} WHERE {source.where} AND {alias}.embedding IS NOT NULL ORDER BY {order} LIMIT %s",
        [vec, *source.params, *([] if exact else [vec]), limit],
    )


def _turn_bm25f_sql(*, stored_df: bool) -> str:
    """BM25F over turns: each turn is scored with its neighbours' words as extra, lighter fields.

    An answer in a conversation is spread over a few turns ("Did you go?" / "Yes, to Paris last
    May"): the words of the question are often in the turn next to the evidence. Each field's term
    frequency is normalised by its own length and weighted (TURN_FIELD_WEIGHTS by distance), the
    weighted sum is saturated once per lexeme (Robertson and Zaragoza's BM25F), so a word found in
    the turn itself and in its neighbour counts more than once but never twice. The statement also
    scores each session as one document from the same postings (the saturation is per session):
    a question about a topic the session is about lifts all of its turns a little
    (SESSION_WEIGHT, applied in ranking). Turn positions come from one primary-key lookup per
    matched turn; the matched rows are bounded by the match budget.
    """
    postings = (
        """
            SELECT p.document_id AS id, q.lexeme, p.frequency::float8 AS tf, p.document_length::float8 AS dl, q.idf
            FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) JOIN memories_searchposting p
            ON p.owner_id = %s AND p.corpus = %s AND p.lexeme = q.lexeme
        """
        if stored_df
        else """
            SELECT id, lexeme, tf, dl, ln(1.0::float8 + (%s::float8 - df + 0.5::float8) / (df + 0.5::float8)) AS idf
            FROM (
                SELECT p.document_id AS id, p.lexeme, p.frequency::float8 AS tf, p.document_length::float8 AS dl,
                       count(*) OVER (PARTITION BY p.lexeme) AS df
                FROM memories_searchposting p
                WHERE p.owner_id = %s AND p.corpus = %s AND p.lexeme = ANY(%s::text[])
            ) counted
        """
    )
    return f"""
        WITH postings AS ({postings}), params AS (
            SELECT %s::float8 AS avgdl, %s::float8 AS k1, %s::float8 AS b
        ), placed AS (
            SELECT t.session_id, t.sequence, po.lexeme, po.idf,
                   po.tf / (1.0::float8 - params.b + params.b * po.dl / params.avgdl) AS ntf
            FROM postings po CROSS JOIN params JOIN chat_sessions_conversationturn t ON t.id = po.id
        ), fields AS (
            SELECT pl.session_id, pl.sequence + f.shift AS sequence, pl.lexeme, pl.idf, sum(f.weight * pl.ntf) AS ntf
            FROM placed pl CROSS JOIN unnest(%s::int[], %s::float8[]) AS f(shift, weight)
            GROUP BY 1, 2, 3, 4
        ), scored AS (
            SELECT session_id, sequence, sum(idf * ntf * (params.k1 + 1.0::float8) / (ntf + params.k1)) AS bm25
            FROM fields CROSS JOIN params GROUP BY 1, 2
        ), sessions AS (
            SELECT session_id, sum(idf * ntf * (params.k1 + 1.0::float8) / (ntf + params.k1)) AS bm25
            FROM (SELECT session_id, lexeme, idf, sum(ntf) AS ntf FROM placed GROUP BY 1, 2, 3) per_lexeme
            CROSS JOIN params GROUP BY 1
        )
        SELECT hit.*, lex.bm25 AS lexical, ss.bm25 AS session_lexical
        FROM (SELECT session_id, sequence, bm25 FROM scored ORDER BY bm25 DESC, session_id, sequence) lex
        JOIN sessions ss ON ss.session_id = lex.session_id
        CROSS JOIN LATERAL (
            SELECT {TURN_COLUMNS}, 1 - (t.embedding <=> %s::vector) AS similarity
            FROM chat_sessions_conversationturn t JOIN chat_sessions_chatsession s ON s.id = t.session_id
            WHERE t.session_id = lex.session_id AND t.sequence = lex.sequence AND {{where}} LIMIT 1
        ) hit
        ORDER BY lex.bm25 DESC, lex.session_id, lex.sequence LIMIT %s
    """


def _lexical_statement(source: _Source, *, vec: str, limit: int) -> tuple[str, list]:
    stored_df = source.frequencies is not None
    if source.kind == "turn":
        sql = _turn_bm25f_sql(stored_df=stored_df).replace("{where}", source.where)
    else:
        sql = _bm25_sql(
            columns=source.columns,
            table=source.table,
            join=source.join,
            alias=source.alias,
            where=source.where,
            stored_df=stored_df,
        )
    owner_id = source.params[0]
    if stored_df:
        documents = float(source.count)
        # As PostgreSQL's ln() computes it in the counted variant: the same C log(), the same order.
        idf = [
            math.log(1.0 + (documents - source.frequencies[lexeme] + 0.5) / (source.frequencies[lexeme] + 0.5))
            for lexeme in source.lexemes
        ]
        postings = [source.lexemes, idf, owner_id, source.kind]
    else:
        postings = [source.count, owner_id, source.kind, source.lexemes]
    if source.kind == "turn":
        cfg = settings.MEMORY_RETRIEVAL
        shifts, weights = _field_weights(cfg["TURN_FIELD_WEIGHTS"])
        fields = [source.average_length, cfg["TURN_BM25_K1"], cfg["TURN_BM25_B"], shifts, weights]
        return sql, [*postings, *fields, vec, *source.params, limit]
    return sql, [*postings, source.average_length, vec, *source.params, limit]


def _field_weights(by_distance: tuple[float, ...]) -> tuple[list[int], list[float]]:
    """(shift, weight) pairs for a turn's own field (distance 0) and its neighbours on both sides."""
    shifts, weights = [], []
    for distance, weight in enumerate(by_distance):
        for shift in {distance, -distance}:
            shifts.append(shift)
            weights.append(float(weight))
    return shifts, weights


def _merge(kind: str, vector_rows: list[dict], lexical_rows: list[dict]) -> dict[str, Candidate]:
    found: dict[str, Candidate] = {}
    for rank, row in enumerate(vector_rows, 1):
        key = row["id"]
        found[key] = Candidate(type=kind, id=key, vector_rank=rank, similarity=float(row["similarity"]), row=row)
    for rank, row in enumerate(lexical_rows, 1):
        key = row["id"]
        cand = found.get(key)
        if cand is None:
            cand = found[key] = Candidate(type=kind, id=key, row=row)
            cand.similarity = float(row["similarity"] or 0.0)
        cand.lexical_rank = rank
        cand.lexical = float(row["lexical"])
        if "session_lexical" in row:
            cand.session_lexical = float(row["session_lexical"])
    return found


# ------------------------------------------------------------------------------------------------
# The BM25 statement beside the vector one
# ------------------------------------------------------------------------------------------------
# A search outside any transaction sends its BM25 statement to one of these threads, which runs it
# on its own connection while the caller runs the vector statement: the two take similar time, so
# the search takes about the longer of them instead of their sum. Each thread keeps its connection
# (and the statements prepared on it); when every thread is busy the caller runs the statement itself.

# Each worker is a one-thread executor, so that its connection can be closed in its own thread.
_workers: list[ThreadPoolExecutor] = []
_idle: queue.SimpleQueue = queue.SimpleQueue()
_workers_lock = threading.Lock()


def _forget_workers_after_fork() -> None:
    # A forked child (a prefork Celery worker) inherits the executors but not their threads: work
    # sent to them would never run. It starts its own on first use.
    global _workers, _idle, _workers_lock
    _workers, _idle, _workers_lock = [], queue.SimpleQueue(), threading.Lock()


os.register_at_fork(after_in_child=_forget_workers_after_fork)


def _lexical_submit(sql: str, params: list) -> Future | None:
    """Hand the statement to an idle worker; None when every one is busy."""
    with _workers_lock:
        while len(_workers) < settings.MEMORY_RETRIEVAL["PARALLEL_WORKERS"]:
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-lexical")
            _workers.append(worker)
            _idle.put(worker)
    try:
        worker = _idle.get_nowait()
    except queue.Empty:
        return None
    future = worker.submit(_lexical_run, sql, params)
    future.add_done_callback(lambda _: _idle.put(worker))
    return future


# The worker connections whose session already plans prepared statements generically.
_generic_plans: weakref.WeakSet = weakref.WeakSet()


def _lexical_run(sql: str, params: list) -> list[dict]:
    try:
        with _search_cursor() as cursor:
            if connection.connection not in _generic_plans:
                # A worker only runs BM25 statements, whose plan has the same shape for any query
                # (the postings' index, the aggregate, the lookups); planning each anew cost ~0.5 ms.
                cursor.execute("SET plan_cache_mode = force_generic_plan")
                _generic_plans.add(connection.connection)
            return _fetch(cursor, sql, params)
    except BaseException:
        # A failed connection is not kept for the next search.
        connection.close()
        raise


def search_workers_close() -> None:
    """Close the connections the BM25 threads keep (test teardown, process shutdown)."""
    for worker in list(_workers):
        # `connection` must be looked up in the worker's thread: it is that thread's connection.
        worker.submit(lambda: connection.close()).result()


def _neighbours(cursor, turns: dict[str, Candidate], *, where, params, vec, top_k) -> list[Candidate]:
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
    rows = _fetch(
        cursor,
        f"SELECT {TURN_COLUMNS}, 1 - (t.embedding <=> %s::vector) AS similarity "
        "FROM chat_sessions_conversationturn t JOIN chat_sessions_chatsession s ON s.id = t.session_id "
        f"JOIN unnest(%s::uuid[], %s::int[]) AS n(session_id, sequence) "
        f"ON t.session_id = n.session_id AND t.sequence = n.sequence WHERE {where}",
        [vec, list(sessions), list(sequences), *params],
    )
    return [Candidate(type="turn", id=row["id"], similarity=float(row["similarity"] or 0.0), row=row) for row in rows]


def _us(when: datetime) -> int:
    return (when - EPOCH) // timedelta(microseconds=1)


def _datetime(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def _fused_relevance(cand: Candidate, *, lexical: float, max_lexical: float, cfg: dict) -> float:
    """Lexical and vector evidence on one scale.

    The default ("score") is a convex combination of max-normalised BM25 and cosine similarity;
    on the LoCoMo development conversations it beat reciprocal rank fusion clearly (RRF throws away
    how much better the best lexical match is than the rest). "rrf" is kept as a setting.
    """
    if cfg["FUSION"] == "rrf":
        k = cfg["RRF_K"]
        rrf = sum(1.0 / (k + r) for r in (cand.vector_rank, cand.lexical_rank) if r is not None)
        return rrf / (2.0 / (k + 1))
    lexical = lexical / max_lexical if max_lexical > 0 else 0.0
    weight = cfg["LEXICAL_WEIGHT"]
    return weight * lexical + (1.0 - weight) * max(0.0, cand.similarity)


def _session_evidence(candidates: list[Candidate], *, session_weight: float) -> dict[str, float]:
    """SESSION_WEIGHT of its session's BM25 score for each turn candidate.

    The session's score reaches every turn candidate of that session, the ones found by vector or
    as a neighbour too: sessions are known from the turns the full text found.
    """
    sessions: dict[str, float] = {}
    for cand in candidates:
        if cand.type == "turn" and cand.lexical_rank:
            sessions[cand.row["session_id"]] = cand.session_lexical
    return {
        cand.id: session_weight * sessions.get(cand.row["session_id"], 0.0)
        for cand in candidates
        if cand.type == "turn"
    }


BOOSTS = ("speaker", "when", "time_window")


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
    session = _session_evidence(candidates, session_weight=cfg["SESSION_WEIGHT"])
    lexical = {c.id: (c.lexical if c.lexical_rank else 0.0) + session.get(c.id, 0.0) for c in candidates}
    max_lexical = {
        kind: max((lexical[c.id] for c in candidates if c.type == kind), default=0.0) for kind in ("memory", "turn")
    }

    # A few hundred candidates per search: settings and helpers are looked up once, not per candidate.
    speaker_boost, when_boost, window_boost = cfg["SPEAKER_BOOST"], cfg["WHEN_BOOST"], cfg["TIME_WINDOW_BOOST"]
    base: dict[str, float] = {}
    boosts: dict[str, tuple[float, float, float]] = {}
    speaker_named: dict[str, bool] = {}
    for cand in candidates:
        row = cand.row
        is_memory = cand.type == "memory"
        relevance = _fused_relevance(cand, lexical=lexical[cand.id], max_lexical=max_lexical[cand.type], cfg=cfg)
        when = row["observed_us"] if is_memory else row["created_us"]
        speaker = "" if is_memory else (row["speaker"] or "").casefold()
        named = speaker_named.get(speaker)
        if named is None:
            # A conversation has a few speakers and a search a few hundred turn candidates.
            named = speaker_named[speaker] = len(speaker) > 1 and _names_in(speaker, lowered)
        extra = (
            # A question about a person is answered by what that person said.
            speaker_boost if named else 0.0,
            when_boost if when_question and mentions_time(row["content"]) else 0.0,
            window_boost if window_us and window_us[0] <= when <= window_us[1] else 0.0,
        )
        base[cand.id] = relevance + (extra[0] + extra[1] + extra[2])
        boosts[cand.id] = extra

    # Conversations answer across turns: a turn next to a strong match is likely part of the answer.
    by_position = {(c.row["session_id"], c.row["sequence"]): c.id for c in candidates if c.type == "turn"}
    neighbour_weight, archived_factor = cfg["NEIGHBOR_WEIGHT"], cfg["ARCHIVED_FACTOR"]
    half_life = cfg["RECENCY_HALF_LIFE_DAYS"]
    scored = []
    for cand in candidates:
        row = cand.row
        relevance = base[cand.id]
        neighbour = 0.0
        if cand.type == "turn":
            around = (by_position.get((row["session_id"], row["sequence"] + d)) for d in (-1, 1))
            neighbour = neighbour_weight * max((base[i] for i in around if i), default=0.0)
        relevance += neighbour
        if cand.type == "memory":
            importance, strength, when = float(row["importance"]), float(row["strength"]), row["observed_us"]
        else:
            importance, strength, when = TURN_IMPORTANCE, 1.0, row["created_us"]
        recency = scoring.recency(max(0.0, (now_us - when) / 86_400_000_000), half_life=half_life)
        weighted = w_rel * relevance + w_imp * importance + w_rec * recency
        # Decay is a soft bias: a faded or archived memory is still found, just lower.
        score = weighted * (0.5 + 0.5 * strength)
        if cand.type == "memory" and row["status"] == "archived":
            score *= archived_factor
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
                    "session_bm25": round(session.get(cand.id, 0.0), 6),
                    "rrf": round(rrf, 6),
                    "vector_rank": cand.vector_rank,
                    "lexical_rank": cand.lexical_rank,
                    **{f"{name}_boost": round(v, 6) for name, v in zip(BOOSTS, boosts[cand.id])},
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


_NEVER = 2**31 - 1


class _PreparingCursor(ServerBindingCursor):
    """Binds parameters on the server and prepares each statement on its first run.

    Django turns psycopg's automatic preparation off (prepare_threshold=None) so that connection
    poolers keep working; search asks for it per statement instead, when PREPARED_STATEMENTS is on.
    psycopg keeps the prepared statements per connection (at most 100, least recently used go).
    """

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


def _search_cursor():
    """A cursor on Django's connection for search's statements, which are the same few texts every
    time: planning them cost ~1 ms of a search over 100,000 memories. Queries still go through
    Django's cursor wrapper, so they are logged and counted like any other.
    """
    if not settings.MEMORY_RETRIEVAL["PREPARED_STATEMENTS"]:
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # psycopg prepares nothing while the threshold is None, even when asked; a threshold that is
        # never reached keeps every other statement unprepared, as Django wants.
        raw.prepare_threshold = _NEVER
    cursor = _PreparingCursor(raw)
    return connection.make_debug_cursor(cursor) if connection.queries_logged else connection.make_cursor(cursor)


def _source_turns(cursor, memory_ids: list[str], vec: str) -> dict[str, list[dict]]:
    if not memory_ids:
        return {}
    rows = _fetch(
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
    group_ids: list | None = None,
) -> dict:
    """Rank the owner's memories and/or turns for `query`; returns {results, took_ms}."""
    started = time.perf_counter()
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}")
    # The query's vector is computed while the first statements (query terms, statistics) run.
    query_vector = embedding_get_soon(owner=owner, text=query)
    cfg = settings.MEMORY_RETRIEVAL
    # Each source contributes a pool that grows with the results asked for, up to CANDIDATES.
    limit = max(top_k * 2, min(cfg["CANDIDATES"], max(cfg["CANDIDATES_MIN"], cfg["CANDIDATES_PER_RESULT"] * top_k)))
    now = timezone.now()
    candidates: list[Candidate] = []
    # Inside a caller's transaction the search must see that transaction's own writes, so it runs
    # every statement on the caller's connection.
    parallel = not connection.in_atomic_block and cfg["PARALLEL_WORKERS"] > 0
    with transaction.atomic(), _search_cursor() as cursor:
        lexemes, stored = _query_terms(cursor, query=query, owner_id=owner.pk, ef_search=cfg["HNSW_EF_SEARCH"])
        sources = []
        if scope in ("memories", "all"):
            where, params = _memory_filters(owner.pk, categories, include_archived, agent, since, until, group_ids)
            sources.append(_source(cursor, kind="memory", where=where, params=params, lexemes=lexemes, stored=stored))
        if scope in ("turns", "all") and not categories and group_ids is None:
            where, params = _turn_filters(owner.pk, agent, since, until)
            sources.append(_source(cursor, kind="turn", where=where, params=params, lexemes=lexemes, stored=stored))
        vec = _vector_literal(query_vector.result())
        statements = [
            _lexical_statement(source, vec=vec, limit=limit) if source.lexemes else None for source in sources
        ]
        pending = [_lexical_submit(*statement) if parallel and statement else None for statement in statements]
        for source, statement, future in zip(sources, statements, pending):
            vector_rows = _vector_rows(cursor, source, vec=vec, limit=limit)
            if future is not None:
                lexical_rows = future.result()
            else:
                lexical_rows = _fetch(cursor, *statement) if statement else []
            found = _merge(source.kind, vector_rows, lexical_rows)
            candidates += found.values()
            if source.kind == "turn":
                candidates += _neighbours(cursor, found, where=source.where, params=source.params, vec=vec, top_k=top_k)
        ranked = _rank(candidates, query=query, now=now, top_k=top_k)
        memory_ids = [r["candidate"].id for r in ranked if r["candidate"].type == "memory"]
        provenance = _source_turns(cursor, memory_ids, vec)
    results = current_first(results=[_result(r, provenance) for r in ranked], owner_id=owner.pk)
    if record_access and memory_ids:
        memory_access_record(memory_ids=memory_ids)
    took_ms = (time.perf_counter() - started) * 1000
    metric_observe(name="search_ms", value=took_ms, owner_id=owner.pk)
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
