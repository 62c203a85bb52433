"""What BM25 needs to know about an owner's collection: the query's lexemes, document counts and
frequencies (stored per owner by memories.services.search_stats, or counted here), and which lexemes
are selective enough to match on."""

import time
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from memories.models import SearchCorpus
from memories.selectors.search.statements import MEMORY_COLUMNS, TURN_COLUMNS
from memory_project.text import cjk_ngrams
from sessions.models import ConversationTurn

TABLES = {SearchCorpus.MEMORY: "memories_memory", SearchCorpus.TURN: "chat_sessions_conversationturn"}


def corpus_size(cursor, *, corpus: str, owner_id: int) -> tuple[int, float]:
    """(documents, average tsvector length) of the owner's memories or turns, counted now."""
    cursor.execute(
        f"SELECT count(*), coalesce(avg(length(search_vector)), 0) FROM {TABLES[SearchCorpus(corpus)]} "
        "WHERE owner_id = %s",
        [owner_id],
    )
    documents, average_length = cursor.fetchone()
    return documents, float(average_length)


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


def _collection(
    cursor, *, kind: str, owner_id: int, lexemes: list[str], stored
) -> tuple[int, float, dict | None, bool]:
    """(documents, average length, document frequency of each query lexeme or None when unknown,
    whether the stored statistics want a refresh).

    `stored` is the owner's stored statistics for this corpus (read with the query's lexemes).
    Without them the collection is counted here, and they are wanted once it is large enough for
    the frequencies to matter.
    """
    if stored is None:
        documents, average_length = _corpus_count(cursor, kind=kind, owner_id=owner_id)
        return documents, average_length, None, documents > settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]
    documents, average_length, refreshed_at, known, counts = stored
    stale = (timezone.now() - refreshed_at).total_seconds() > settings.MEMORY_RETRIEVAL["STATS_MAX_AGE_SECONDS"]
    frequencies = dict(zip(known or [], counts or []))
    # A lexeme unknown to the stored figures only occurs in documents written since their refresh.
    known_frequencies = {lexeme: frequencies.get(lexeme, 0) for lexeme in lexemes}
    return max(1, documents), float(average_length) or 1.0, known_frequencies, stale


def query_terms(cursor, *, query: str, owner_id: int, ef_search: int) -> tuple[list[str], dict[str, tuple]]:
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


@dataclass
class Source:
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
    # Whether the owner's stored statistics for this corpus are missing or old (the caller asks
    # for a refresh: a search only reads).
    stale: bool = False

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


def source_build(cursor, *, kind: str, where: str, params: list, lexemes: list[str], stored: dict) -> Source:
    """The corpus's size and, when it is large, the query lexemes worth matching on."""
    source = Source(kind=kind, where=where, params=params, lexemes=lexemes)
    owner_id = params[0]
    source.count, source.average_length, source.frequencies, source.stale = _collection(
        cursor, kind=kind, owner_id=owner_id, lexemes=lexemes, stored=stored.get(kind)
    )
    if len(lexemes) > 1 and source.count > settings.MEMORY_RETRIEVAL["LEXICAL_MATCH_BUDGET"]:
        frequencies = source.frequencies
        if frequencies is None:
            frequencies = _probe_frequencies(cursor, corpus=kind, owner_id=owner_id, lexemes=lexemes)
        source.lexemes = _within_budget(frequencies)
    return source


# How many of an owner's latest turns are read for their speakers: the people a question asks about
# are those of the recent conversations, and the statement stays bounded on a large owner.
SPEAKERS_RECENT_TURNS = 2000
_speakers_cache: dict[int, tuple[float, list[str]]] = {}


def owner_speakers(*, owner_id: int) -> list[str]:
    """The speakers of the owner's latest turns (at most SPEAKERS_RECENT_TURNS), longest name first.

    Cached briefly per process like the counted collection figures: search reads them for every
    query over turns, and a new speaker only has to be known within a couple of minutes.
    """
    cached = _speakers_cache.get(owner_id)
    now = time.monotonic()
    if cached and now - cached[0] < _STATS_TTL_SECONDS:
        return cached[1]
    recent = ConversationTurn.objects.filter(owner_id=owner_id).order_by("-created_at")[:SPEAKERS_RECENT_TURNS]
    names = {speaker for speaker in recent.values_list("speaker", flat=True) if speaker}
    speakers = sorted(names, key=lambda name: (-len(name), name))
    _speakers_cache[owner_id] = (now, speakers)
    return speakers


def corpus_counts_forget(*, owner_id: int) -> None:
    """Drop this process's counted figures and speakers of an owner (erasure)."""
    for key in [k for k in _stats_cache if k[1] == owner_id]:
        _stats_cache.pop(key, None)
    _speakers_cache.pop(owner_id, None)
