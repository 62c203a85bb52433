"""Import and export of an owner's memories in the seed formats and our own JSONL (DESIGN §5).

Formats:

- ``memory-md`` / ``learnings-md`` — seed 002 §2.3 MEMORY.md (score → strength and importance, last
  activation → last_reinforced_at and observed_at, hits → hit_count, the Archived section → archived).
- ``memory-json`` — seed 004 §2.1 memory.json (categories mapped as DESIGN §3 says, salience →
  importance, timestamps kept, the rolling summary → CoreMemory.rolling_summary).
- ``user-md`` — a USER.md profile: each line a preference or fact (or our own section's category).
- ``daily-log`` — seed 004 daily logs (``logs/YYYY-MM-DD.json`` or the v1 ``.md``): the day's lines
  go into its DailyDigest, the noteworthy ones (tagged with a category, reflections, statements
  the offline extractor recognises) through the merge decision as memories.
- ``jsonl`` — ours, full fidelity: one JSON object per memory.

Two modes (issue 11):

- ``merge`` (every format): each entry goes through `memory_write` (embedded, deduplicated,
  contradictions superseded) with source ``import``, and gets an ``import`` event naming the file and
  format. For memories the import created, the file's strength, counters and timestamps are set
  after the decision, so the history reads: add (the decision) → import (the file's values).
  Importing is idempotent: each entry's content hash is remembered (`ImportedEntry`) with the memory
  it became or was folded into, and an entry already imported, or whose exact text the namespace
  already holds in any status, changes nothing (no reinforcement, no status change: an archived
  memory stays archived, a forgotten one is not brought back).
- ``restore`` (our JSONL only): the export's rows come back row for row, never through the merge
  decision: ids (when not taken by another owner's memory), statuses, strengths, pins, counters and
  timestamps as exported. A row already there (its id, or an earlier restore of it) is left as it is,
  so restoring twice changes nothing. Only moderation still applies: instruction-like text in a
  live status is held for review, as on every other write path.

A JSONL file whose every line carries its ``id`` (an export of ours) is restored unless ``merge`` is
asked for; any other file is merged.

A folder (seed 004 §10 migration) is imported file by file, each in its own transaction; each file
imported is renamed to ``<name>.migrated``, so a second run finds nothing left to import.
"""

import json
import logging
import os
import re
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories import scoring
from memories.formats.categories import category_from_seed, category_to_seed_004, records_failure
from memories.formats.memory_json import (
    FormatError,
    format_timestamp,
    parse_daily_log_json,
    parse_daily_log_md,
    parse_memory_json,
    parse_timestamp,
    render_memory_json,
)
from memories.formats.memory_md import (
    ARCHIVED,
    MemoryMdEntry,
    parse_memory_md,
    render_learnings_md,
    render_memory_md,
    render_user_md,
)
from memories.formats.user_profile import category_for_section, parse_user_profile
from memories.models import (
    PROCEDURAL_CATEGORIES,
    Category,
    CoreMemory,
    DailyDigest,
    EventType,
    ImportedEntry,
    Memory,
    MemoryEvent,
    MemoryRelation,
    RelationType,
    Retention,
    Source,
    Status,
)
from memories.moderation import REASON as MODERATION_REASON
from memories.moderation import moderation_check
from memories.services.decisions import memory_write
from memories.services.embeddings import embedding_get_many
from memories.services.entities import memory_entities_link
from memories.services.import_validation import (
    ImportInvalid,
    ImportProblem,
    import_json_problems,
    import_progress_tick,
    import_record_problems,
    import_text_problems,
)
from memories.services.lifecycle import short_ids
from memories.services.memories import LIVE_STATUSES, memory_create, memory_event_record, memory_snapshot
from memories.text import cjk_ngrams, content_hash, normalize
from memory_project.events import event_publish

logger = logging.getLogger(__name__)

MODES = ("merge", "restore")
FORMATS = ("memory-md", "learnings-md", "memory-json", "user-md", "daily-log", "jsonl")
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
# Files a migration folder may hold, in the order they are imported (older formats first, so the
# newer file's values win where the two disagree).
FOLDER_FILES = (
    ("memory.md", "memory-md"),
    ("learnings.md", "learnings-md"),
    ("memory.json", "memory-json"),
    ("user.md", "user-md"),
    ("memories.jsonl", "jsonl"),
)
MIGRATED_SUFFIX = ".migrated"
_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.(?:md|json)$", re.IGNORECASE)
_INERT = (Status.FORGOTTEN, Status.REJECTED)


@dataclass
class ImportWarning:
    file: str
    line: int | None
    message: str


