"""The actions a person takes on one memory, the same behind every front door: the REST API, the
dashboard (pages and JSON), the Django admin, `manage.py memory`, the memory tools (REST and MCP)
and Telegram.

Each action writes one history event of its own type, whoever asks (the actor and the reason say
who and where), and its live event goes out through memory_project.events after the commit.
"""

import logging
from datetime import datetime

from django.db import transaction
from django.shortcuts import get_object_or_404

from erasure.hooks import ErasureContext
from erasure.plan import erasure_plan
from erasure.services import erasure_delete_planned
from memories.models import EventType, Memory, MemoryEvent, Status
from memories.services.memories import EDITABLE_FIELDS, HELD_STATUSES, memory_update
from memory_project.events import event_publish
from memory_project.exceptions import ServiceError

logger = logging.getLogger(__name__)

# Strength measures use over time; reverting it would undo decay and reinforcement, so a revert
# restores what a person or the extractor wrote and leaves the score alone.
REVERT_SKIP = frozenset({"strength"})


def memory_pin(*, memory: Memory, actor: str, pinned: bool = True) -> Memory:
    """Pin (always in the prompt) or unpin; only an active memory can be pinned."""
    if pinned and memory.status != Status.ACTIVE:
        raise ServiceError("Only active memories can be pinned.", code="not_active")
    return memory_update(
        memory=memory, actor=actor, event_type=EventType.PIN if pinned else EventType.UNPIN, pinned=pinned
    )


def _moved(memory: Memory, actor: str, status: str, event_type: str, **options) -> Memory:
    return memory_update(memory=memory, actor=actor, event_type=event_type, status=status, **options)


def memory_archive(*, memory: Memory, actor: str, reason: str = "archived", moderator: bool = False) -> Memory:
    """Out of the prompt, still found by search and brought back by being said again."""
    return _moved(memory, actor, Status.ARCHIVED, EventType.ARCHIVE, reason=reason, moderator=moderator)


def memory_restore(*, memory: Memory, actor: str, reason: str = "restored", moderator: bool = False) -> Memory:
    """Active again; a memory held for moderation needs a moderator, a forgotten one is checked again."""
    return _moved(memory, actor, Status.ACTIVE, EventType.RESTORE, reason=reason, moderator=moderator)


def memory_forget(*, memory: Memory, actor: str, reason: str = "forgotten", session=None) -> Memory:
    """Forgetting keeps the row and its history (nothing is lost) but search never returns it again."""
    return _moved(memory, actor, Status.FORGOTTEN, EventType.FORGET, reason=reason, session=session)


def memory_moderate(*, memory: Memory, actor: str, approve: bool, moderator: bool) -> Memory:
    """Approve (active) or reject a memory; approving one held for review takes a moderator (staff)."""
    status, reason = (Status.ACTIVE, "approved") if approve else (Status.REJECTED, "rejected")
    return _moved(memory, actor, status, EventType.MODERATE, reason=reason, moderator=moderator)


def memory_change(*, memory: Memory, actor: str, changes: dict, moderator: bool = False) -> Memory:
    """Changes asked for as fields (the REST API's PATCH, the admin's form). A change that is only
    an action's field (pinned, or the status) is that action and writes its event, as the same
    change made with the dashboard's or the admin's buttons does; anything else is an update."""
    if set(changes) == {"pinned"} and (memory.status == Status.ACTIVE or not changes["pinned"]):
        return memory_pin(memory=memory, actor=actor, pinned=changes["pinned"])
    status = changes.get("status") if set(changes) == {"status"} else None
    if status == Status.ARCHIVED:
        return memory_archive(memory=memory, actor=actor, moderator=moderator)
    if status == Status.FORGOTTEN:
        return memory_forget(memory=memory, actor=actor)
    if status == Status.REJECTED:
        return memory_moderate(memory=memory, actor=actor, approve=False, moderator=moderator)
    if status == Status.ACTIVE and memory.status in HELD_STATUSES:
        return memory_moderate(memory=memory, actor=actor, approve=True, moderator=moderator)
    if status == Status.ACTIVE:
        return memory_restore(memory=memory, actor=actor, moderator=moderator)
    return memory_update(memory=memory, actor=actor, moderator=moderator, **changes)


def memory_revert(*, memory: Memory, event_id: int, actor: str, moderator: bool = False) -> Memory:
    """Bring the memory back to how it was right after history row `event_id`, as a new "revert" row."""
    event = get_object_or_404(MemoryEvent, pk=event_id, memory=memory, owner_id=memory.owner_id)
    snapshot = event.after if isinstance(event.after, dict) else event.before
    if not isinstance(snapshot, dict):
        raise ServiceError("That history entry has no recorded version to go back to.", code="no_version")
    changes = {k: v for k, v in snapshot.items() if k in EDITABLE_FIELDS and k not in REVERT_SKIP}
    if isinstance(changes.get("expires_at"), str):
        changes["expires_at"] = datetime.fromisoformat(changes["expires_at"])
    if changes.get("status") != Status.ACTIVE:
        changes["pinned"] = False
    reason = f"reverted to the version of {event.created_at:%Y-%m-%d %H:%M:%S} UTC (history #{event.pk})"
    return memory_update(
        memory=memory, actor=actor, event_type=EventType.REVERT, reason=reason, moderator=moderator, **changes
    )


def memory_delete_hard(*, memory: Memory, actor: str) -> dict[str, int]:
    """Delete the memory for good: its row, its history, its links, the cached embedding of its text
    when no other memory or turn holds that text, and the quotes of it in digests and MEMORY.md.

    Where `memory_forget` keeps the row and its history (nothing is lost), this is for what must not
    be kept at all, so it is the one action that leaves no history row. Returns the counts of what went.
    """
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        # The erasure app's plan follows every foreign key to the memory and runs the hooks other
        # apps register, the same as for a whole owner, so the two erasures cannot drift apart.
        plan = erasure_plan(owner_id=memory.owner_id, memory_ids=[memory.pk])
        context = ErasureContext(owner_id=memory.owner_id, username=memory.owner.get_username(), agent=None, plan=plan)
        counts = erasure_delete_planned(context)
        for action in context.after_commit_actions:
            transaction.on_commit(action, robust=True)
        # Subscribers and the dashboard learn that it is gone, not what it said.
        event_publish(
            owner_id=memory.owner_id,
            type="memory.changed",
            data={"action": "delete", "purged": True, "actor": actor, "memory": {"id": str(memory.pk)}},
        )
    logger.info("purged memory %s of owner %s: %s", memory.pk, memory.owner_id, counts)
    return counts
