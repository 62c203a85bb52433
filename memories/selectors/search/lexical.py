"""The full-text side of search: BM25 over memories and BM25F over turns, one statement each, from
the postings of memories.SearchPosting (kept by database triggers)."""

import math

from django.conf import settings

from memories.selectors.search.collection import Source
from memories.selectors.search.statements import TURN_COLUMNS


def _postings_sql(*, stored_df: bool) -> str:
    """Each posting of the query's lexemes (id, lexeme, tf, dl, idf), the document frequencies
    counted from the postings themselves or, with stored_df, passed in from the owner's statistics."""
    if stored_df:
        return """
            SELECT p.document_id AS id, q.lexeme, p.frequency::float8 AS tf, p.document_length::float8 AS dl, q.idf
            FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) JOIN memories_searchposting p
            ON p.owner_id = %s AND p.corpus = %s AND p.lexeme = q.lexeme
        """
    return """
        SELECT id, lexeme, tf, dl, ln(1.0::float8 + (%s::float8 - df + 0.5::float8) / (df + 0.5::float8)) AS idf
        FROM (
            SELECT p.document_id AS id, p.lexeme, p.frequency::float8 AS tf, p.document_length::float8 AS dl,
                   count(*) OVER (PARTITION BY p.lexeme) AS df
            FROM memories_searchposting p
            WHERE p.owner_id = %s AND p.corpus = %s AND p.lexeme = ANY(%s::text[])
        ) counted
    """


def _bm25_sql(source: Source, *, stored_df: bool) -> str:
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
    postings = _postings_sql(stored_df=stored_df)
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
            SELECT {source.columns}, 1 - ({source.alias}.embedding <=> %s::vector) AS similarity
            FROM {source.table}{source.join} WHERE {source.alias}.id = lex.id AND {source.where} LIMIT 1
        ) hit
        ORDER BY lex.bm25 DESC, lex.id LIMIT %s
    """


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
    postings = _postings_sql(stored_df=stored_df)
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


def lexical_statement(source: Source, *, vec: str, limit: int) -> tuple[str, list]:
    """The BM25 statement (BM25F for turns) of one source and its parameters."""
    stored_df = source.frequencies is not None
    if source.kind == "turn":
        sql = _turn_bm25f_sql(stored_df=stored_df).replace("{where}", source.where)
    else:
        sql = _bm25_sql(source, stored_df=stored_df)
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