@dataclass
class ImportReport:
    format: str
    source: str
    mode: str | None = "merge"
    entries: int = 0  # records read (memories, profile lines, log lines)
    added: int = 0  # new memories
    merged: int = 0  # folded into an existing memory (a closer statement of it)
    reinforced: int = 0  # already known: the existing memory was reinforced
    superseded: int = 0  # new memories that replaced a contradicted one
    unchanged: int = 0  # imported before, or already held word for word: nothing was changed
    skipped: int = 0  # broken or unusable entries (see warnings)
    digests: int = 0  # daily digests created or extended
    rolling_summary: bool = False
    warnings: list[ImportWarning] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    files: list["ImportReport"] = field(default_factory=list)
    migrated: list[str] = field(default_factory=list)
    error: str = ""

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(ImportWarning(self.source, line, message))
        # The report carries the warning to the caller; the log only keeps a trace of it.
        logger.info("import %s line %s: %s", self.source, line, message)

    def absorb(self, other: "ImportReport") -> None:
        for name in ("entries", "added", "merged", "reinforced", "superseded", "unchanged", "skipped", "digests"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.rolling_summary = self.rolling_summary or other.rolling_summary
        self.warnings += other.warnings
        self.memory_ids += other.memory_ids
        self.files.append(other)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Record:
    """One memory to write, whatever file it came from."""

    line: int | None
    content: str
    category: str
    importance: float | None = None
    status: str = Status.ACTIVE
    retention: str = Retention.LONG
    agent: str | None = None
    subject: str = ""
    predicate: str = ""
    structured_data: dict | None = None
    confidence: float = 1.0
    observed_at: datetime | None = None
    origin: str = ""
    # Applied after the decision to memories this import created.
    preserve: dict = field(default_factory=dict)
    # A JSONL row's own id, source and last change: what a restore keeps.
    source_id: uuid.UUID | None = None
    source: str = ""
    updated_at: datetime | None = None
    relations: list = field(default_factory=list)  # [(type, target's exported id, weight)]


# --- entry points -------------------------------------------------------------------------------


def memory_import(
    *,
    owner,
    path_or_text,
    fmt: str | None = None,
    actor: str,
    agent: str | None = None,
    mode: str | None = None,
) -> ImportReport:
    """Import a file, a migration folder (MEMORY.md / memory.json / USER.md / logs/), or text.

    A `Path`, or a one-line string naming an existing file or folder, is read from disk; any other
    string is the content itself. `agent` None keeps each JSONL record's own agent (the default
    namespace for every other format). `mode` is "merge", "restore" or None (see the module's
    docstring); in a folder it applies to the JSONL file only. Raises FormatError when a single file
    is unusable as a whole.
    """
    path = _as_path(path_or_text)
    if path is not None and path.is_dir():
        return _import_folder(owner=owner, folder=path, actor=actor, agent=agent, mode=mode)
    if path is not None:
        return memory_import_text(
            owner=owner, text=_read(path), fmt=fmt, name=_display_name(path), actor=actor, agent=agent, mode=mode
        )
    return memory_import_text(
        owner=owner, text=str(path_or_text), fmt=fmt, name="", actor=actor, agent=agent, mode=mode
    )


def memory_import_text(
    *,
    owner,
    text: str,
    fmt: str | None = None,
    name: str = "",
    actor: str,
    agent: str | None = None,
    mode: str | None = None,
) -> ImportReport:
    """Import `text` (an upload, a pasted file); `name` is its file name, used to detect the format and
    a daily log's day. Nothing is read from disk here, so it is the entry point for API requests."""
    if "\x00" in text:
        raise FormatError("the file contains NUL bytes: not a text file")
    fmt = fmt or detect_format(name, text)
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if mode not in (None, *MODES):
        raise FormatError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "restore" and fmt != "jsonl":
        raise FormatError(
            f"only a JSONL export can be restored row for row; {fmt} is imported through the merge decision "
            "(leave out mode, or set it to merge)"
        )
    # A JSONL file's mode is settled once its lines are read (None: restore when all carry their id).
    report = ImportReport(format=fmt, source=name or f"({fmt})", mode=mode if fmt == "jsonl" else "merge")
    with transaction.atomic():
        _IMPORTERS[fmt](owner=owner, text=text, name=name, actor=actor, agent=agent, report=report)
    return report


def detect_format(name: str, text: str) -> str:
    """The format of a file from its name, else from its content; FormatError when neither tells."""
    base = Path(name or "").name.lower()
    if base in ("memory.md", "agent_memory.md"):
        return "memory-md"
    if base == "learnings.md":
        return "learnings-md"
    if base == "user.md":
        return "user-md"
    if base == "memory.json" or base == "memories.json":
        return "memory-json"
    if base.endswith(".jsonl") or base.endswith(".ndjson"):
        return "jsonl"
    if _LOG_NAME.match(base):
        return "daily-log"
    stripped = text.lstrip("\ufeff").lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        first = stripped.splitlines()[0].strip()
        try:
            one = json.loads(first)
        except ValueError:
            one = None
        if isinstance(one, dict) and "content" in one:
            return "jsonl"
        if '"entries"' in stripped and '"date"' in stripped and '"memories"' not in stripped:
            return "daily-log"
        return "memory-json"
    if re.search(r"^###\s+\[[^\]]+\]", stripped, re.MULTILINE):
        return "learnings-md" if re.match(r"#\s+Agent Learnings", stripped) else "memory-md"
    if re.match(r"#\s+(?:User Profile|用户档案|USER)", stripped, re.IGNORECASE):
        return "user-md"
    raise FormatError(
        "cannot tell the format of this file: name it MEMORY.md, learnings.md, memory.json, USER.md, "
        "YYYY-MM-DD.md / .json or *.jsonl, or give the format explicitly"
    )


def memory_export(*, owner, fmt: str, agent: str | None = None, group_ids: list | None = None) -> str:
    """Everything of `owner` (one agent namespace when `agent` is given, the memories of some
    memory groups when `group_ids` are) in one format."""
    if fmt not in EXPORT_FORMATS:
        raise FormatError(f"unknown export format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")
    qs = Memory.objects.filter(owner=owner).defer("embedding", "search_vector", "search_ngrams")
    if agent is not None:
        qs = qs.filter(agent=agent)
    if group_ids is not None:
        from memory_groups.models import MemoryGroupMember

        qs = qs.filter(pk__in=MemoryGroupMember.objects.filter(group_id__in=group_ids).values("memory_id"))
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
        return render_learnings_md(memory_md_entries(rows), updated_at=updated_at, archive_below=_archive_below())
    rows = list(live.order_by("-strength", "id"))
    return render_memory_md(memory_md_entries(rows), updated_at=updated_at, archive_below=_archive_below())


# --- conversions --------------------------------------------------------------------------------


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


def _archive_below() -> float:
    return float(settings.MEMORY_SCORING["ARCHIVE_BELOW"])


# --- reading ------------------------------------------------------------------------------------


def _as_path(value) -> Path | None:
    if isinstance(value, Path):
        return value
    if isinstance(value, str) and value and "\n" not in value and len(value) < 4096 and "\x00" not in value:
        candidate = Path(os.path.expanduser(value))
        if candidate.exists():
            return candidate
    return None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FormatError(f"{path.name} is not UTF-8 text") from None


def _display_name(path: Path) -> str:
    # A daily log's folder is part of what identifies it ("logs/2026-02-21.md").
    return f"{path.parent.name}/{path.name}" if path.parent.name.lower() == "logs" else path.name


def _folder_files(folder: Path) -> list[tuple[Path, str]]:
    by_name = {p.name.lower(): p for p in folder.iterdir() if p.is_file()}
    found = [(by_name[name], fmt) for name, fmt in FOLDER_FILES if name in by_name]
    logs = next((p for p in folder.iterdir() if p.is_dir() and p.name.lower() == "logs"), None)
    if logs is not None:
        found += [(p, "daily-log") for p in sorted(logs.iterdir()) if p.is_file() and _LOG_NAME.match(p.name)]
    return found


def _migrated_path(path: Path) -> Path:
    target = path.with_name(path.name + MIGRATED_SUFFIX)
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}{MIGRATED_SUFFIX}.{n}")
        n += 1
    return target


