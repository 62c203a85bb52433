"""Exports: MEMORY.md, USER.md and learnings.md per agent, kept as CoreMemory rows and, with an export dir, as files."""

import hashlib
import re
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memories.formats.memory_md import (
    ARCHIVED,
    MemoryMdEntry,
    file_write_with_backup,
    render_learnings_md,
    render_memory_md,
    render_user_md,
)
from memories.models import PROCEDURAL_CATEGORIES, CoreMemory, Memory, Status
from memories.services.lifecycle.common import StepContext

# The file each CoreMemory text is written to, in this order, when there is an export directory.
FILE_NAMES = {"memory_md": "MEMORY.md", "user_md": "USER.md", "learnings_md": "learnings.md"}
USER_MD_CATEGORIES = ("preference", "fact", "project", "workflow", "rule")


def _path_segment(name: str) -> str:
    """A directory name that cannot escape the export directory; unsafe names get a hash suffix."""
    cleaned = re.sub(r"[^A-Za-z0-9_.@+-]", "_", name).strip(".") or "_"
    if cleaned != name:
        cleaned = f"{cleaned}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return cleaned


def export_dir_for(base, *, username: str, agent: str = "") -> Path:
    """<base>/<username>/ for the default agent, <base>/<username>/agents/<agent>/ for the others."""
    path = Path(base) / _path_segment(username)
    return path / "agents" / _path_segment(agent) if agent else path


def short_ids(ids) -> dict:
    """The shortest hex prefix (8+ characters) of each UUID that is unique among `ids`."""
    hexes = {i: i.hex for i in ids}
    length = 8
    while len({h[:length] for h in hexes.values()}) < len(hexes) and length < 32:
        length += 2
    return {i: h[:length] for i, h in hexes.items()}


_EXPORT_FIELDS = ("id", "category", "strength", "last_reinforced_at", "observed_at", "hit_count", "content", "status")


def _entries(rows: list[dict], ids: dict, tz) -> list[MemoryMdEntry]:
    return [
        MemoryMdEntry(
            id=ids[r["id"]],
            category=r["category"],
            score=min(1.0, max(0.0, r["strength"])),
            last_activated=timezone.localtime(r["last_reinforced_at"] or r["observed_at"], tz).date(),
            hits=r["hit_count"],
            content=r["content"],
            section=ARCHIVED if r["status"] == Status.ARCHIVED else "active",
        )
        for r in rows
    ]


def _export_rows(qs, cfg) -> tuple[list[dict], list[str]]:
    notes = []
    rows = []
    for status, limit in ((Status.ACTIVE, cfg["EXPORT_MAX_ACTIVE"]), (Status.ARCHIVED, cfg["EXPORT_MAX_ARCHIVED"])):
        part = list(qs.filter(status=status).order_by("-strength", "id").values(*_EXPORT_FIELDS)[:limit])
        if len(part) == limit:
            hidden = qs.filter(status=status).count() - limit
            if hidden > 0:
                notes.append(f"{hidden} weaker {status} entries not shown")
        rows += part
    return rows, notes


def exports_step(run: StepContext) -> tuple[dict, dict]:
    """CoreMemory per agent (memory_md / user_md / learnings_md), and the files when an export dir is set."""
    cfg = run.cfg
    tz = timezone.get_current_timezone()
    owner = run.owner
    live = Memory.objects.filter(owner=owner, status__in=[Status.ACTIVE, Status.ARCHIVED])
    agents = set(live.values_list("agent", flat=True).distinct()) | set(
        CoreMemory.objects.filter(owner=owner).values_list("agent", flat=True)
    )
    export_dir = run.export_dir or getattr(settings, "MEMORY_EXPORT_DIR", None)
    updated_at = timezone.localtime(run.now, tz)
    archive_below = float(run.scoring["ARCHIVE_BELOW"])
    counts = {"agents": 0, "entries": 0, "files": 0}
    for agent in sorted(agents):
        scoped = live.filter(agent=agent)
        semantic, semantic_notes = _export_rows(scoped.exclude(category__in=PROCEDURAL_CATEGORIES), cfg)
        procedural, procedural_notes = _export_rows(scoped.filter(category__in=PROCEDURAL_CATEGORIES), cfg)
        profile = []
        for category in USER_MD_CATEGORIES:
            profile += list(
                scoped.filter(status=Status.ACTIVE, category=category)
                .order_by("-strength", "id")
                .values(*_EXPORT_FIELDS)[: cfg["EXPORT_USER_PER_SECTION"] + 1]
            )
        ids = short_ids({r["id"] for r in semantic + procedural + profile})
        memory_md = render_memory_md(
            _entries(semantic, ids, tz), updated_at=updated_at, archive_below=archive_below, notes=semantic_notes
        )
        learnings_md = render_learnings_md(
            _entries(procedural, ids, tz), updated_at=updated_at, archive_below=archive_below, notes=procedural_notes
        )
        user_md = render_user_md(
            _entries(profile, ids, tz),
            name=owner.get_full_name() or owner.get_username(),
            updated_at=updated_at,
            per_section=cfg["EXPORT_USER_PER_SECTION"],
        )
        texts = {"memory_md": memory_md, "user_md": user_md, "learnings_md": learnings_md}
        CoreMemory.objects.update_or_create(owner=owner, agent=agent, defaults={**texts, "generated_at": run.now})
        counts["agents"] += 1
        counts["entries"] += len(semantic) + len(procedural)
        if export_dir:
            folder = export_dir_for(export_dir, username=owner.get_username(), agent=agent)
            for field, text in texts.items():
                file_write_with_backup(folder / FILE_NAMES[field], text)
                counts["files"] += 1
    return counts, {}
