"""Request analytics, counted off the request path.

Each API request adds to a per-process buffer (memory_project.batching: no query). The buffer is
sent as one batch to the background every REQUEST_ANALYTICS_FLUSH_SECONDS or
REQUEST_ANALYTICS_FLUSH_REQUESTS requests, whichever comes first, and the batch is added into
RequestDaily rows with one upsert per row. A batch carries an id recorded in the same transaction,
so a task that runs twice adds it once. Figures are per owner, agent, day and kind, stored, so they
survive restarts and add up across processes.
"""

import bisect
import logging
import uuid
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from analytics.models import BUCKETS, LATENCY_BOUNDS_MS, RequestDaily, RequestStatBatch
from erasure.models import ErasureReceipt
from memory_project.background import background_send
from memory_project.batching import BatchBuffer
from memory_project.text import storable

logger = logging.getLogger(__name__)

# Applied batch ids are kept this long: far longer than any retry of the task that sent them.
BATCH_ID_DAYS = 7

_buffer = BatchBuffer(
    seconds_setting="REQUEST_ANALYTICS_FLUSH_SECONDS",
    items_setting="REQUEST_ANALYTICS_FLUSH_REQUESTS",
    flush=lambda: request_stats_flush(),
)


def _bucket(ms: float) -> int:
    return bisect.bisect_left(LATENCY_BOUNDS_MS, ms)


def request_record(*, owner_id: int, agent: str, kind: str, ms: float, error: bool = False) -> None:
    """Count one request (called by analytics.middleware after the response is made)."""

    def add(row: list | None) -> list:
        if row is None:
            # The last item is when the row's first request was counted (see _UPSERT).
            row = [0, 0, 0.0, 0.0, [0] * BUCKETS, timezone.now().isoformat()]
        row[0] += 1
        row[1] += int(error)
        row[2] += ms
        row[3] = max(row[3], ms)
        row[4][_bucket(ms)] += 1
        return row

    # The agent comes as the request named it, before any view checked it: one buffered row that
    # PostgreSQL text cannot hold (a NUL byte, a lone surrogate) failed the whole batch, and every
    # owner's counts in it were lost. Such a request is counted without an agent.
    agent = agent[:100] if storable(agent) else ""
    _buffer.add((int(owner_id), agent, timezone.now().date().isoformat(), kind), add)


def _take() -> list[list]:
    return [[*key, *values] for key, values in _buffer.take().items()]


def request_stats_flush(*, inline: bool = False) -> int:
    """Send what this process counted so far; `inline` adds it in now (the analytics page reads
    right after). Returns the number of rows sent."""
    # analytics.tasks imports this module: the task is imported when a batch is sent.
    from analytics.tasks import request_stats_apply_task

    rows = _take()
    if not rows:
        return 0
    batch_id = str(uuid.uuid4())
    if inline:
        request_stats_apply(batch_id=batch_id, rows=rows)
    else:
        background_send(request_stats_apply_task, batch_id, rows)
    return len(rows)


_UPSERT = f"""
    INSERT INTO {RequestDaily._meta.db_table} AS t
        (owner_id, agent, day, kind, count, errors, total_ms, max_ms, buckets)
    SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s
    WHERE EXISTS (SELECT 1 FROM {get_user_model()._meta.db_table} WHERE id = %s)
      AND NOT EXISTS (
          SELECT 1 FROM {ErasureReceipt._meta.db_table} r
          WHERE r.owner_id = %s AND (r.agent IS NULL OR r.agent = %s) AND r.erased_at >= %s::timestamptz)
    ON CONFLICT (owner_id, agent, day, kind) DO UPDATE SET
        count = t.count + excluded.count,
        errors = t.errors + excluded.errors,
        total_ms = t.total_ms + excluded.total_ms,
        max_ms = greatest(t.max_ms, excluded.max_ms),
        buckets = (SELECT array_agg(a + b ORDER BY i)
                   FROM unnest(t.buckets, excluded.buckets) WITH ORDINALITY u(a, b, i))
"""


def request_stats_apply(*, batch_id: str, rows: list[list]) -> bool:
    """Add one batch into RequestDaily; False when that batch was added already."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {RequestStatBatch._meta.db_table} (id, applied_at) VALUES (%s, now()) "
            "ON CONFLICT (id) DO NOTHING RETURNING id",
            [batch_id],
        )
        if cursor.fetchone() is None:
            return False
        # Wait for an erasure of these owners in progress (it holds their user rows FOR UPDATE): the
        # upserts below then see its receipt, instead of a snapshot taken before it committed.
        owners = sorted({int(row[0]) for row in rows})
        cursor.execute(
            f"SELECT id FROM {get_user_model()._meta.db_table} WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE", [owners]
        )
        # Owners in a stable order, so two batches upserting the same rows never deadlock.
        for owner_id, agent, day, kind, count, errors, total_ms, max_ms, buckets, *first in sorted(rows):
            # An owner deleted since the request was counted is skipped, not an error; so are counts
            # of an owner (or agent) erased after they began: an erasure leaves none of their rows,
            # and a batch still in flight must not bring one back.
            since = first[0] if first else f"{day}T00:00:00+00:00"
            values = [owner_id, agent, day, kind, count, errors, total_ms, max_ms, buckets]
            cursor.execute(_UPSERT, [*values, owner_id, owner_id, agent, since])
        RequestStatBatch.objects.filter(applied_at__lt=timezone.now() - timedelta(days=BATCH_ID_DAYS)).delete()
    return True