def _import_folder(*, owner, folder: Path, actor: str, agent: str | None, mode: str | None) -> ImportReport:
    report = ImportReport(format="folder", source=str(folder))
    files = _folder_files(folder)
    if not files:
        report.warn(
            None,
            "nothing to import: no MEMORY.md, learnings.md, memory.json, USER.md, memories.jsonl or "
            f"logs/YYYY-MM-DD.md|json here (files already migrated end in {MIGRATED_SUFFIX})",
        )
        return report
    for path, fmt in files:
        name = _display_name(path)
        try:
            sub = memory_import_text(
                owner=owner,
                text=_read(path),
                fmt=fmt,
                name=name,
                actor=actor,
                agent=agent,
                mode=mode if fmt == "jsonl" else None,
            )
        except FormatError as exc:
            # The file stays where it is (not renamed), so fixing it and running again imports it.
            sub = ImportReport(format=fmt, source=name, error=str(exc))
            sub.warn(None, f"not imported: {exc}")
            report.absorb(sub)
            continue
        target = _migrated_path(path)
        path.rename(target)
        sub.migrated.append(str(target))
        report.migrated.append(str(target))
        report.absorb(sub)
    return report


# --- writing ------------------------------------------------------------------------------------


def _agent_of(record: _Record, agent: str | None) -> str:
    if agent is not None:
        return agent
    return record.agent or ""


def _state(memory: Memory) -> dict:
    data = memory_snapshot(memory)
    for name in ("observed_at", "created_at", "last_reinforced_at", "last_accessed_at"):
        value = getattr(memory, name)
        data[name] = value.isoformat() if value else None
    data["hit_count"] = memory.hit_count
    data["access_count"] = memory.access_count
    return data


