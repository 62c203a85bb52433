"""Export: an owner's memories in one format (ours or a seed's), and the conversions other writers share."""

import json
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from memories.formats.categories import category_to_seed_004
from memories.formats.memory_json import (
    FormatError,
    format_timestamp,
    render_memory_json,
)
from memories.formats.memory_md import (
    ARCHIVED,
    MemoryMdEntry,
    render_learnings_md,
    render_memory_md,
    render_user_md,
)
from memories.models import (
    PROCEDURAL_CATEGORIES,
    CoreMemory,
    Memory,
    MemoryRelation,
    Status,
)
from memories.selectors.memories import memory_in_groups
from memories.services.lifecycle import short_ids

EXPORT_FORMATS = ("memory-md", "learnings-md", "memory-json", "user-md", "jsonl")


EXPORT_FILE_NAMES = {
    "memory-md": "MEMORY.md",
    "learnings-md": "learnings.md",
    "memory-json": "memory.json",
    "user-md": "USER.md",
    "jsonl": "memories.jsonl",
}


EXPORT_CONTENT_TYPES = {
    "memory-md": "text/markdown; charset=utf-8",
    "learnings-md": "text/markdown; charset=utf-8",
    "memory-json": "application/json; charset=utf-8",
    "user-md": "text/markdown; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
}


def memory_export(*, owner, fmt: str, agent: str | None = None, group_ids: list | None = None) -> str:
    """Everything of `owner` (one agent namespace when `agent` is given, the memories of some
    memory groups when `group_ids` are) in one format."""
    if fmt not in EXPORT_FORMATS:
        raise FormatError(f"unknown export format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")
    qs = Memory.objects.filter(owner=owner).defer("embedding", "search_vector", "search_ngrams")
    if agent is not None:
        qs = qs.filter(agent=agent)
    if group_ids is not None:
        qs = memory_in_groups(qs, group_ids)
    if fmt == "jsonl":
        relations: dict = {}
        links = MemoryRelation.objects.filter(owner=owner, source__in=qs.values("pk")).order_by("created_at", "id")
        for source_id, target_id, kind, weight in links.values_list("source_id", "target_id", "type", "weight"):
            relations.setdefault(source_id, []).append({"type": kind, "target": str(target_id), "weight": weight})
        return "".join(
            json.dumps(memory_to_jsonl(m, relations=relations.get(m.pk, [])), ensure_ascii=False) + "\n"
            for m in qs.order_by("created_at", "observed_at", "id")
        )
    live = qs.filter(status__in=[Status.ACTIVE, Status.ARCHIVED])
    if fmt == "memory-json":
        core = CoreMemory.objects.filter(owner=owner, agent=agent or "").first()
        return render_memory_json(
            [memory_to_seed_004(m) for m in live.order_by("created_at", "observed_at", "id")],
            rolling_summary=core.rolling_summary if core else "",
        )
    updated_at = timezone.localtime()
    if fmt == "user-md":
        rows = list(live.filter(status=Status.ACTIVE).order_by("-strength", "id"))
        return render_user_md(
            memory_md_entries(rows),
            name=owner.get_full_name() or owner.get_username(),
            updated_at=updated_at,
            per_section=max(1, len(rows)),
        )
    if fmt == "learnings-md":
        rows = list(live.filter(category__in=PROCEDURAL_CATEGORIES).order_by("-strength", "id"))
        return render_learnings_md(memory_md_entries(rows), updated_at=updated_at, archive_below=archive_below())
    rows = list(live.order_by("-strength", "id"))
    return render_memory_md(memory_md_entries(rows), updated_at=updated_at, archive_below=archive_below())


def memory_md_entries(memories: list[Memory]) -> list[MemoryMdEntry]:
    """MEMORY.md entries for `memories` (ids are short unique prefixes of their UUIDs)."""
    ids = short_ids([m.pk for m in memories])
    tz = timezone.get_current_timezone()
    return [
        MemoryMdEntry(
            id=ids[m.pk],
            category=m.category,
            score=min(1.0, max(0.0, m.strength)),
            last_activated=timezone.localtime(m.last_reinforced_at or m.observed_at, tz).date(),
            hits=m.hit_count,
            content=m.content,
            section=ARCHIVED if m.status == Status.ARCHIVED else "active",
        )
        for m in memories
    ]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def memory_to_jsonl(memory: Memory, *, relations: list | None = None) -> dict:
    """One JSONL line; `relations` are the memory's outgoing edges ({type, target id, weight})."""
    return {
        "id": str(memory.pk),
        "content": memory.content,
        "category": memory.category,
        "agent": memory.agent,
        "importance": memory.importance,
        "strength": memory.strength,
        "confidence": memory.confidence,
        "status": memory.status,
        "retention": memory.retention,
        "expires_at": _iso(memory.expires_at),
        "pinned": memory.pinned,
        "subject": memory.subject,
        "predicate": memory.predicate,
        "structured_data": memory.structured_data or {},
        "source": memory.source,
        "hit_count": memory.hit_count,
        "access_count": memory.access_count,
        "observed_at": _iso(memory.observed_at),
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
        "last_reinforced_at": _iso(memory.last_reinforced_at),
        "last_accessed_at": _iso(memory.last_accessed_at),
        "relations": relations or [],
    }


def memory_to_seed_004(memory: Memory) -> dict:
    """A memory in seed 004's memory.json shape; `x_*` keys carry what its six categories cannot."""
    item = {
        "id": memory.pk.hex[:8],
        "category": category_to_seed_004(memory.category),
        "content": memory.content,
        "salience": round(memory.importance, 4),
        "created_at": format_timestamp(memory.created_at),
        "last_accessed": format_timestamp(memory.last_accessed_at or memory.last_reinforced_at or memory.observed_at),
        "access_count": memory.access_count,
        "source": memory.source,
    }
    if memory.structured_data:
        item["context"] = memory.structured_data
    item.update(
        x_id=str(memory.pk),
        x_category=memory.category,
        x_status=memory.status,
        x_strength=round(memory.strength, 6),
        x_observed_at=format_timestamp(memory.observed_at),
    )
    return item


def archive_below() -> float:
    return float(settings.MEMORY_SCORING["ARCHIVE_BELOW"])
