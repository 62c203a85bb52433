"""The importers of MEMORY.md / learnings.md, memory.json, USER.md and our JSONL: each parses its file into records."""

import json
import re
import uuid

from memories.formats.memory_json import (
    parse_memory_json,
    parse_timestamp,
)
from memories.formats.memory_md import (
    ARCHIVED,
    parse_memory_md,
)
from memories.formats.user_profile import category_for_section, parse_user_profile
from memories.models import (
    Category,
    CoreMemory,
    RelationType,
    Retention,
    Source,
    Status,
)
from memories.services.import_validation import (
    ImportProblem,
    import_text_problems,
)
from memories.services.transfer.export import archive_below
from memories.services.transfer.merge import records_merge
from memories.services.transfer.records import ImportRecord, ImportReport, category_of, entry_problems, local_midnight
from memories.services.transfer.restore import records_restore

_ENTRY_HEADING = re.compile(r"^###\s+\[([^\]\s]+)\]")


def import_memory_md(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    threshold = archive_below()
    parsed = parse_memory_md(text, archive_below=threshold)
    problems = entry_problems(parsed.warnings, report)
    heading_lines = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _ENTRY_HEADING.match(raw)
        if match:
            heading_lines.setdefault(match[1], number)
    records = []
    for entry in parsed.entries:
        line = heading_lines.get(entry.id)
        activated = local_midnight(entry.last_activated)
        archived = entry.section == ARCHIVED or round(entry.score, 2) < threshold
        records.append(
            ImportRecord(
                line=line,
                content=entry.content,
                category=category_of(report, line, entry.category),
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
    records_merge(
        owner=owner, records=records, report=report, fmt=report.format, actor=actor, agent=agent, problems=problems
    )


def import_memory_json(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    parsed = parse_memory_json(text)
    problems = entry_problems(parsed.warnings, report)
    records = []
    for entry in parsed.entries:
        extra = entry.extra
        exact = extra.get("x_category")
        category = (
            exact
            if exact in Category.values
            else category_of(report, entry.line, entry.category, content=entry.content, context=entry.context)
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
            ImportRecord(
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
    records_merge(
        owner=owner, records=records, report=report, fmt="memory-json", actor=actor, agent=agent, problems=problems
    )
    if parsed.rolling_summary:
        CoreMemory.objects.update_or_create(
            owner=owner, agent=agent or "", defaults={"rolling_summary": parsed.rolling_summary}
        )
        report.rolling_summary = True


def import_user_md(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    records = [
        ImportRecord(
            line=item.line,
            content=item.text,
            category=category_for_section(item.section),
            origin=f"line {item.line}" + (f" under {item.section!r}" if item.section else ""),
        )
        for item in parse_user_profile(text)
    ]
    if not records:
        report.warn(None, "no profile lines found (expected '- …' items under '## Section' headings)")
    records_merge(owner=owner, records=records, report=report, fmt="user-md", actor=actor, agent=agent)


_JSONL_PRESERVED_TIMES = ("created_at", "last_reinforced_at", "last_accessed_at", "expires_at")


def import_jsonl(*, owner, text, name, actor, agent, report: ImportReport) -> None:
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
        records_restore(owner=owner, records=records, report=report, actor=actor, agent=agent, problems=problems)
    else:
        records_merge(
            owner=owner, records=records, report=report, fmt="jsonl", actor=actor, agent=agent, problems=problems
        )


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


def _jsonl_record(item, line: int, report: ImportReport) -> ImportRecord | str:
    if not isinstance(item, dict):
        return "not a JSON object"
    content = item.get("content")
    if not isinstance(content, str) or not content.strip() or "\x00" in content:
        return "no usable content"
    try:
        category = item.get("category") or Category.FACT
        category = category if category in Category.values else category_of(report, line, category, content=content)
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
        record = ImportRecord(
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