def _write(
    *, owner, records: list[_Record], report: ImportReport, fmt: str, actor: str, agent: str | None, problems=()
) -> None:
    # The API's validators on every entry first: one bad entry refuses the file, nothing is written.
    problems = list(problems)
    for record in records:
        problems += import_record_problems(record=record, agent=_agent_of(record, agent))
    if problems:
        raise ImportInvalid(problems)
    where = f"imported from {report.source} ({fmt})"
    created: dict = {}  # pk → record, for memories this import added
    known = _known_entries(owner=owner, keys={(_agent_of(r, agent), content_hash(r.content)) for r in records})
    for done, record in enumerate(records, start=1):
        import_progress_tick(done=done - 1, total=len(records))
        report.entries += 1
        namespace = _agent_of(record, agent)
        key = (namespace, content_hash(record.content))
        if key in known:
            # Imported before (or said word for word already): importing it again changes nothing.
            report.unchanged += 1
            report.memory_ids.append(str(known[key]))
            continue
        reason = f"{where}{', ' + record.origin if record.origin else ''}"
        if record.status in _INERT:
            memory = _write_inert(
                owner=owner, record=record, report=report, actor=actor, agent=namespace, reason=reason
            )
            known[key] = _entry_remember(owner=owner, agent=namespace, key=key[1], memory=memory)
            continue
        result = memory_write(
            owner=owner,
            content=record.content,
            actor=actor,
            category=record.category,
            importance=record.importance,
            agent=namespace,
            source=Source.IMPORT,
            retention=record.retention,
            subject=record.subject,
            predicate=record.predicate,
            structured_data=record.structured_data,
            confidence=record.confidence,
            observed_at=record.observed_at,
            status=Status.PENDING_REVIEW if record.status == Status.PENDING_REVIEW else None,
        )
        memory = result.memory
        report.memory_ids.append(str(memory.pk))
        known[key] = _entry_remember(owner=owner, agent=namespace, key=key[1], memory=memory)
        if result.action in ("add", "delete"):
            if result.action == "add":
                report.added += 1
            else:
                report.superseded += 1
            created[memory.pk] = (record, reason)
            continue
        if result.action == "update":
            report.merged += 1
        else:
            report.reinforced += 1
        if result.changed:
            memory.refresh_from_db()
            memory_event_record(
                memory=memory,
                event_type=EventType.IMPORT,
                actor=actor,
                after=_state(memory),
                reason=f"{reason}; already known ({'merged' if result.action == 'update' else 'reinforced'})",
            )
    # After every decision: a later record superseding an earlier one of the same file penalised it,
    # but the file says what its strength is.
    for pk, (record, reason) in created.items():
        memory = Memory.objects.get(pk=pk)
        before = _state(memory)
        changes = _preserved(record, memory)
        if changes:
            Memory.objects.filter(pk=pk).update(**changes)
            memory.refresh_from_db()
        memory_event_record(
            memory=memory, event_type=EventType.IMPORT, actor=actor, before=before, after=_state(memory), reason=reason
        )
    import_progress_tick(done=len(records), total=len(records))


def _preserved(record: _Record, memory: Memory) -> dict:
    changes = dict(record.preserve)
    if "strength" in changes:
        changes["base_strength"] = changes["strength"]
    if record.status in (Status.ACTIVE, Status.ARCHIVED) and memory.status in (Status.ACTIVE, Status.ARCHIVED):
        changes["status"] = record.status
    if changes.get("status", memory.status) != Status.ACTIVE:
        changes["pinned"] = False
    return {k: v for k, v in changes.items() if getattr(memory, k) != v}


def _write_inert(*, owner, record: _Record, report: ImportReport, actor: str, agent: str, reason: str) -> Memory:
    """Forgotten and rejected memories are history: kept for fidelity, never merged with live ones."""
    memory = memory_create(
        owner=owner,
        content=record.content,
        actor=actor,
        category=record.category,
        importance=record.importance,
        agent=agent,
        source=Source.IMPORT,
        retention=record.retention,
        subject=record.subject,
        predicate=record.predicate,
        structured_data=record.structured_data,
        confidence=record.confidence,
        status=record.status,
        observed_at=record.observed_at,
        event_type=EventType.IMPORT,
        reason=reason,
    )
    changes = _preserved(record, memory)
    if changes:
        Memory.objects.filter(pk=memory.pk).update(**changes)
    report.added += 1
    report.memory_ids.append(str(memory.pk))
    return memory


# Statement parameters are capped (65,535 per statement): keys are looked up in chunks.
_LOOKUP_CHUNK = 5000


def _known_entries(*, owner, keys: set[tuple[str, str]]) -> dict[tuple[str, str], object]:
    """{(agent, content hash): memory id} of the entries among `keys` that an import must leave alone:
    imported before (into whatever memory they became or were folded into), or already held word for
    word in that namespace, in any status (an archived memory stays archived, a forgotten one stays
    forgotten)."""
    hashes = sorted({h for _, h in keys})
    known: dict = {}
    for start in range(0, len(hashes), _LOOKUP_CHUNK):
        chunk = hashes[start : start + _LOOKUP_CHUNK]
        for ns, digest, pk in Memory.objects.filter(owner=owner, content_hash__in=chunk).values_list(
            "agent", "content_hash", "pk"
        ):
            known.setdefault((ns, digest), pk)
        entries = ImportedEntry.objects.filter(owner=owner, key__in=chunk).values_list("agent", "key", "memory_id")
        for ns, digest, pk in entries:
            known[(ns, digest)] = pk
    return {key: pk for key, pk in known.items() if key in keys}


def _entry_remember(*, owner, agent: str, key: str, memory: Memory):
    ImportedEntry.objects.get_or_create(owner=owner, agent=agent, key=key, defaults={"memory": memory})
    return memory.pk


