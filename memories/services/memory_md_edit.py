"""MEMORY.md and learnings.md as editable views of an owner's memories (seeds 000, 001, 002).

GET renders the view with a `version`: a hash of exactly what the view shows (each entry's id,
category, score, date, hits, section and content). PUT sends the edited text back with the version
it was made from; the difference is applied as memory changes by the editor:

- an entry whose content, category, score or section changed → `memory_update` (event "update");
- an entry no longer in the text → `memory_forget` (event "forget");
- an entry with an id the view did not show (or none) → `memory_write`, the merge decision
  (event "add", or "reinforce" / "merge" / "supersede" when it matches what is known).

A PUT made from an older version (someone or something changed what the view shows since) is
refused whole with 409. So is one with an entry the parser had to skip, which would otherwise read
as "removed" and forget a memory because of a typo in its heading.
"""

import hashlib
import json
import re

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories import scoring
from memories.drafts import MemoryDraft
from memories.formats.categories import category_from_seed
from memories.formats.memory_md import (
    ARCHIVED,
    LEARNINGS_MD_TITLE,
    MEMORY_MD_TITLE,
    parse_memory_md,
    render_memory_md,
    split_sections,
)
from memories.models import PROCEDURAL_CATEGORIES, EventType, Memory, Source, Status
from memories.services.actions import memory_forget
from memories.services.decisions import memory_write
from memories.services.memories import memory_update
from memories.services.transfer import memory_md_entries
from memory_project.exceptions import Conflict, ServiceError

VIEWS = {
    "memory-md": {"file": "MEMORY.md", "title": MEMORY_MD_TITLE, "procedural": False},
    "learnings-md": {"file": "learnings.md", "title": LEARNINGS_MD_TITLE, "procedural": True},
}
DEFAULT_MAX_ENTRIES = 2000


def _max_entries() -> int:
    return int(getattr(settings, "MEMORY_MD_EDIT_MAX_ENTRIES", DEFAULT_MAX_ENTRIES))


def _archive_below() -> float:
    return float(settings.MEMORY_SCORING["ARCHIVE_BELOW"])


def _shown_queryset(owner, agent: str, view: str):
    qs = Memory.objects.filter(owner=owner, agent=agent, status__in=[Status.ACTIVE, Status.ARCHIVED]).defer(
        "embedding", "search_vector", "search_ngrams"
    )
    if VIEWS[view]["procedural"]:
        return qs.filter(category__in=PROCEDURAL_CATEGORIES)
    return qs.exclude(category__in=PROCEDURAL_CATEGORIES)


def _shown(owner, agent: str, view: str) -> tuple[list[Memory], int]:
    """The memories the view shows (strongest first, up to the limit) and how many it leaves out."""
    return strongest_shown(_shown_queryset(owner, agent, view))


def strongest_shown(qs) -> tuple[list[Memory], int]:
    """The strongest memories of `qs` a file has room for, and how many it leaves out (counted only
    when some are: the file is regenerated on every read)."""
    limit = _max_entries()
    memories = list(qs.order_by("-strength", "id")[: limit + 1])
    if len(memories) <= limit:
        return memories, 0
    return memories[:limit], qs.count() - limit


def _fingerprint(entries) -> str:
    rows = sorted(
        [e.id, e.category, f"{e.score:.2f}", e.last_activated.isoformat(), e.hits, e.section, e.content]
        for e in entries
    )
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:32]


def _view_state(owner, agent: str, view: str) -> dict:
    memories, hidden = _shown(owner, agent, view)
    entries = memory_md_entries(memories)
    active, archived = split_sections(entries, archive_below=_archive_below())
    for entry in archived:
        # The section an entry is *shown* in (a weak active memory is shown as archived).
        entry.section = ARCHIVED
    for entry in active:
        entry.section = "active"
    return {
        "memories": memories,
        "entries": entries,
        "by_id": {e.id: m for e, m in zip(entries, memories)},
        "short_of": {m.pk: e.id for e, m in zip(entries, memories)},
        "shown_archived": {e.id for e in archived},
        "hidden": hidden,
        "version": _fingerprint(entries),
    }


def _render(state: dict, view: str) -> str:
    notes = []
    if state["hidden"]:
        notes.append(f"{state['hidden']} weaker entries not shown; they are not changed by saving this file")
    return render_memory_md(state["entries"], title=VIEWS[view]["title"], archive_below=_archive_below(), notes=notes)


def memory_md_get(*, owner, agent: str = "", view: str = "memory-md") -> dict:
    state = _view_state(owner, agent, view)
    return {
        "view": view,
        "file": VIEWS[view]["file"],
        "agent": agent,
        "content": _render(state, view),
        "version": state["version"],
        "entries": len(state["entries"]),
        "hidden": state["hidden"],
    }


