"""The overview page: the API's metrics and the owner's activity by day."""

from datetime import datetime, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from memories.models import (
    EventType,
    MemoryEvent,
)
from memories.selectors.metrics import metrics_get


def overview_metrics(*, owner) -> dict:
    """The overview's figures are the API's (GET /api/v1/metrics/)."""
    return metrics_get(owner=owner)


ACTIVITY_KINDS = {
    "added": (EventType.ADD, EventType.IMPORT),
    "updated": (
        EventType.UPDATE,
        EventType.MERGE,
        EventType.REVERT,
        EventType.MODERATE,
        EventType.SUPERSEDE,
        EventType.RESTORE,
    ),
    "forgotten": (EventType.FORGET, EventType.EXPIRE),
}


def memory_activity(*, owner, days: int = 30) -> dict:
    """Memories added / updated / forgotten per day over the last `days` days (UTC), zeros included."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    kind_of = {event: kind for kind, events in ACTIVITY_KINDS.items() for event in events}
    rows = (
        MemoryEvent.objects.filter(
            owner=owner,
            created_at__gte=datetime.combine(first, datetime.min.time(), tzinfo=timezone.get_current_timezone()),
            event_type__in=list(kind_of),
        )
        .annotate(day=TruncDate("created_at"))
        .values_list("day", "event_type")
        .annotate(n=Count("*"))
        .order_by()
    )
    labels = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    series = {kind: [0] * days for kind in ACTIVITY_KINDS}
    for day, event_type, n in rows:
        index = (day - first).days
        if 0 <= index < days:
            series[kind_of[event_type]][index] += n
    return {"days": labels, **series}