# --- restoring ----------------------------------------------------------------------------------


def _restore(*, owner, records: list[_Record], report: ImportReport, actor: str, agent: str | None, problems) -> None:
    """Our JSONL export back row for row (see the module's docstring): no merge decision, no
    reinforcement; each row keeps its id when it is free, and a row restored before is left alone."""
    problems = list(problems)
    for record in records:
        if record.source_id is None:
            problems.append(
                ImportProblem(record.line, "id", "a restore needs each line's id (a UUID, as exported); "
                              "import the file with mode merge to write it through the merge decision")
            )  # fmt: skip
        problems += import_record_problems(record=record, agent=_agent_of(record, agent))
    if problems:
        raise ImportInvalid(problems)
    ids = [r.source_id for r in records]
    owners: dict = {}
    restored: dict = {}
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        chunk = ids[start : start + _LOOKUP_CHUNK]
        owners.update(Memory.objects.filter(pk__in=chunk).values_list("pk", "owner_id"))
        keys = [f"id:{pk}" for pk in chunk]
        restored.update(ImportedEntry.objects.filter(owner=owner, key__in=keys).values_list("key", "memory_id"))
    where = f"restored from {report.source} (jsonl)"
    local: dict = {}  # exported id → this owner's memory id
    batch: list = []
    for done, record in enumerate(records, start=1):
        import_progress_tick(done=done - 1, total=len(records))
        report.entries += 1
        key = f"id:{record.source_id}"
        if key in restored or owners.get(record.source_id) == owner.pk:
            report.unchanged += 1
            local[record.source_id] = restored.get(key, record.source_id)
            report.memory_ids.append(str(local[record.source_id]))
            continue
        # An id another owner's memory holds (an export restored into a second account) cannot be
        # shared: the row gets a new one, and the restore is remembered under the exported id.
        pk = record.source_id if record.source_id not in owners else uuid.uuid4()
        owners[pk] = owner.pk
        restored[key] = local[record.source_id] = pk
        batch.append((record, pk, _agent_of(record, agent)))
        report.added += 1
        report.memory_ids.append(str(pk))
        if len(batch) == _RESTORE_BATCH:
            _restore_rows(owner=owner, batch=batch, actor=actor, reason=where)
            batch = []
    _restore_rows(owner=owner, batch=batch, actor=actor, reason=where)
    _restore_relations(owner=owner, records=records, local=local, report=report)
    import_progress_tick(done=len(records), total=len(records))


_RESTORE_BATCH = 500


def _restore_rows(*, owner, batch: list, actor: str, reason: str) -> None:
    """Insert restored rows as exported, in bulk: one embedding batch, one insert, one history row each."""
    if not batch:
        return
    now = timezone.now()
    vectors = embedding_get_many(owner=owner, texts=[normalize(record.content) for record, _, _ in batch])
    rows, times = [], []
    for (record, pk, namespace), vector in zip(batch, vectors, strict=True):
        keep = record.preserve
        content = normalize(record.content)
        status = record.status
        # The one check every write path makes: instruction-like text never comes back live.
        if status in LIVE_STATUSES and moderation_check(content).flagged:
            status = Status.PENDING_REVIEW
        importance = scoring.importance_value(record.importance)
        strength = keep.get("strength", scoring.initial_strength(importance))
        observed = record.observed_at or now
        expires = keep["expires_at"] if "expires_at" in keep else scoring.expires_at_for(record.retention, now)
        rows.append(
            Memory(
                id=pk,
                owner=owner,
                agent=namespace,
                content=content,
                content_hash=content_hash(content),
                category=record.category,
                subject=record.subject,
                predicate=record.predicate,
                structured_data=record.structured_data or {},
                embedding=vector,
                search_ngrams=cjk_ngrams(f"{record.subject} {content}"),
                importance=importance,
                strength=strength,
                base_strength=strength,
                confidence=record.confidence,
                retention=record.retention,
                expires_at=expires,
                status=status,
                pinned=keep.get("pinned", False) and status == Status.ACTIVE,
                review_reason=MODERATION_REASON if status == Status.PENDING_REVIEW else "",
                access_count=keep.get("access_count", 0),
                last_accessed_at=keep.get("last_accessed_at"),
                hit_count=keep.get("hit_count", 0),
                last_reinforced_at=keep.get("last_reinforced_at") or observed,
                source=record.source or Source.IMPORT,
                observed_at=observed,
            )
        )
        times.append((keep.get("created_at"), record.updated_at))
    Memory.objects.bulk_create(rows)
    # bulk_create stamps both times with now; bulk_update writes the exported ones as given.
    for memory, (created, updated) in zip(rows, times, strict=True):
        memory.created_at = created or memory.created_at
        memory.updated_at = updated or memory.updated_at
    Memory.objects.bulk_update(rows, ["created_at", "updated_at"])
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            owner_id=owner.pk,
            memory=memory,
            event_type=EventType.IMPORT,
            actor=actor,
            after=memory_snapshot(memory),
            reason=f"{reason}, id {record.source_id}"[:500],
        )
        for memory, (record, _, _) in zip(rows, batch, strict=True)
    )
    ImportedEntry.objects.bulk_create(
        ImportedEntry(owner=owner, agent=memory.agent, key=f"id:{record.source_id}", memory=memory)
        for memory, (record, _, _) in zip(rows, batch, strict=True)
    )
    for memory in rows:
        memory_entities_link(memory=memory)
        # As memory_create announces an added memory (a restore is not a new write: no
        # memory.write.important).
        event_publish(
            owner_id=owner.pk,
            type="memory.changed",
            data={
                "action": "added",
                "memory": {
                    "id": str(memory.pk),
                    "content": memory.content,
                    "category": memory.category,
                    "status": memory.status,
                    "strength": round(memory.strength, 4),
                },
            },
        )


