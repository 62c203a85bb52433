"""The memory engine: embeddings, the LLM, scoring and decay, retrieval, the merge decision, context, extraction."""

import os
from pathlib import Path

from memory_project.env import env_bool, env_choice, env_float, env_fraction, env_int, env_str, env_weight
from memory_project.settings.core import DATA_DIR
from memory_project.settings.database import DB_PREPARED_STATEMENTS

EMBEDDING_PROVIDER = env_choice("EMBEDDING_PROVIDER", "local", ("local", "openai", "hashing"))
# The vector column's width is fixed at migration time; changing it needs a new migration and
# `python manage.py memory reembed`.
EMBEDDING_DIM = env_int("EMBEDDING_DIM", 384, minimum=8, maximum=4000)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "")
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# The local model runs on ONNX Runtime (exported once from the packaged weights into
# EMBEDDING_MODEL_DIR) or on PyTorch; both give the same vectors, ONNX several times faster.
EMBEDDING_RUNTIME = env_choice("EMBEDDING_RUNTIME", "onnx", ("onnx", "torch"))
# A search query's vector on ONNX with the model's weight matrices in 8-bit integers (quantized once
# from the exported graph): ~3x faster on a CPU, within a cosine of ~0.99 of float32, and LoCoMo dev
# recall unchanged. Stored vectors (turns, memories) are always float32, so they stay valid either way.
EMBEDDING_QUERY_PRECISION = env_choice("EMBEDDING_QUERY_PRECISION", "int8", ("int8", "float32"))
EMBEDDING_MODEL_DIR = Path(env_str("EMBEDDING_MODEL_DIR", str(DATA_DIR / "models")))
# Threads per embedding call; a web process per core wants one.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 1, minimum=1, maximum=64)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The tokenizer's own thread pool does not survive the web server's fork, and queries are short.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# ---------------------------------------------------------------------------------------------
# LLM (OpenAI-compatible); without a key the offline heuristic provider is used
# ---------------------------------------------------------------------------------------------
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL") or None
LLM_MODEL = env_str("LLM_MODEL", "gpt-4o-mini")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 30.0, minimum=0.1)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0, maximum=10)
LLM_PROVIDER = env_choice("LLM_PROVIDER", "openai" if OPENAI_API_KEY else "heuristic", ("openai", "heuristic"))

