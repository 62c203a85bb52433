"""Writes to memories. Every change records a MemoryEvent with before/after and actor."""

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memories import scoring
from memories.drafts import MemoryDraft
from memories.models import EventType, Memory, MemoryEvent, MemorySource, Status
from memories.moderation import REASON as MODERATION_REASON
from memories.moderation import moderation_check
from memories.services.embeddings import embedding_get
from memories.services.entities import memory_entities_link
from memory_project.events import event_publish
from memory_project.exceptions import ServiceError
from memory_project.text import normalize

SNAPSHOT_FIELDS = (
    "content",
    "category",
    "agent",
    "subject",
    "predicate",
    "structured_data",
    "importance",
    "strength",
    "confidence",
    "retention",
    "expires_at",
    "status",
    "pinned",
)
EDITABLE_FIELDS = frozenset(SNAPSHOT_FIELDS) - {"agent"}
# Held for moderation: only a moderator (staff) may move a memory from these into the live ones.
HELD_STATUSES = frozenset({Status.PENDING_REVIEW, Status.REJECTED})
# Live memories reach the prompt (active) or search and reinforcement (archived).
LIVE_STATUSES = frozenset({Status.ACTIVE, Status.ARCHIVED})


class ModerationRequired(ServiceError):
    status_code = 403
    code = "moderation_required"


def memory_snapshot(memory: Memory) -> dict[str, Any]:
    data = {}
    for field in SNAPSHOT_FIELDS:
        value = getattr(memory, field)
        data[field] = value.isoformat() if isinstance(value, datetime) else value
    return data


def memory_event_record(
    *,
    memory: Memory,
    event_type: str,
    actor: str,
    before: dict | None = None,
    after: dict | None = None,
    reason: str = "",
    session=None,
) -> MemoryEvent:
    return MemoryEvent.objects.create(
        owner_id=memory.owner_id,
        memory=memory,
        event_type=event_type,
        before=before,
        after=after,
        actor=actor,
        reason=reason[:500],
        session=session,
    )


def memory_changed_payload(memory: Memory, event_type: str) -> dict:
    """The data of a "memory.changed" event: what happened, and the memory as the live views show it."""
    return {
        "action": event_type,
        "memory": {
            "id": str(memory.id),
            "content": memory.content,
            "category": memory.category,
            "status": memory.status,
            "strength": round(memory.strength, 4),
        },
    }


@transaction.atomic
def memory_create(
    *,
    owner,
    draft: MemoryDraft,
    actor: str,
    strength: float | None = None,
    source_session=None,
    source_turns: Iterable = (),
    embedding: list[float] | None = None,
    event_type: str = EventType.ADD,
    reason: str = "",
) -> Memory:
    """Store `draft` as it is (no merge decision: `memory_write` is the way for what is said)."""
    content = draft.content
    importance_value = scoring.importance_value(draft.importance)
    observed = draft.observed_at or timezone.now()
    status = draft.status
    # Whoever asks for a live status, instruction-like text waits for review (one check, every path).
    if status in (None, *LIVE_STATUSES) and moderation_check(content).flagged:
        status = Status.PENDING_REVIEW
    status = status or Status.ACTIVE
    review_reason = MODERATION_REASON if status == Status.PENDING_REVIEW else ""
    initial = scoring.initial_strength(importance_value) if strength is None else strength
    memory = Memory(
        owner=owner,
        agent=draft.agent,
        content=content,
        category=draft.category,
        subject=draft.subject,
        predicate=draft.predicate,
        structured_data=draft.structured_data,
        embedding=embedding if embedding is not None else embedding_get(owner=owner, text=content),
        importance=importance_value,
        strength=initial,
        base_strength=initial,
        confidence=draft.confidence,
        retention=draft.retention,
        expires_at=draft.expires_at or scoring.expires_at_for(draft.retention, timezone.now()),
        status=status,
        pinned=draft.pinned and status == Status.ACTIVE,
        review_reason=review_reason,
        source=draft.source,
        source_session=source_session,
        observed_at=observed,
        last_reinforced_at=observed,
    )
    memory.text_keys_set()
    memory.save(force_insert=True)
    turns = list(source_turns)
    if turns:
        MemorySource.objects.bulk_create(
            [MemorySource(owner_id=owner.pk, memory=memory, turn=t, position=i) for i, t in enumerate(turns)],
            ignore_conflicts=True,
        )
    memory_entities_link(memory=memory)
    memory_event_record(
        memory=memory,
        event_type=event_type,
        actor=actor,
        after=memory_snapshot(memory),
        reason=reason,
        session=source_session,
    )
    event_publish(owner_id=owner.pk, type="memory.changed", data=memory_changed_payload(memory, "added"))
    if memory.importance >= scoring.importance_value("high"):  # seed 003 §11.2
        event_publish(
            owner_id=owner.pk,
            type="memory.write.important",
            data={
                "memory_id": str(memory.id),
                "content": memory.content,
                "category": memory.category,
                "importance": memory.importance,
                "status": memory.status,
            },
        )
    return memory


