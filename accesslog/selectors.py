from django.conf import settings
from django.db.models import Count, Max, Prefetch

from accesslog.models import QueryLog, QueryLogHit


def memory_access_summary(*, owner, memory_id) -> dict:
    """How many logged calls returned the memory, and the latest of them."""
    found = QueryLogHit.objects.filter(owner=owner, memory_id=memory_id).aggregate(
        queries=Count("query_log_id", distinct=True), last_at=Max("at")
    )
    last = None
    if found["last_at"] is not None:
        last = (
            QueryLogHit.objects.filter(owner=owner, memory_id=memory_id, at=found["last_at"])
            .select_related("query_log")
            .order_by("rank")
            .first()
        )
    return {
        "queries": found["queries"],
        "last_at": found["last_at"],
        "last_query": last.query_log.query if last else None,
        "last_kind": last.query_log.kind if last else None,
        "last_rank": last.rank if last else None,
        "days": settings.ACCESS_LOG_RETENTION_DAYS,
    }


def query_log_list(*, owner, memory_id=None, kind: str | None = None, since=None, until=None):
    """The owner's logged calls, newest first, each with its memories in rank order."""
    logs = QueryLog.objects.filter(owner=owner)
    if memory_id is not None:
        logs = logs.filter(hits__memory_id=memory_id)
    if kind:
        logs = logs.filter(kind=kind)
    if since is not None:
        logs = logs.filter(at__gte=since)
    if until is not None:
        logs = logs.filter(at__lt=until)
    hits = QueryLogHit.objects.order_by("rank").only("query_log_id", "memory_id", "rank", "score")
    return logs.order_by("-at", "id").prefetch_related(Prefetch("hits", queryset=hits))
