"""Writes the dashboard makes: every one goes through memories.services, so each is a history row."""

import uuid

from django.conf import settings
from django.db import transaction

from memories.models import Category, Memory, Retention
from memories.services.actions import memory_archive, memory_forget, memory_moderate, memory_pin, memory_restore
from memories.services.memories import memory_update
from memory_project.exceptions import ServiceError
from memory_project.text import storable

ACTIONS = ("pin", "unpin", "archive", "restore", "forget", "approve", "reject")
MAX_BULK = 500
# What the inline editor and the moderation queue may change.
EDIT_FIELDS = ("content", "category", "importance", "retention", "subject", "predicate")


def memory_edit_changes(data) -> dict:
    """Validated changes from a JSON object; ServiceError with a reason for anything wrong."""
    if not isinstance(data, dict):
        raise ServiceError("Expected a JSON object.")
    unknown = set(data) - set(EDIT_FIELDS)
    if unknown:
        raise ServiceError(f"Unknown or read-only fields: {', '.join(sorted(unknown))}.")
    changes = {}
    for field in ("content", "subject", "predicate"):
        if field in data:
            value = data[field]
            if not isinstance(value, str) or not storable(value):
                raise ServiceError(f"{field} must be text without NUL bytes or lone surrogates.")
            value = value.strip()
            limit = settings.MAX_CONTENT_CHARS if field == "content" else 200
            if len(value) > limit:
                raise ServiceError(f"{field} is longer than {limit} characters.")
            if field == "content" and not value:
                raise ServiceError("content may not be empty.")
            changes[field] = value
    if "category" in data:
        if data["category"] not in Category.values:
            raise ServiceError(f"category must be one of {', '.join(Category.values)}.")
        changes["category"] = data["category"]
    if "retention" in data:
        if data["retention"] not in Retention.values:
            raise ServiceError(f"retention must be one of {', '.join(Retention.values)}.")
        changes["retention"] = data["retention"]
    if "importance" in data:
        value = data["importance"]
        # Compared, never converted: a JSON integer of hundreds of digits has no float (OverflowError),
        # and NaN fails both comparisons.
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ServiceError("importance must be a number between 0 and 1.")
        changes["importance"] = float(value)
    return changes


def memory_edit(*, memory: Memory, actor: str, changes: dict, moderator: bool = False) -> Memory:
    if not changes:
        return memory
    return memory_update(memory=memory, actor=actor, reason="edited in the dashboard", moderator=moderator, **changes)


def memory_action(*, memory: Memory, action: str, actor: str, moderator: bool = False) -> Memory:
    """One of ACTIONS on one memory: the action of memories.services.actions that it names."""
    if action not in ACTIONS:
        raise ServiceError(f"action must be one of {', '.join(ACTIONS)}.")
    if action in ("pin", "unpin"):
        return memory_pin(memory=memory, actor=actor, pinned=action == "pin")
    if action == "archive":
        return memory_archive(memory=memory, actor=actor, reason="archived in the dashboard", moderator=moderator)
    if action == "restore":
        return memory_restore(memory=memory, actor=actor, reason="restored in the dashboard", moderator=moderator)
    if action == "forget":
        return memory_forget(memory=memory, actor=actor, reason="forgotten in the dashboard")
    return memory_moderate(memory=memory, actor=actor, approve=action == "approve", moderator=moderator)


def memory_bulk_action(*, owner, ids, action: str, actor: str, moderator: bool = False) -> dict:
    """The action on each of the owner's memories among `ids`; ids of other owners count as missing."""
    if not isinstance(ids, list) or not ids or len(ids) > MAX_BULK:
        raise ServiceError(f"ids must be a list of 1 to {MAX_BULK} memory ids.")
    if action not in ACTIONS:
        raise ServiceError(f"action must be one of {', '.join(ACTIONS)}.")
    try:
        wanted = [uuid.UUID(str(i)) for i in ids]
    except ValueError:
        raise ServiceError("ids must be memory ids (UUIDs).") from None
    done, skipped = [], []
    memories = {m.pk: m for m in Memory.objects.filter(owner=owner, pk__in=wanted).defer("embedding", "search_vector")}
    for memory_id in wanted:
        memory = memories.get(memory_id)
        if memory is None:
            skipped.append({"id": str(memory_id), "reason": "not found"})
            continue
        try:
            # One transaction per memory: a refusal (pinning an archived one) skips it, not the batch.
            with transaction.atomic():
                memory_action(memory=memory, action=action, actor=actor, moderator=moderator)
            done.append(str(memory_id))
        except ServiceError as error:
            skipped.append({"id": str(memory_id), "reason": error.message})
    return {"done": done, "skipped": skipped}
