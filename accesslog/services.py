"""Seed 000 §5.2: which search or context call returned which memories, at which rank.

Recording never queries: a call's answer is added to a per-process buffer
(memory_project.batching), sent as one batch to the background every ACCESS_LOG_FLUSH_SECONDS or
ACCESS_LOG_FLUSH_ENTRIES calls, whichever comes first, and written there with one statement.
Each call carries an id given here, so a batch applied twice adds it once. Rows older than
ACCESS_LOG_RETENTION_DAYS are pruned by a periodic task; 0 days records nothing.
"""

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from accesslog.models import QueryLog, QueryLogHit
from erasure.models import ErasureReceipt
from memories.models import Memory
from memory_project.background import background_send
from memory_project.batching import BatchBuffer

logger = logging.getLogger(__name__)

QUERY_MAX_CHARS = 1000
PRUNE_BATCH = 5000

_buffer = BatchBuffer(
    seconds_setting="ACCESS_LOG_FLUSH_SECONDS",
    items_setting="ACCESS_LOG_FLUSH_ENTRIES",
    flush=lambda: access_log_flush(),
)


def access_log_record(*, owner_id: int, kind: str, query: str, agent: str | None, results: list[dict]) -> None:
    """Log one call's answer (its memories and their ranks); called by the API after the selector."""
    if settings.ACCESS_LOG_RETENTION_DAYS == 0:
        return
    hits = [
        [str(r["id"]), rank, r.get("score")]
        for rank, r in enumerate(results, start=1)
        if r.get("type", "memory") == "memory"
    ]
    if not hits:
        return
    entry = [str(uuid.uuid4()), int(owner_id), kind, agent, (query or "")[:QUERY_MAX_CHARS], len(results)]
    entry += [timezone.now().isoformat(), hits]
    _buffer.add(entry[0], lambda _: entry)


def access_log_served(
    sender, *, owner_id: int, kind: str, query: str, agent: str | None, results: list[dict], **kwargs
):
    """Receiver of memories.signals.memories_served."""
    access_log_record(owner_id=owner_id, kind=kind, query=query, agent=agent, results=results)


def _take() -> list[list]:
    return list(_buffer.take().values())


def access_log_flush(*, inline: bool = False) -> int:
    """Send what this process logged so far; `inline` writes it now (a page that reads right after).
    Returns the number of calls sent."""
    # accesslog.tasks imports this module: the task is imported when a batch is sent.
    from accesslog.tasks import access_log_apply_task

    entries = _take()
    if not entries:
        return 0
    if inline:
        access_log_apply(entries=entries)
    else:
        background_send(access_log_apply_task, entries)
    return len(entries)


# One statement per batch: the calls whose owner still exists and was not erased since they were
# answered, less those a retried batch already wrote (RETURNING names only the calls inserted now),
# then their hits on memories of that owner that still exist. Django's bulk_create of the same rows
# cost ~130 ms per 200 calls on the web worker's background thread, beside the searches it logs.
_APPLY_SQL = """
WITH calls AS (
    SELECT * FROM unnest(%s::uuid[], %s::int[], %s::text[], %s::text[], %s::text[], %s::int[], %s::timestamptz[])
        AS c(id, owner_id, kind, agent, query, results, at)
), logged AS (
    INSERT INTO {logs} (id, owner_id, kind, agent, query, results, at)
    SELECT c.id, c.owner_id, c.kind, c.agent, c.query, c.results, c.at
    FROM calls c JOIN {users} u ON u.id = c.owner_id
    WHERE NOT EXISTS (
        SELECT 1 FROM {receipts} r WHERE r.owner_id = c.owner_id AND r.erased_at >= c.at
    )
    ON CONFLICT (id) DO NOTHING
    RETURNING id, owner_id, at
), hits AS (
    INSERT INTO {hits} (query_log_id, owner_id, memory_id, rank, score, at)
    SELECT l.id, l.owner_id, h.memory_id, h.rank, h.score, l.at
    FROM unnest(%s::uuid[], %s::uuid[], %s::int[], %s::float8[]) AS h(call_id, memory_id, rank, score)
    JOIN logged l ON l.id = h.call_id
    -- Only the caller's own memories: a result never names another owner's row.
    JOIN {memories} m ON m.id = h.memory_id AND m.owner_id = l.owner_id
    ON CONFLICT DO NOTHING
)
SELECT count(*) FROM logged
"""


def access_log_apply(*, entries: list[list]) -> int:
    """Write a batch; calls of owners erased since, and memories deleted since, are left out.
    Returns the number of calls written (a batch applied again writes none)."""
    calls = list(zip(*[entry[:7] for entry in entries])) or [[]] * 7
    hits = [(entry[0], memory_id, rank, score) for entry in entries for memory_id, rank, score in entry[7]]
    hit_columns = list(zip(*hits)) or [[]] * 4
    tables = {
        "users": get_user_model()._meta.db_table,
        "receipts": ErasureReceipt._meta.db_table,
        "logs": QueryLog._meta.db_table,
        "hits": QueryLogHit._meta.db_table,
        "memories": Memory._meta.db_table,
    }
    with connection.cursor() as cursor:
        cursor.execute(_APPLY_SQL.format(**tables), [*map(list, calls), *map(list, hit_columns)])
        return cursor.fetchone()[0]


def access_log_prune(*, now: datetime | None = None) -> int:
    """Delete the calls logged more than ACCESS_LOG_RETENTION_DAYS ago (in batches); returns how many."""
    days = settings.ACCESS_LOG_RETENTION_DAYS
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(QueryLog.objects.filter(at__lt=cutoff).values_list("id", flat=True)[:PRUNE_BATCH])
            if not ids:
                return deleted
            QueryLogHit.objects.filter(query_log_id__in=ids)._raw_delete("default")
            deleted += QueryLog.objects.filter(id__in=ids)._raw_delete("default")


def access_log_erasure_hook(*, context) -> None:
    """Calls of the owner still in this process's buffer go with the erasure (other processes' are
    dropped when applied: they predate the receipt)."""
    _buffer.discard(lambda _, entry: entry[1] != context.owner_id)
