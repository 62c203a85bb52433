"""Seed 000 §5.2: which search or context call returned which memories, at which rank.

Recording never queries: a call's answer is added to a per-process buffer
(memory_project.batching), sent as one batch to the background every ACCESS_LOG_FLUSH_SECONDS or
ACCESS_LOG_FLUSH_ENTRIES calls, whichever comes first, and written there with two bulk inserts.
Each call carries an id given here, so a batch applied twice adds it once. Rows older than
ACCESS_LOG_RETENTION_DAYS are pruned by a periodic task; 0 days records nothing.
"""

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
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


def access_log_apply(*, entries: list[list]) -> int:
    """Write a batch; calls of owners erased since, and memories deleted since, are left out."""
    owner_ids = {e[1] for e in entries}
    owners = set(get_user_model()._base_manager.filter(pk__in=owner_ids).values_list("pk", flat=True))
    # A call answered before its owner's data was erased is not written after the erasure.
    erased = dict(
        ErasureReceipt.objects.filter(owner_id__in=owner_ids)
        .values_list("owner_id")
        .annotate(last=Max("erased_at"))
        .order_by()
    )
    entries = [
        e for e in entries if e[1] in owners and (e[1] not in erased or datetime.fromisoformat(e[6]) > erased[e[1]])
    ]
    wanted = {(e[1], hit[0]) for e in entries for hit in e[7]}
    existing = set(Memory.objects.filter(pk__in={m for _, m in wanted}).values_list("owner_id", "id"))
    existing = {(owner_id, str(pk)) for owner_id, pk in existing}
    logs, hits = [], []
    for call_id, owner_id, kind, agent, query, results, at, found in entries:
        at = datetime.fromisoformat(at)
        logs.append(
            QueryLog(id=call_id, owner_id=owner_id, kind=kind, agent=agent, query=query, results=results, at=at)
        )
        hits += [
            QueryLogHit(query_log_id=call_id, owner_id=owner_id, memory_id=memory_id, rank=rank, score=score, at=at)
            for memory_id, rank, score in found
            # Only the caller's own memories: a result never names another owner's row.
            if (owner_id, memory_id) in existing
        ]
    with transaction.atomic():
        # A retried batch: the calls already written are left out (ids are given at record time).
        done = {str(i) for i in QueryLog.objects.filter(id__in=[log.id for log in logs]).values_list("id", flat=True)}
        logs = [log for log in logs if str(log.id) not in done]
        QueryLog.objects.bulk_create(logs, ignore_conflicts=True)
        QueryLogHit.objects.bulk_create([h for h in hits if str(h.query_log_id) not in done], ignore_conflicts=True)
    return len(logs)


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
