"""The database: embedded PostgreSQL + pgvector unless DATABASE_URL is given, through a pool per process."""

import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_bool, env_float, env_int, env_str
from memory_project.settings.core import DATA_DIR

EMBEDDED_PG_DIR = Path(env_str("EMBEDDED_PG_DIR", str(DATA_DIR / "pg")))


def _buffers_default() -> str:
    """A quarter of the machine's memory (PostgreSQL's usual advice), 128MB to 1GB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "512MB"
    return f"{max(128, min(1024, total // 4 // 2**20))}MB"


# Search reads a few thousand rows, index pages and postings per query; what the buffer pool does not
# hold is copied in from the OS. One owner's 100,000 memories take ~590 MB (table, vector index,
# postings): with 512MB the in-process search p95 was 1.82-1.85x the bare vector query's, with 1GB
# 1.66-1.75x (bench/search_latency's 100,000 memories, warmed, alternated). Pages are only taken
# as they are read. Written to the data folder's configuration, it takes effect when the embedded
# server (re)starts.
EMBEDDED_PG_SHARED_BUFFERS = env_str("EMBEDDED_PG_SHARED_BUFFERS", _buffers_default())
if not re.fullmatch(r"\d+(kB|MB|GB)", EMBEDDED_PG_SHARED_BUFFERS):
    raise ImproperlyConfigured(
        f"EMBEDDED_PG_SHARED_BUFFERS must be a size such as 512MB or 2GB, got {EMBEDDED_PG_SHARED_BUFFERS!r}"
    )
# Connections come from a pool per process (psycopg_pool, through Django's OPTIONS["pool"]): under
# ASGI every request runs in a thread of its own, so persistent per-thread connections piled up
# until PostgreSQL refused new clients, and a new connection per request cost ~7 ms and the
# statements search prepares on it. A pooled connection keeps its prepared statements between the
# requests that borrow it. A process holds at most DB_POOL_MAX_SIZE connections; the search's BM25
# threads and the background thread each keep one of them (see README, "Serving").
DB_POOL = env_bool("DB_POOL", True)
DB_POOL_MIN_SIZE = env_int("DB_POOL_MIN_SIZE", 2, minimum=0)
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 16, minimum=1)
# How long a request waits for a free connection before failing.
DB_POOL_TIMEOUT = env_float("DB_POOL_TIMEOUT", 10.0, minimum=0.1)
# A pooled connection given back less than this long ago is lent without a health check
# (memory_project/postgresql/base.py); 0 checks every time, as Django does.
DB_POOL_CHECK_AFTER_SECONDS = env_float("DB_POOL_CHECK_AFTER_SECONDS", 1.0, minimum=0)
if DB_POOL_MIN_SIZE > DB_POOL_MAX_SIZE:
    raise ImproperlyConfigured("DB_POOL_MIN_SIZE must not exceed DB_POOL_MAX_SIZE")
# Parameters are bound on the server, and a pooled connection prepares a statement once it has run
# it DB_PREPARE_THRESHOLD times (psycopg): the statements every request runs (the session read and
# the turn insert of a turn post, the dashboard's lists) are then parsed and planned once per
# connection instead of on every request. Django sends literals and prepares nothing by default, for
# poolers: turn off (DB_PREPARED_STATEMENTS=false) behind one that cannot keep prepared statements
# (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
DB_PREPARE_THRESHOLD = env_int("DB_PREPARE_THRESHOLD", 5, minimum=0)
_CONNECTION_OPTIONS = {
    **(
        {"pool": {"min_size": DB_POOL_MIN_SIZE, "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT}}
        if DB_POOL
        else {}
    ),
    **({"server_side_binding": True, "prepare_threshold": DB_PREPARE_THRESHOLD} if DB_PREPARED_STATEMENTS else {}),
}
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True)}
    if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
        raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (with the pgvector extension)")
    DATABASES["default"]["ENGINE"] = "memory_project.postgresql"
    DATABASES["default"]["OPTIONS"] = {**DATABASES["default"].get("OPTIONS", {}), **_CONNECTION_OPTIONS}
    EMBEDDED_DB = False
else:
    DATABASES = {
        "default": {
            "ENGINE": "memory_project.embedded_pg",
            "NAME": env_str("EMBEDDED_PG_DATABASE", "memory"),
            "USER": "postgres",
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": dict(_CONNECTION_OPTIONS),
            "TEST": {"NAME": env_str("EMBEDDED_PG_TEST_DATABASE", "test_memory")},
        }
    }
    EMBEDDED_DB = True
