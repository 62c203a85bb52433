from django.db.models import Avg, Count

from memories.models import LifecycleRun, Memory
from memories.services import embeddings
from memories.services.metrics import metric_percentiles
from sessions.models import ChatSession, ConversationTurn, ExtractionJob


def metrics_get(*, owner) -> dict:
    memories = Memory.objects.filter(owner=owner)
    by_status = dict(memories.values_list("status").annotate(n=Count("id")).order_by())
    by_category = dict(memories.exclude(status="forgotten").values_list("category").annotate(n=Count("id")).order_by())
    averages = memories.filter(status="active").aggregate(importance=Avg("importance"), strength=Avg("strength"))
    jobs = dict(ExtractionJob.objects.filter(owner=owner).values_list("status").annotate(n=Count("id")).order_by())
    last_run = LifecycleRun.objects.filter(owner=owner).order_by("-started_at").first()
    hits, misses = embeddings.stats["hits"], embeddings.stats["misses"]
    return {
        "memories": {
            "total": sum(by_status.values()),
            "by_status": by_status,
            "by_category": by_category,
            "avg_importance": round(averages["importance"] or 0.0, 4),
            "avg_strength": round(averages["strength"] or 0.0, 4),
        },
        "sessions": {
            "total": ChatSession.objects.filter(owner=owner).count(),
            "open": ChatSession.objects.filter(owner=owner, status="open").count(),
        },
        "turns": ConversationTurn.objects.filter(owner=owner).count(),
        "extraction_queue": {
            "pending": jobs.get("pending", 0),
            "running": jobs.get("running", 0),
            "failed": jobs.get("failed", 0),
            "done": jobs.get("done", 0),
        },
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
        "retrieval_latency_ms": metric_percentiles(name="search_ms"),
        "embedding_cache": {
            "hits": hits,
            "misses": misses,
            "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None,
        },
    }