# ---------------------------------------------------------------------------------------------
# Memory engine: scoring, decay and retrieval (seed 002 §3.4, seed 003 weights)
# ---------------------------------------------------------------------------------------------
MEMORY_SCORING = {
    "IMPORTANCE_HIGH": env_fraction("MEMORY_IMPORTANCE_HIGH", 0.8),
    "IMPORTANCE_MEDIUM": env_fraction("MEMORY_IMPORTANCE_MEDIUM", 0.6),
    "IMPORTANCE_LOW": env_fraction("MEMORY_IMPORTANCE_LOW", 0.4),
    "REINFORCE_RATE": env_fraction("MEMORY_REINFORCE_RATE", 0.2),
    "DECAY_FACTOR": env_fraction("MEMORY_DECAY_FACTOR", 0.99),
    "GRACE_DAYS": env_float("MEMORY_GRACE_DAYS", 7, minimum=0),
    "ARCHIVE_BELOW": env_fraction("MEMORY_ARCHIVE_BELOW", 0.2),
    "FORGET_BELOW": env_fraction("MEMORY_FORGET_BELOW", 0.05),
    "DEMOTE_BELOW": env_fraction("MEMORY_DEMOTE_BELOW", 0.3),
    "CONTRADICTION_FACTOR": env_fraction("MEMORY_CONTRADICTION_FACTOR", 0.5),
    "PIN_MIN_STRENGTH": env_fraction("MEMORY_PIN_MIN_STRENGTH", 0.5),
    "PIN_MAX": env_int("MEMORY_PIN_MAX", 20, minimum=0),
}
MEMORY_RETRIEVAL = {
    "WEIGHT_RELEVANCE": env_weight("RETRIEVAL_WEIGHT_RELEVANCE", 0.6),
    "WEIGHT_IMPORTANCE": env_weight("RETRIEVAL_WEIGHT_IMPORTANCE", 0.25),
    "WEIGHT_RECENCY": env_weight("RETRIEVAL_WEIGHT_RECENCY", 0.15),
    "RECENCY_HALF_LIFE_DAYS": env_float("RETRIEVAL_RECENCY_HALF_LIFE_DAYS", 30, minimum=0.01),
    "FUSION": env_choice("RETRIEVAL_FUSION", "score", ("score", "rrf")),
    "LEXICAL_WEIGHT": env_fraction("RETRIEVAL_LEXICAL_WEIGHT", 0.3),
    "RRF_K": env_int("RETRIEVAL_RRF_K", 60, minimum=1),
    "SPEAKER_BOOST": env_weight("RETRIEVAL_SPEAKER_BOOST", 0.15),
    "WHEN_BOOST": env_weight("RETRIEVAL_WHEN_BOOST", 0.1),
    "TIME_WINDOW_BOOST": env_weight("RETRIEVAL_TIME_WINDOW_BOOST", 0.2),
    "NEIGHBOR_WEIGHT": env_weight("RETRIEVAL_NEIGHBOR_WEIGHT", 0.2),
    # The turn right after one that asks something takes this share of that turn's score instead.
    "REPLY_WEIGHT": env_weight("RETRIEVAL_REPLY_WEIGHT", 0.3),
    # When the query names one of the turns' speakers, the others' turns are scored this much lower.
    "OTHER_SPEAKER_FACTOR": env_fraction("RETRIEVAL_OTHER_SPEAKER_FACTOR", 0.9),
    # For a question asking for several things, each result already chosen from a session lowers
    # the score of that session's other candidates by this factor.
    "SESSION_DIVERSITY": env_fraction("RETRIEVAL_SESSION_DIVERSITY", 0.9),
    # Turns' full text is BM25F: a turn's own words weigh 1, those of the turns 1 and 2 places away
    # TURN_FIELD_WEIGHTS[1] and [2]; each session is also scored as one document, and SESSION_WEIGHT of
    # that score is added to each of its turns.
    "TURN_FIELD_WEIGHTS": (
        1.0,
        env_weight("RETRIEVAL_TURN_FIELD_WEIGHT_1", 0.5),
        env_weight("RETRIEVAL_TURN_FIELD_WEIGHT_2", 0.2),
    ),
    "TURN_BM25_K1": env_float("RETRIEVAL_TURN_BM25_K1", 1.2, minimum=0.01),
    "TURN_BM25_B": env_fraction("RETRIEVAL_TURN_BM25_B", 0.3),
    "SESSION_WEIGHT": env_weight("RETRIEVAL_SESSION_WEIGHT", 0.3),
    "ARCHIVED_FACTOR": env_fraction("RETRIEVAL_ARCHIVED_FACTOR", 0.8),
    # Candidates taken from each source (vectors, full text): CANDIDATES_PER_RESULT per result asked
    # for, at least CANDIDATES_MIN, at most CANDIDATES (and never fewer than twice top_k).
    "CANDIDATES": env_int("RETRIEVAL_CANDIDATES", 200, minimum=10),
    "CANDIDATES_PER_RESULT": env_int("RETRIEVAL_CANDIDATES_PER_RESULT", 10, minimum=1),
    "CANDIDATES_MIN": env_int("RETRIEVAL_CANDIDATES_MIN", 50, minimum=1),
    # At most about this many rows are scored by BM25 per query: the rarest query words are matched
    # first, and words so common they would exceed it are left out (their IDF is near zero).
    "LEXICAL_MATCH_BUDGET": env_int("RETRIEVAL_LEXICAL_MATCH_BUDGET", 3000, minimum=100),
    "HNSW_EF_SEARCH": env_int("RETRIEVAL_HNSW_EF_SEARCH", 100, minimum=10),
    # Owners with at most this many memories (or turns) get exact nearest neighbours instead of the
    # HNSW index's approximate ones: a few thousand distances cost about a millisecond.
    "EXACT_VECTOR_MAX": env_int("RETRIEVAL_EXACT_VECTOR_MAX", 5000, minimum=0),
    # Search's statements and the API-key lookup are prepared on their first run on a connection and
    # reused (memory_project/postgresql/prepared.py; planning them cost about a millisecond a search).
    # Off with DB_PREPARED_STATEMENTS, or on its own (a pooler that cannot keep prepared statements).
    "PREPARED_STATEMENTS": env_bool("RETRIEVAL_PREPARED_STATEMENTS", DB_PREPARED_STATEMENTS),
    # Threads per process that run a search's BM25 statement on their own connection while the
    # search runs its vector statement (0: one connection, one statement after the other).
    "PARALLEL_WORKERS": env_int("RETRIEVAL_PARALLEL_WORKERS", 2, minimum=0, maximum=64),
    # BM25 collection statistics (documents, lexeme frequencies) per owner are recounted off the
    # query path when older than this.
    "STATS_MAX_AGE_SECONDS": env_float("RETRIEVAL_STATS_MAX_AGE_SECONDS", 600, minimum=1),
}
MEMORY_OWNER_CAP = env_int("MEMORY_OWNER_CAP", 10_000, minimum=1)
TURN_EXTRACTION_MIN_CHARS = env_int("TURN_EXTRACTION_MIN_CHARS", 30, minimum=1)
TURN_EXTRACTION_MAX_PER_SESSION = env_int("TURN_EXTRACTION_MAX_PER_SESSION", 5, minimum=0)
CONSOLIDATION_MIN_TURNS = env_int("CONSOLIDATION_MIN_TURNS", 3, minimum=1)