@transaction.atomic
def memory_update(
    *,
    memory: Memory,
    actor: str,
    event_type: str = EventType.UPDATE,
    reason: str = "",
    session=None,
    moderator: bool = False,
    note: dict | None = None,
    **changes: Any,
) -> Memory:
    """Apply `changes` (editable fields only), re-embedding when the content changes.

    Moderation holds here for every caller: only a `moderator` (staff) moves a memory out of
    pending_review or rejected into a live status, and new content, or a forgotten memory brought
    back, is checked again (a moderator setting the status in the same call has decided already).
    `note` goes into the history row beside the new version (what was merged in, what superseded it).
    """
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
    before = memory_snapshot(memory)
    if before["status"] in HELD_STATUSES and changes.get("status") in LIVE_STATUSES and not moderator:
        raise ModerationRequired(f"Only staff can approve a memory held for moderation (it is {before['status']}).")
    if "content" in changes:
        changes["content"] = normalize(changes["content"])
    if "importance" in changes:
        changes["importance"] = scoring.importance_value(changes["importance"])
    if "retention" in changes and "expires_at" not in changes:
        changes["expires_at"] = scoring.expires_at_for(changes["retention"], timezone.now())
    for field, value in changes.items():
        setattr(memory, field, value)
    if "strength" in changes:
        memory.base_strength = memory.strength
        memory.last_reinforced_at = timezone.now()
    if "content" in changes and changes["content"] != before["content"]:
        memory.embedding = embedding_get(owner=memory.owner_id, text=memory.content)
    if {"content", "subject"} & set(changes):
        memory.text_keys_set()
    rechecks = memory.content != before["content"] or before["status"] not in LIVE_STATUSES
    decided = moderator and "status" in changes
    if memory.status in LIVE_STATUSES and rechecks and not decided and moderation_check(memory.content).flagged:
        memory.status = Status.PENDING_REVIEW
        memory.review_reason = MODERATION_REASON
    if memory.status != Status.ACTIVE:
        memory.pinned = False
    after = memory_snapshot(memory)
    if after == before:
        return memory
    memory.version += 1
    memory.save()
    if memory.content != before["content"] or memory.subject != before["subject"]:
        memory_entities_link(memory=memory, relink=True)
    memory_event_record(
        memory=memory,
        event_type=event_type,
        actor=actor,
        before=before,
        after={**after, **(note or {})},
        reason=reason,
        session=session,
    )
    event_publish(owner_id=memory.owner_id, type="memory.changed", data=memory_changed_payload(memory, event_type))
    return memory


@transaction.atomic
def memory_reinforce(*, memory: Memory, actor: str, session=None, reason: str = "", incoming: str = "") -> Memory:
    """Said again: stronger. `incoming` is the text that was said, kept in the history row (nothing
    accepted is lost, even when it is absorbed)."""
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
    before = memory_snapshot(memory)
    memory.strength = scoring.reinforce(memory.strength)
    memory.base_strength = memory.strength
    memory.hit_count += 1
    memory.last_reinforced_at = timezone.now()
    if memory.status == Status.ARCHIVED:
        memory.status = Status.ACTIVE
    memory.save()
    memory_event_record(
        memory=memory,
        event_type=EventType.REINFORCE,
        actor=actor,
        before=before,
        after={**memory_snapshot(memory), **({"incoming": incoming} if incoming else {})},
        reason=reason,
        session=session,
    )
    return memory
