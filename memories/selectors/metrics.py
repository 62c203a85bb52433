from django.db import connection
from django.db.models import Count

from hotcache.services import hot_cache_stats
from memories.models import LifecycleRun, Memory, Status
from memories.services.embeddings import embedding_cache_stats
from memories.services.metrics import metric_percentiles
from sessions.models import ChatSession, ConversationTurn, ExtractionJob


def _memory_stats(owner) -> dict:
    """The memory section in one pass over the owner's rows (grouped by status and category)
    instead of one scan per figure; at 100,000 memories each scan read the whole table."""
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT status, category, count(*), sum(importance), sum(strength)
                FROM "{table}" WHERE owner_id = %s GROUP BY status, category""",
            [owner.pk],
        )
        rows = cursor.fetchall()
    by_status: dict[str, int] = {}
    by_category: dict[str, int] = {}
    active = importance = strength = 0
    for status, category, n, sum_importance, sum_strength in rows:
        by_status[status] = by_status.get(status, 0) + n
        if status != Status.FORGOTTEN:
            by_category[category] = by_category.get(category, 0) + n
        if status == Status.ACTIVE:
            active += n
            importance += sum_importance or 0.0
            strength += sum_strength or 0.0
    return {
        "total": sum(by_status.values()),
        "by_status": by_status,
        "by_category": by_category,
        "avg_importance": round(importance / active, 4) if active else 0.0,
        "avg_strength": round(strength / active, 4) if active else 0.0,
    }


def metrics_get(*, owner) -> dict:
    jobs = dict(ExtractionJob.objects.filter(owner=owner).values_list("status").annotate(n=Count("*")).order_by())
    sessions = dict(ChatSession.objects.filter(owner=owner).values_list("status").annotate(n=Count("*")).order_by())
    last_run = LifecycleRun.objects.filter(owner=owner).order_by("-started_at").first()
    return {
        "memories": _memory_stats(owner),
        "sessions": {"total": sum(sessions.values()), "open": sessions.get(ChatSession.SessionStatus.OPEN, 0)},
        "turns": ConversationTurn.objects.filter(owner=owner).count(),
        # Stored turns whose vector is still being computed: until then only full-text search finds them.
        "turns_awaiting_vector": ConversationTurn.objects.filter(owner=owner, embedding__isnull=True).count(),
        "extraction_queue": {k: jobs.get(k, 0) for k in ("pending", "running", "failed", "done")},
        "last_lifecycle_run": (
            {
                "id": last_run.pk,
                "status": last_run.status,
                "started_at": last_run.started_at,
                "duration_ms": last_run.duration_ms,
                "counts": last_run.counts,
            }
            if last_run
            else None
        ),
        # This owner's figures only (in this process): never a process-wide count (issue 12).
        "retrieval_latency_ms": metric_percentiles(name="search_ms", owner_id=owner.pk),
        "embedding_cache": embedding_cache_stats(owner=owner),
        "context_cache": hot_cache_stats(owner_id=owner.pk),
    }
