"""Erasure, the hot-memory cache, the access log, attachments and request analytics."""

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_bool, env_float, env_int, env_list, env_str
from memory_project.settings.background import CELERY_BEAT_SCHEDULE
from memory_project.settings.core import DATA_DIR, DATA_UPLOAD_MAX_MEMORY_SIZE, STORAGES

# ---------------------------------------------------------------------------------------------
# Erasure (complete deletion of an owner's data with a receipt)
# ---------------------------------------------------------------------------------------------
# Rows that stay when an owner's data is erased but the account is kept ("app_label.Model"); the
# user row and its permission/group links always stay with the account.
ERASURE_KEPT_WITH_ACCOUNT = env_list("ERASURE_KEPT_WITH_ACCOUNT", ["memories.ApiKey"])
# The Redis of the hot-memory cache; REDIS_URL when unset (in-process cache without either).
HOT_CACHE_REDIS_URL = env_str("HOT_CACHE_REDIS_URL")

# ---------------------------------------------------------------------------------------------
# Hot-memory cache (hotcache/): each owner's pinned and recalled context memories, dropped on change
# ---------------------------------------------------------------------------------------------
HOT_CACHE_ENABLED = env_bool("HOT_CACHE_ENABLED", True)
# An entry's lifetime; a change of the owner's memories ends it at once, whatever is left.
HOT_CACHE_TTL_SECONDS = env_int("HOT_CACHE_TTL_SECONDS", 3600, minimum=1)
# Entries kept in a process without Redis (least recently used dropped first).
HOT_CACHE_MAX_ENTRIES = env_int("HOT_CACHE_MAX_ENTRIES", 10_000, minimum=1)

# ---------------------------------------------------------------------------------------------
# What searches return: the memories' access counts, and the per-query access log (accesslog/) of
# which search or context call returned which memories
# ---------------------------------------------------------------------------------------------
# The memories a search returns count as used (access count, last access): written off the query
# path, each process's searches sent in one batch at least this often and at most this many a batch.
ACCESS_COUNT_FLUSH_SECONDS = env_float("ACCESS_COUNT_FLUSH_SECONDS", 1.0, minimum=0.01)
ACCESS_COUNT_FLUSH_SEARCHES = env_int("ACCESS_COUNT_FLUSH_SEARCHES", 50, minimum=1)
# Days a logged call is kept (pruned hourly); 0 records nothing. Checked by accesslog.checks.
ACCESS_LOG_RETENTION_DAYS = env_int("ACCESS_LOG_RETENTION_DAYS", 30, minimum=0)
# Calls are written off the query path, in batches of at most this many, at least this often.
ACCESS_LOG_FLUSH_ENTRIES = env_int("ACCESS_LOG_FLUSH_ENTRIES", 200, minimum=1)
ACCESS_LOG_FLUSH_SECONDS = env_float("ACCESS_LOG_FLUSH_SECONDS", 5, minimum=0.1)
CELERY_BEAT_SCHEDULE["access-log-prune"] = {"task": "accesslog.tasks.access_log_prune_task", "schedule": 3600}

# ---------------------------------------------------------------------------------------------
# Attachments (seed 001): files and images shared in turns
# ---------------------------------------------------------------------------------------------
# Content types whose bytes attachments/sniff.py can verify; a declared type must match the bytes.
ATTACHMENT_VERIFIABLE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "text/markdown",
    "text/csv",
    "application/json",
)
ATTACHMENT_ALLOWED_TYPES = env_list("ATTACHMENT_ALLOWED_TYPES", list(ATTACHMENT_VERIFIABLE_TYPES))
for _type in ATTACHMENT_ALLOWED_TYPES:
    if _type not in ATTACHMENT_VERIFIABLE_TYPES:
        raise ImproperlyConfigured(
            f"ATTACHMENT_ALLOWED_TYPES: {_type!r} cannot be verified; "
            f"choose from {', '.join(ATTACHMENT_VERIFIABLE_TYPES)}"
        )
ATTACHMENT_MAX_BYTES = env_int("ATTACHMENT_MAX_BYTES", 5 * 1024 * 1024, minimum=1)
ATTACHMENT_MAX_PER_TURN = env_int("ATTACHMENT_MAX_PER_TURN", 5, minimum=1, maximum=100)
# Files arrive base64-encoded in the JSON body (4 bytes per 3), which MAX_REQUEST_BYTES caps.
if ATTACHMENT_MAX_BYTES * 4 // 3 + 64 * 1024 > DATA_UPLOAD_MAX_MEMORY_SIZE:
    raise ImproperlyConfigured(
        f"ATTACHMENT_MAX_BYTES={ATTACHMENT_MAX_BYTES} does not fit base64-encoded in MAX_REQUEST_BYTES="
        f"{DATA_UPLOAD_MAX_MEMORY_SIZE}; raise MAX_REQUEST_BYTES to at least "
        f"{ATTACHMENT_MAX_BYTES * 4 // 3 + 64 * 1024}"
    )
# Days an attachment is kept; the lifecycle deletes it (row and file) afterwards. 0 keeps it until erased.
ATTACHMENT_RETENTION_DAYS = env_int("ATTACHMENT_RETENTION_DAYS", 365, minimum=0)
# Any Django storage backend (e.g. storages.backends.s3.S3Storage) with its options as a JSON object.
_attachment_options = env_str("ATTACHMENT_STORAGE_OPTIONS", "")
try:
    _attachment_options = json.loads(_attachment_options) if _attachment_options else None
except ValueError:
    raise ImproperlyConfigured("ATTACHMENT_STORAGE_OPTIONS is not valid JSON") from None
if _attachment_options is not None and not isinstance(_attachment_options, dict):
    raise ImproperlyConfigured("ATTACHMENT_STORAGE_OPTIONS must be a JSON object")
STORAGES["attachments"] = {
    "BACKEND": env_str("ATTACHMENT_STORAGE_BACKEND", "") or "django.core.files.storage.FileSystemStorage",
    "OPTIONS": _attachment_options
    if _attachment_options is not None
    else {"location": str(Path(env_str("ATTACHMENT_DIR", "") or DATA_DIR / "attachments"))},
}

# ---------------------------------------------------------------------------------------------
# Request analytics (analytics/): counted per process, added into the database in batches
# ---------------------------------------------------------------------------------------------
REQUEST_ANALYTICS = env_bool("REQUEST_ANALYTICS", True)
REQUEST_ANALYTICS_FLUSH_SECONDS = env_float("REQUEST_ANALYTICS_FLUSH_SECONDS", 10, minimum=0.05, maximum=3600)
REQUEST_ANALYTICS_FLUSH_REQUESTS = env_int("REQUEST_ANALYTICS_FLUSH_REQUESTS", 500, minimum=1)
