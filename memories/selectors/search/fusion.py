"""Fusion and ranking: the vector and full-text candidates merged, their evidence put on one
scale, weighted with importance and recency (DESIGN §4), boosted by what the query names (a
speaker, a time), and the best returned with their score breakdown."""

import heapq
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from memories import scoring
from memories.selectors.search.questions import asks_for_several
from memories.selectors.search.statements import epoch_us
from memories.selectors.temporal import is_when_question, mentions_time, query_time_window

# A turn has no importance of its own; it sits in the middle of the scale.
TURN_IMPORTANCE = 0.5


@dataclass
class Candidate:
    """A memory or turn found by either source, with its ranks and raw scores."""

    type: str
    id: str
    vector_rank: int | None = None
    lexical_rank: int | None = None
    similarity: float = 0.0
    lexical: float = 0.0
    # A turn's session scored as one document (turn candidates found by full text).
    session_lexical: float = 0.0
    row: dict = field(default_factory=dict)


def candidates_merge(*, kind: str, vector_rows: list[dict], lexical_rows: list[dict]) -> dict[str, Candidate]:
    """One candidate per row found by the vector or the full-text statement (or both), by id."""
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


def candidates_rank(
    candidates: list[Candidate], *, query: str, now: datetime, top_k: int, use_decay: bool = True
) -> list[dict]:
    """The top_k candidates by score, each with its score breakdown.

    Without `use_decay` (seed 004's search option) the score is relevance and importance only:
    no recency, no strength, archived memories not lowered.
    """
    cfg = settings.MEMORY_RETRIEVAL
    k = cfg["RRF_K"]
    w_rel, w_imp, w_rec = cfg["WEIGHT_RELEVANCE"], cfg["WEIGHT_IMPORTANCE"], cfg["WEIGHT_RECENCY"]
    lowered = query.casefold()
    window = query_time_window(query, now=now)
    window_us = (epoch_us(window[0]), epoch_us(window[1])) if window else None
    now_us = epoch_us(now)
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
    # A conversation has a few speakers and a search a few hundred turn candidates.
    speaker_named = {
        speaker: len(speaker) > 1 and _names_in(speaker, lowered)
        for speaker in {(c.row["speaker"] or "").casefold() for c in candidates if c.type == "turn"}
    }
    # A question about one of the speakers is seldom answered by what the others said.
    others_factor = cfg["OTHER_SPEAKER_FACTOR"] if sum(speaker_named.values()) == 1 else 1.0
    for cand in candidates:
        row = cand.row
        is_memory = cand.type == "memory"
        relevance = _fused_relevance(cand, lexical=lexical[cand.id], max_lexical=max_lexical[cand.type], cfg=cfg)
        when = row["observed_us"] if is_memory else row["created_us"]
        named = not is_memory and speaker_named[(row["speaker"] or "").casefold()]
        extra = (
            # A question about a person is answered by what that person said.
            speaker_boost if named else 0.0,
            when_boost if when_question and mentions_time(row["content"]) else 0.0,
            window_boost if window_us and window_us[0] <= when <= window_us[1] else 0.0,
        )
        base[cand.id] = relevance + (extra[0] + extra[1] + extra[2])
        if not is_memory and not named:
            base[cand.id] *= others_factor
        boosts[cand.id] = extra

    # Conversations answer across turns: a turn next to a strong match is likely part of the answer.
    by_position = {(c.row["session_id"], c.row["sequence"]): c for c in candidates if c.type == "turn"}
    neighbour_weight, reply_weight = cfg["NEIGHBOR_WEIGHT"], cfg["REPLY_WEIGHT"]
    archived_factor = cfg["ARCHIVED_FACTOR"]
    half_life = cfg["RECENCY_HALF_LIFE_DAYS"]
    scored = []
    for cand in candidates:
        row = cand.row
        relevance = base[cand.id]
        neighbour = 0.0
        if cand.type == "turn":
            before = by_position.get((row["session_id"], row["sequence"] - 1))
            after = by_position.get((row["session_id"], row["sequence"] + 1))
            # The reply to a question shares least of its words and most of its subject.
            weight = reply_weight if before is not None and "?" in before.row["content"] else neighbour_weight
            neighbour = max(
                weight * base[before.id] if before is not None else 0.0,
                neighbour_weight * base[after.id] if after is not None else 0.0,
            )
        relevance += neighbour
        if cand.type == "memory":
            importance, strength, when = float(row["importance"]), float(row["strength"]), row["observed_us"]
        else:
            importance, strength, when = TURN_IMPORTANCE, 1.0, row["created_us"]
        recency = scoring.recency(max(0.0, (now_us - when) / 86_400_000_000), half_life=half_life)
        if use_decay:
            weighted = w_rel * relevance + w_imp * importance + w_rec * recency
            # Decay is a soft bias: a faded or archived memory is still found, just lower.
            score = weighted * (0.5 + 0.5 * strength)
            if cand.type == "memory" and row["status"] == "archived":
                score *= archived_factor
        else:
            score = w_rel * relevance + w_imp * importance
        scored.append((score, cand, relevance, neighbour, importance, recency, strength))
    scored.sort(key=lambda item: (-item[0], item[1].id))
    diversity = {}
    if asks_for_several(query):
        scored, diversity = _spread_over_sessions(scored, top_k=top_k, factor=cfg["SESSION_DIVERSITY"])

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
                    "session_diversity": round(diversity.get(cand.id, 1.0), 6),
                    "importance": round(importance, 6),
                    "recency": round(recency, 6),
                    "strength": round(strength, 6),
                },
            }
        )
    return ranked


def _spread_over_sessions(scored: list[tuple], *, top_k: int, factor: float) -> tuple[list[tuple], dict[str, float]]:
    """The first top_k re-chosen one at a time, each candidate's score multiplied by `factor` once
    for every result already chosen from its session; and the factor each chosen one got.

    For a question asking for several things (memories.selectors.search.questions): they are
    usually told in several sessions, and one session that matches the question well would
    otherwise fill the first places with turns that tell the same thing.
    """
    heap = [(-item[0], item[1].id, 0, index) for index, item in enumerate(scored)]
    heapq.heapify(heap)
    taken: dict[str, int] = {}
    chosen, factors = [], {}
    while heap and len(chosen) < top_k:
        negative, key, seen, index = heapq.heappop(heap)
        item = scored[index]
        session = _session_of(item[1])
        now_seen = taken.get(session, 0) if session else 0
        if now_seen != seen:
            # Scores only go down as results are chosen: put it back with its lowered score.
            heapq.heappush(heap, (-item[0] * factor**now_seen, key, now_seen, index))
            continue
        chosen.append((-negative, *item[1:]))
        factors[key] = factor**seen
        if session:
            taken[session] = seen + 1
    return chosen, factors


def _session_of(cand: Candidate) -> str | None:
    return cand.row["session_id"] if cand.type == "turn" else cand.row.get("source_session_id")


def _names_in(speaker: str, query: str) -> bool:
    """Whether the speaker's name (or its first word) appears as a word in the query."""
    first = speaker.split()[0]
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query) for name in {speaker, first} if len(name) > 1)