# ---------------------------------------------------------------------------------------------
# Merge decision, context building, extraction and short-term memory
# ---------------------------------------------------------------------------------------------
# Merge decision thresholds (cosine similarity of the configured embedder).
MEMORY_DECISION = {
    "DUPLICATE_SIMILARITY": env_fraction("MEMORY_DUPLICATE_SIMILARITY", 0.92),
    "UPDATE_SIMILARITY": env_fraction("MEMORY_UPDATE_SIMILARITY", 0.82),
    "CONTRADICTION_MIN_SIMILARITY": env_fraction("MEMORY_CONTRADICTION_MIN_SIMILARITY", 0.55),
    "RELATED_SIMILARITY": env_fraction("MEMORY_RELATED_SIMILARITY", 0.6),
    "FORGET_MIN_RELEVANCE": env_fraction("MEMORY_FORGET_MIN_RELEVANCE", 0.3),
}
# Context building: long-term memory gets this share of the model's window (seed 003: 15%).
LLM_CONTEXT_WINDOW = env_int("LLM_CONTEXT_WINDOW", 128_000, minimum=1000)
CONTEXT_MEMORY_SHARE = env_float("CONTEXT_MEMORY_SHARE", 0.15, minimum=0.01, maximum=1)
CONTEXT_IMPLICIT_RECALL = env_int("CONTEXT_IMPLICIT_RECALL", 3, minimum=0, maximum=20)

# Extraction and short-term memory (seed 003 §4): a session past these limits compacts its older
# half into the rolling summary.
EXTRACTION_WINDOW_TOKENS = env_int("EXTRACTION_WINDOW_TOKENS", 6000, minimum=200)
SESSION_MAX_MESSAGES = env_int("SESSION_MAX_MESSAGES", 200, minimum=4)
SESSION_SHORT_TERM_TOKENS = env_int("SESSION_SHORT_TERM_TOKENS", 8000, minimum=200)
SESSION_SUMMARY_TOKENS = env_int("SESSION_SUMMARY_TOKENS", 400, minimum=50)