def _lock(owner, agent: str, view: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memory-md-edit:{owner.pk}:{agent}:{view}"]
        )


_NEW_HEADING = re.compile(r"^###\s+(?:\[\s*\]\s*)?(?P<rest>[A-Za-z][\w-]*(?:\s*\|.*)?)$")


def _complete_new_headings(text: str) -> str:
    """Headings of entries a person added without an id (`### preference`, `### [] fact | 0.7`) made
    whole: a placeholder id, and score / date / hits defaulted (medium importance, today, 0)."""
    today = timezone.localdate().isoformat()
    medium = f"{scoring.importance_value('medium'):.2f}"
    lines = text.splitlines()
    count = 0
    for index, line in enumerate(lines):
        match = _NEW_HEADING.match(line.rstrip())
        if not match:
            continue
        fields = [part.strip() for part in match["rest"].split("|")]
        if len(fields) > 4:
            continue
        defaults = [fields[0], medium, today, "0"]
        fields = [value or defaults[i] for i, value in enumerate(fields)] + defaults[len(fields) :]
        count += 1
        lines[index] = f"### [new-{count}] " + " | ".join(fields)
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in (text or "").strip().splitlines())


def _resolve(entry_id: str, by_id: dict) -> Memory | None:
    """The shown memory an entry id names: its short id, or (pasted from elsewhere) its full UUID."""
    if entry_id in by_id:
        return by_id[entry_id]
    cleaned = entry_id.replace("-", "").lower()
    if len(cleaned) == 32:
        return next((m for m in by_id.values() if m.pk.hex == cleaned), None)
    return None


@transaction.atomic
def memory_md_apply(*, owner, content: str, version: str, actor: str, agent: str = "", view: str = "memory-md") -> dict:
    file_name = VIEWS[view]["file"]
    _lock(owner, agent, view)
    state = _view_state(owner, agent, view)
    if version != state["version"]:
        raise Conflict(
            f"{file_name} changed since you loaded it (your version {version[:12]}…, current "
            f"{state['version'][:12]}…). Nothing was applied: reload it, redo your edit and save again.",
            code="stale_version",
            details={"your_version": version, "current_version": state["version"]},
        )
    archive_below = _archive_below()
    parsed = parse_memory_md(_complete_new_headings(content), archive_below=archive_below)
    blocking = [w for w in parsed.warnings if "skipped" in w.message]
    if blocking:
        raise ServiceError(
            f"{file_name} has entries that cannot be read, so nothing was applied (saving it would forget "
            f"them): line {blocking[0].line}: {blocking[0].message}",
            code="unreadable_entries",
            details={"warnings": [{"line": w.line, "message": w.message} for w in blocking]},
        )
    changes = {"updated": [], "forgotten": [], "added": []}
    reason = f"edited in {file_name}"
    seen: set = set()
    new_entries = []
    for entry in parsed.entries:
        memory = _resolve(entry.id, state["by_id"])
        category = category_from_seed(entry.category)
        if category is None:
            raise ServiceError(
                f"entry [{entry.id}]: unknown category {entry.category!r}, so nothing was applied",
                code="invalid_category",
            )
        if memory is None or memory.pk in seen:
            new_entries.append((entry, category))
            continue
        seen.add(memory.pk)
        fields = {}
        if _lines(entry.content) != _lines(memory.content):
            fields["content"] = entry.content
        if category != memory.category:
            fields["category"] = category
        if round(entry.score, 2) != round(min(1.0, max(0.0, memory.strength)), 2):
            fields["strength"] = entry.score
        was_archived = state["short_of"][memory.pk] in state["shown_archived"]
        now_archived = entry.section == ARCHIVED or round(entry.score, 2) < archive_below
        if now_archived != was_archived:
            fields["status"] = Status.ARCHIVED if now_archived else Status.ACTIVE
        if fields:
            memory_update(memory=memory, actor=actor, event_type=EventType.UPDATE, reason=reason, **fields)
            changes["updated"].append({"id": str(memory.pk), "fields": sorted(fields)})
    for memory in state["memories"]:
        if memory.pk not in seen:
            memory_forget(memory=memory, actor=actor, reason=f"removed from {file_name}")
            changes["forgotten"].append(str(memory.pk))
    for entry, category in new_entries:
        draft = MemoryDraft(
            content=entry.content, category=category, importance=entry.score, agent=agent, source=Source.USER_EXPLICIT
        )
        result = memory_write(owner=owner, draft=draft, actor=actor)
        changes["added"].append({"id": str(result.memory.pk), "action": result.action, "entry": entry.id})
    fresh = _view_state(owner, agent, view)
    return {
        "view": view,
        "file": file_name,
        "agent": agent,
        "content": _render(fresh, view),
        "version": fresh["version"],
        "changes": changes,
        "warnings": [{"line": w.line, "message": w.message} for w in parsed.warnings],
    }