def _restore_relations(*, owner, records: list[_Record], local: dict, report: ImportReport) -> None:
    """The exported edges between restored rows (or rows the owner holds under the target's id); an
    edge already there is left as it is."""
    targets = {target for r in records for _, target, _ in r.relations if target not in local}
    held = set(Memory.objects.filter(owner=owner, pk__in=targets).values_list("pk", flat=True)) if targets else set()
    edges = []
    for record in records:
        for kind, target, weight in record.relations:
            target_pk = local.get(target, target if target in held else None)
            if target_pk is None:
                report.warn(record.line, f"{kind} relation to {target} left out: that memory is not in the file")
                continue
            if target_pk != local[record.source_id]:
                edges.append(
                    MemoryRelation(
                        owner=owner, source_id=local[record.source_id], target_id=target_pk, type=kind, weight=weight
                    )
                )
    MemoryRelation.objects.bulk_create(edges, ignore_conflicts=True)


def _entry_problems(warnings, report: ImportReport) -> list[ImportProblem]:
    """A parser's warnings: the entries it had to skip are bad entries (the file is refused with
    them), the rest stay warnings on the report."""
    problems = []
    for warning in warnings:
        if "skipped" in warning.message:
            problems.append(ImportProblem(warning.line, "", warning.message))
        else:
            report.warn(warning.line, warning.message)
    return problems


def _category(report: ImportReport, line, name, *, content: str = "", context=None) -> str:
    mapped = category_from_seed(name, content=content, context=context)
    if mapped is None:
        report.warn(line, f"unknown category {name!r} imported as fact")
        return Category.FACT
    return mapped


