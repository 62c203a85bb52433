"""Forgetting for time and room: expired memories and attachments, and the per-owner cap."""

from django.conf import settings
from django.db import connection

from attachments.services import attachments_expire
from memories.models import EventType
from memories.services.lifecycle.common import StepContext, status_move

# Retentions whose expiry means "forget it"; long memories fade through decay instead.
EXPIRING_RETENTIONS = ("transient", "short")


def expire_step(run: StepContext) -> tuple[dict, dict]:
    """Todos and transient / short memories whose expires_at passed are forgotten."""
    moved = status_move(
        run,
        to="forgotten",
        where="m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent' "
        "AND m.expires_at <= %(now)s AND (m.retention = ANY(%(retentions)s) OR m.category = 'todo')",
        event_type=EventType.EXPIRE,
        reason="expired",
        params={"retentions": list(EXPIRING_RETENTIONS)},
    )
    return {"expired": moved}, {}


def attachments_step(run: StepContext) -> tuple[dict, dict]:
    """Seed 001 (清理过期附件): attachments past their retention go, rows and files."""
    return {"deleted": attachments_expire(owner_id=run.owner.pk, now=run.now)}, {}


def cap_step(run: StepContext) -> tuple[dict, dict]:
    """Beyond MEMORY_OWNER_CAP active+archived memories, forget the least important, least recent first."""
    cap = int(settings.MEMORY_OWNER_CAP)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories_memory WHERE owner_id = %s AND status IN ('active', 'archived')",
            [run.owner.pk],
        )
        total = cursor.fetchone()[0]
    excess = max(0, total - cap)
    counts = {"total": total, "cap": cap, "forgotten": 0}
    if not excess:
        return counts, {}
    counts["forgotten"] = status_move(
        run,
        to="forgotten",
        where="m.id IN (SELECT id FROM memories_memory WHERE owner_id = %(owner)s "
        "AND status IN ('active', 'archived') AND NOT pinned AND retention <> 'permanent' "
        "ORDER BY importance, greatest(observed_at, coalesce(last_accessed_at, observed_at), "
        "coalesce(last_reinforced_at, observed_at)), id LIMIT %(excess)s) "
        "AND m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent'",
        reason=f"over the per-owner cap of {cap}",
        params={"excess": excess},
    )
    return counts, {}
