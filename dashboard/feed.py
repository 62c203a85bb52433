"""The live feed's first screen: recent events rebuilt from the rows they left behind.

Live events are pushed and not stored, so a page opened later would start empty. Every event type
the feed shows leaves a row (a history row, a turn, an ended session, a finished extraction job, a
lifecycle run), and each is turned back into the event's shape here, with its time. Each type is
read on its own with its own limit, so a flood of turns cannot push the rarer events out.
"""

from datetime import timedelta

from django.db.models import Count, Max
from django.utils import timezone

from memories.models import EventType, LifecycleRun, MemoryEvent, MemoryRelation, RelationType
from memories.services.lifecycle import lifecycle_completed_payload
from memories.services.memories import memory_changed_payload
from sessions.models import ChatSession, ConversationTurn, ExtractionJob

# The event types the feed rebuilds from their rows, then those it only shows as they happen (progress,
# rule alerts and notifications leave no row behind); the page's filter lists both, in this order.
FEED_TYPES = (
    "memory.changed",
    "memory.contradiction",
    "extraction.completed",
    "session.ended",
    "turn.created",
    "lifecycle.completed",
)
LIVE_ONLY_TYPES = ("lifecycle.progress", "memory.write.important", "notification")
RECENT_DAYS = 7
MAX_LIMIT = 100
# Lifecycle checkpoints of decay are bookkeeping, not something that happened to the memory.
QUIET_EVENTS = (EventType.DECAY,)
# A history row's type as the live event names its action (memory_create publishes "added").
ACTION_OF = {EventType.ADD: "added"}


def _memory_changed(owner, since, limit):
    rows = (
        MemoryEvent.objects.filter(owner=owner, created_at__gte=since)
        .exclude(event_type__in=QUIET_EVENTS)
        .select_related("memory")
        .only(
            "event_type",
            "created_at",
            "memory__id",
            "memory__content",
            "memory__category",
            "memory__status",
            "memory__strength",
        )
        .order_by("-created_at", "-id")[:limit]
    )
    for row in rows:
        yield row.created_at, memory_changed_payload(row.memory, ACTION_OF.get(row.event_type, row.event_type))


def _contradictions(owner, since, limit):
    rows = (
        MemoryRelation.objects.filter(owner=owner, type=RelationType.CONTRADICTS, created_at__gte=since)
        .select_related("source", "target")
        .only("created_at", "source__id", "source__content", "target__id", "target__content")
        .order_by("-created_at", "-id")[:limit]
    )
    for rel in rows:
        yield (
            rel.created_at,
            {
                "new": {"id": str(rel.source.pk), "content": rel.source.content},
                "old": {"id": str(rel.target.pk), "content": rel.target.content},
            },
        )


def _extractions(owner, since, limit):
    rows = (
        ExtractionJob.objects.filter(owner=owner, status="done", finished_at__gte=since)
        .only("session_id", "kind", "result", "finished_at")
        .order_by("-finished_at", "-id")[:limit]
    )
    for job in rows:
        result = job.result if isinstance(job.result, dict) else {}
        yield job.finished_at, {"session_id": str(job.session_id), "kind": job.kind, **result}


def _sessions_ended(owner, since, limit):
    rows = (
        ChatSession.objects.filter(owner=owner, ended_at__gte=since)
        .only("id", "turn_count", "ended_at")
        .order_by("-ended_at", "-id")[:limit]
    )
    for session in rows:
        yield session.ended_at, {"session_id": str(session.pk), "turn_count": session.turn_count}


def _turns(owner, since, limit):
    # One event per session with its number of recent turns, as the feed folds them anyway.
    rows = (
        ConversationTurn.objects.filter(owner=owner, created_at__gte=since)
        .values("session_id")
        .annotate(count=Count("*"), last_at=Max("created_at"), last_sequence=Max("sequence"))
        .order_by("-last_at")[:limit]
    )
    for row in rows:
        data = {"session_id": str(row["session_id"]), "sequence": row["last_sequence"], "count": row["count"]}
        yield row["last_at"], data


def _lifecycle(owner, since, limit):
    rows = (
        LifecycleRun.objects.filter(owner=owner, finished_at__gte=since)
        .only("id", "status", "counts", "error", "duration_ms", "finished_at")
        .order_by("-finished_at", "-id")[:limit]
    )
    for run in rows:
        yield run.finished_at, lifecycle_completed_payload(run)


READERS = {
    "memory.changed": _memory_changed,
    "memory.contradiction": _contradictions,
    "extraction.completed": _extractions,
    "session.ended": _sessions_ended,
    "turn.created": _turns,
    "lifecycle.completed": _lifecycle,
}


def feed_recent(*, owner, types: list[str] | None = None, limit: int = 20) -> list[dict]:
    """The owner's most recent events of `types` (all when None) from the last RECENT_DAYS days,
    newest first, at most `limit` of each type."""
    since = timezone.now() - timedelta(days=RECENT_DAYS)
    events = []
    for event_type in types if types is not None else FEED_TYPES:
        for at, data in READERS[event_type](owner, since, limit):
            events.append({"type": event_type, "data": data, "at": at.isoformat()})
    events.sort(key=lambda e: e["at"], reverse=True)
    return events
