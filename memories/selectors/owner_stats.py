"""What `manage.py memory stats` shows of one owner: memories by category and status, sessions, the queue."""

from django.conf import settings
from django.db.models import Avg, Count

from memories.models import Memory, Status
from sessions.models import ChatSession, ConversationTurn, Episode, ExtractionJob


def owner_stats(*, owner) -> dict:
    """Counts of the owner's memories by (category, status), averages of the active ones, how many
    are strong enough to pin; sessions by state; extraction jobs by status."""
    memories = Memory.objects.filter(owner=owner)
    active = memories.filter(status=Status.ACTIVE)
    sessions = ChatSession.objects.filter(owner=owner)
    jobs = ExtractionJob.objects.filter(owner=owner).order_by().values_list("status").annotate(n=Count("pk"))
    return {
        "memories": {
            (c, s): n for c, s, n in memories.order_by().values_list("category", "status").annotate(n=Count("pk"))
        },
        "active": active.aggregate(strength=Avg("strength"), importance=Avg("importance")),
        "pinnable": active.filter(strength__gte=settings.MEMORY_SCORING["PIN_MIN_STRENGTH"]).count(),
        "sessions": dict(sessions.order_by().values_list("status").annotate(n=Count("pk"))),
        "consolidated": sessions.filter(consolidated=True).count(),
        "awaiting_consolidation": sessions.filter(status=ChatSession.SessionStatus.ENDED, consolidated=False).count(),
        "turns": ConversationTurn.objects.filter(owner=owner).count(),
        "episodes": Episode.objects.filter(owner=owner).count(),
        "jobs": dict(jobs),
    }