def _local_midnight(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


# --- formats ------------------------------------------------------------------------------------


_ENTRY_HEADING = re.compile(r"^###\s+\[([^\]\s]+)\]")


def _import_memory_md(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    archive_below = _archive_below()
    parsed = parse_memory_md(text, archive_below=archive_below)
    problems = _entry_problems(parsed.warnings, report)
    heading_lines = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _ENTRY_HEADING.match(raw)
        if match:
            heading_lines.setdefault(match[1], number)
    records = []
    for entry in parsed.entries:
        line = heading_lines.get(entry.id)
        activated = _local_midnight(entry.last_activated)
        archived = entry.section == ARCHIVED or round(entry.score, 2) < archive_below
        records.append(
            _Record(
                line=line,
                content=entry.content,
                category=_category(report, line, entry.category),
                importance=entry.score,
                status=Status.ARCHIVED if archived else Status.ACTIVE,
                observed_at=activated,
                origin=f"entry [{entry.id}]",
                preserve={
                    "strength": entry.score,
                    "hit_count": entry.hits,
                    "last_reinforced_at": activated,
                    # Seed 002 memories fade by decay, not by expiry.
                    "expires_at": None,
                },
            )
        )
    _write(owner=owner, records=records, report=report, fmt=report.format, actor=actor, agent=agent, problems=problems)


def _import_memory_json(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    parsed = parse_memory_json(text)
    problems = _entry_problems(parsed.warnings, report)
    records = []
    for entry in parsed.entries:
        extra = entry.extra
        exact = extra.get("x_category")
        category = (
            exact
            if exact in Category.values
            else _category(report, entry.line, entry.category, content=entry.content, context=entry.context)
        )
        status = extra.get("x_status") if extra.get("x_status") in Status.values else Status.ACTIVE
        try:
            observed = parse_timestamp(extra.get("x_observed_at")) or entry.created_at
        except ValueError:
            observed = entry.created_at
        preserve = {"access_count": entry.access_count, "expires_at": None}
        if entry.created_at:
            preserve["created_at"] = entry.created_at
        if entry.last_accessed:
            preserve["last_accessed_at"] = entry.last_accessed
        strength = extra.get("x_strength")
        if isinstance(strength, int | float) and not isinstance(strength, bool) and 0 <= strength <= 1:
            preserve["strength"] = float(strength)
        origin = ", ".join(
            part
            for part in (f"id {entry.id}" if entry.id else "", f"source {entry.source}" if entry.source else "")
            if part
        )
        records.append(
            _Record(
                line=entry.line,
                content=entry.content,
                category=category,
                importance=entry.salience,
                status=status,
                structured_data=entry.context,
                observed_at=observed,
                origin=origin,
                preserve=preserve,
            )
        )
    problems += import_text_problems(name="rolling_summary", value=parsed.rolling_summary)
    _write(owner=owner, records=records, report=report, fmt="memory-json", actor=actor, agent=agent, problems=problems)
    if parsed.rolling_summary:
        CoreMemory.objects.update_or_create(
            owner=owner, agent=agent or "", defaults={"rolling_summary": parsed.rolling_summary}
        )
        report.rolling_summary = True


def _import_user_md(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    records = [
        _Record(
            line=item.line,
            content=item.text,
            category=category_for_section(item.section),
            origin=f"line {item.line}" + (f" under {item.section!r}" if item.section else ""),
        )
        for item in parse_user_profile(text)
    ]
    if not records:
        report.warn(None, "no profile lines found (expected '- …' items under '## Section' headings)")
    _write(owner=owner, records=records, report=report, fmt="user-md", actor=actor, agent=agent)


_JSONL_PRESERVED_TIMES = ("created_at", "last_reinforced_at", "last_accessed_at", "expires_at")


def _import_jsonl(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    # Our own format: a line that cannot be restored exactly is a bad entry, not one to skip.
    records, problems = [], []
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError):
            problems.append(ImportProblem(number, "", "not valid JSON"))
            continue
        parsed = _jsonl_record(item, number, report)
        if isinstance(parsed, str):
            problems.append(ImportProblem(number, "", parsed))
        else:
            records.append(parsed)
    if report.mode is None:
        report.mode = "restore" if records and all(r.source_id for r in records) else "merge"
    if report.mode == "restore":
        _restore(owner=owner, records=records, report=report, actor=actor, agent=agent, problems=problems)
    else:
        _write(owner=owner, records=records, report=report, fmt="jsonl", actor=actor, agent=agent, problems=problems)


def _unit(item: dict, key: str, default=None):
    value = item.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{key} must be a number between 0 and 1")
    return float(value)


def _count(item: dict, key: str) -> int:
    value = item.get(key, 0) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a non-negative integer")
    return value


def _text(item: dict, key: str, limit: int) -> str:
    value = item.get(key) or ""
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError(f"{key} must be a string")
    return value[:limit]


def _jsonl_record(item, line: int, report: ImportReport) -> _Record | str:
    if not isinstance(item, dict):
        return "not a JSON object"
    content = item.get("content")
    if not isinstance(content, str) or not content.strip() or "\x00" in content:
        return "no usable content"
    try:
        category = item.get("category") or Category.FACT
        category = category if category in Category.values else _category(report, line, category, content=content)
        status = item.get("status") or Status.ACTIVE
        if status not in Status.values:
            raise ValueError(f"unknown status {status!r}")
        retention = item.get("retention") or Retention.LONG
        if retention not in Retention.values:
            raise ValueError(f"unknown retention {retention!r}")
        structured = item.get("structured_data") or {}
        if not isinstance(structured, dict):
            raise ValueError("structured_data must be a JSON object")
        times = {key: parse_timestamp(item.get(key)) for key in ("observed_at", *_JSONL_PRESERVED_TIMES)}
        preserve = {key: times[key] for key in _JSONL_PRESERVED_TIMES if times[key] is not None or key == "expires_at"}
        strength = _unit(item, "strength")
        if strength is not None:
            preserve["strength"] = strength
        preserve["hit_count"] = _count(item, "hit_count")
        preserve["access_count"] = _count(item, "access_count")
        preserve["pinned"] = item.get("pinned") is True
        agent = item.get("agent")
        source = item.get("source")
        record = _Record(
            line=line,
            content=content.strip(),
            category=category,
            importance=_unit(item, "importance"),
            status=status,
            retention=retention,
            agent=agent if isinstance(agent, str) else None,
            subject=_text(item, "subject", 200),
            predicate=_text(item, "predicate", 200),
            structured_data=structured,
            confidence=_unit(item, "confidence", 1.0),
            observed_at=times["observed_at"],
            origin=", ".join(
                p
                for p in (
                    f"id {item['id']}" if isinstance(item.get("id"), str) else "",
                    f"source {item['source']}" if isinstance(item.get("source"), str) else "",
                )
                if p
            ),
            preserve=preserve,
            source_id=_uuid_or_none(item.get("id")),
            relations=_relations(item.get("relations")),
            source=source if source in Source.values else "",
            updated_at=parse_timestamp(item.get("updated_at")),
        )
    except ValueError as exc:
        return str(exc)
    return record


def _relations(value) -> list[tuple[str, uuid.UUID, float]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("relations must be a list")
    out = []
    for edge in value:
        target = _uuid_or_none(edge.get("target")) if isinstance(edge, dict) else None
        if target is None or edge.get("type") not in RelationType.values:
            raise ValueError(
                "each relation needs a type (supports, contradicts, refines, supersedes, related) and a target id"
            )
        weight = edge.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ValueError("a relation's weight must be a number")
        out.append((edge["type"], target, float(weight)))
    return out


def _uuid_or_none(value) -> uuid.UUID | None:
    if not isinstance(value, str):
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


# --- daily logs ---------------------------------------------------------------------------------

_THIRD_PERSON_ZH = re.compile(r"^(?:该)?用户")
_THIRD_PERSON_EN = re.compile(r"^(?:the\s+)?user\s+", re.IGNORECASE)
_FIRST_PERSON_VERBS = {
    "is": "am",
    "has": "have",
    "does": "do",
    "prefers": "prefer",
    "likes": "like",
    "loves": "love",
    "hates": "hate",
    "dislikes": "dislike",
    "wants": "want",
    "uses": "use",
    "works": "work",
    "lives": "live",
    "needs": "need",
    "always": "always",
    "usually": "usually",
    "never": "never",
}


def _first_person(text: str) -> str:
    """A log's third-person note ("用户喜欢…", "The user prefers …") as the user would say it, for the
    offline extractor, which only reads what users say about themselves."""
    if _THIRD_PERSON_ZH.match(text):
        return _THIRD_PERSON_ZH.sub("我", text, count=1)
    match = _THIRD_PERSON_EN.match(text)
    if match:
        rest = text[match.end() :]
        verb, _, tail = rest.partition(" ")
        return f"I {_FIRST_PERSON_VERBS.get(verb.lower(), verb)} {tail}".strip()
    return text


def _noteworthy(entry, observed: datetime, report: ImportReport) -> list[_Record]:
    """The memories a log line holds: tagged ones as tagged, statements the extractor recognises."""
    importance = entry.extra.get("salience", entry.extra.get("importance"))
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        importance = None
    origin = f"line {entry.line}" + (f" at {entry.time}" if entry.time else "")
    if entry.category:
        category = _category(report, entry.line, entry.category, content=entry.content, context=entry.extra)
        return [_Record(entry.line, entry.content, category, importance, observed_at=observed, origin=origin)]
    if entry.type == "reflection":
        category = Category.ERROR if records_failure(entry.content, entry.extra) else Category.SKILL
        return [_Record(entry.line, entry.content, category, importance, observed_at=observed, origin=origin)]
    from memories.extraction.heuristic import extract_candidates
    from memories.providers.llm import TurnView

    turn = TurnView(sequence=1, role="user", speaker="", content=_first_person(entry.content), created_at=observed)
    return [
        _Record(
            entry.line,
            candidate.content,
            candidate.category,
            candidate.importance,
            subject=candidate.subject,
            predicate=candidate.predicate,
            structured_data={"value": candidate.value} if candidate.value else None,
            observed_at=observed,
            origin=origin,
        )
        for candidate in extract_candidates([turn])
        if candidate.action == "remember"
    ]


def _import_daily_log(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    is_json = name.lower().endswith(".json") or text.lstrip("\ufeff").lstrip().startswith("{")
    log = parse_daily_log_json(text, name=name) if is_json else parse_daily_log_md(text, name=name)
    if log.day is None:
        raise FormatError(
            "a daily log needs its day: name the file YYYY-MM-DD.md / .json, or put the date in its first heading"
        )
    problems = _entry_problems(log.warnings, report)
    namespace = agent or ""
    imported_from = f"import:{name or 'daily-log'}"
    rows = []
    records: list[_Record] = []
    tz = timezone.get_current_timezone()
    for entry in log.entries:
        clock = time.fromisoformat(entry.time) if entry.time else time.min
        observed = timezone.make_aware(datetime.combine(log.day, clock), tz)
        row = {"time": entry.time, "type": f"log.{entry.type}", "content": entry.content, "source": imported_from}
        if entry.category:
            row["category"] = entry.category
        row.update({k: v for k, v in entry.extra.items() if k not in row})
        rows.append(row)
        records += _noteworthy(entry, observed, report)
    for row, entry in zip(rows, log.entries):
        problems += import_json_problems(line=entry.line, name="entry", value=row)
    if problems:
        raise ImportInvalid(problems)
    digest, created = DailyDigest.objects.select_for_update().get_or_create(owner=owner, agent=namespace, day=log.day)
    if digest.entries_purged_at is not None:
        report.warn(None, f"the digest of {log.day} was purged already; its lines were not added back")
    else:
        known = {(e.get("time"), e.get("type"), e.get("content")) for e in digest.entries or []}
        new_rows = [r for r in rows if (r["time"], r["type"], r["content"]) not in known]
        if new_rows or created:
            digest.entries = list(digest.entries or []) + sorted(new_rows, key=lambda r: r["time"])
            if log.summary and not digest.summary:
                # A summary written by the old system counts as done: the lifecycle will not redo it.
                digest.summary = log.summary
                digest.summarized_at = timezone.now()
            digest.save()
            report.digests += 1
    # Log lines are counted as entries; the memories they yield are what _write counts.
    entries_before = report.entries
    _write(owner=owner, records=records, report=report, fmt="daily-log", actor=actor, agent=namespace)
    report.entries = entries_before + len(log.entries)


_IMPORTERS = {
    "memory-md": _import_memory_md,
    "learnings-md": _import_memory_md,
    "memory-json": _import_memory_json,
    "user-md": _import_user_md,
    "jsonl": _import_jsonl,
    "daily-log": _import_daily_log,
}
