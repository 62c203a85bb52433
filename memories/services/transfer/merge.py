"""Merge mode: each record through the merge decision, remembered so a second import changes nothing."""

from memories.models import (
    EventType,
    ImportedEntry,
    Memory,
    Status,
)
from memories.services.decisions import memory_write
from memories.services.import_validation import (
    ImportInvalid,
    import_progress_tick,
    import_record_problems,
)
from memories.services.memories import memory_create, memory_event_record, memory_snapshot
from memories.services.transfer.records import INERT_STATUSES, LOOKUP_CHUNK, ImportRecord, ImportReport, record_agent
from memory_project.text import content_hash


def _state(memory: Memory) -> dict:
    data = memory_snapshot(memory)
    for name in ("observed_at", "created_at", "last_reinforced_at", "last_accessed_at"):
        value = getattr(memory, name)
        data[name] = value.isoformat() if value else None
    data["hit_count"] = memory.hit_count
    data["access_count"] = memory.access_count
    return data


def records_merge(
    *, owner, records: list[ImportRecord], report: ImportReport, fmt: str, actor: str, agent: str | None, problems=()
) -> None:
    # The API's validators on every entry first: one bad entry refuses the file, nothing is written.
    problems = list(problems)
    for record in records:
        problems += import_record_problems(record=record, agent=record_agent(record, agent))
    if problems:
        raise ImportInvalid(problems)
    where = f"imported from {report.source} ({fmt})"
    created: dict = {}  # pk → record, for memories this import added
    known = _known_entries(owner=owner, keys={(record_agent(r, agent), content_hash(r.content)) for r in records})
    for done, record in enumerate(records, start=1):
        import_progress_tick(done=done - 1, total=len(records))
        report.entries += 1
        namespace = record_agent(record, agent)
        key = (namespace, content_hash(record.content))
        if key in known:
            # Imported before (or said word for word already): importing it again changes nothing.
            report.unchanged += 1
            report.memory_ids.append(str(known[key]))
            continue
        reason = f"{where}{', ' + record.origin if record.origin else ''}"
        if record.status in INERT_STATUSES:
            memory = _write_inert(
                owner=owner, record=record, report=report, actor=actor, agent=namespace, reason=reason
            )
            known[key] = _entry_remember(owner=owner, agent=namespace, key=key[1], memory=memory)
            continue
        # Only a held status is the file's to say here: a live one is the decision's (restored below).
        held = Status.PENDING_REVIEW if record.status == Status.PENDING_REVIEW else None
        result = memory_write(owner=owner, draft=record.draft(agent=namespace, status=held), actor=actor)
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


def _preserved(record: ImportRecord, memory: Memory) -> dict:
    changes = dict(record.preserve)
    if "strength" in changes:
        changes["base_strength"] = changes["strength"]
    if record.status in (Status.ACTIVE, Status.ARCHIVED) and memory.status in (Status.ACTIVE, Status.ARCHIVED):
        changes["status"] = record.status
    if changes.get("status", memory.status) != Status.ACTIVE:
        changes["pinned"] = False
    return {k: v for k, v in changes.items() if getattr(memory, k) != v}


def _write_inert(*, owner, record: ImportRecord, report: ImportReport, actor: str, agent: str, reason: str) -> Memory:
    """Forgotten and rejected memories are history: kept for fidelity, never merged with live ones."""
    memory = memory_create(
        owner=owner,
        draft=record.draft(agent=agent, status=record.status),
        actor=actor,
        event_type=EventType.IMPORT,
        reason=reason,
    )
    changes = _preserved(record, memory)
    if changes:
        Memory.objects.filter(pk=memory.pk).update(**changes)
    report.added += 1
    report.memory_ids.append(str(memory.pk))
    return memory


def _known_entries(*, owner, keys: set[tuple[str, str]]) -> dict[tuple[str, str], object]:
    """{(agent, content hash): memory id} of the entries among `keys` that an import must leave alone:
    imported before (into whatever memory they became or were folded into), or already held word for
    word in that namespace, in any status (an archived memory stays archived, a forgotten one stays
    forgotten)."""
    hashes = sorted({h for _, h in keys})
    known: dict = {}
    for start in range(0, len(hashes), LOOKUP_CHUNK):
        chunk = hashes[start : start + LOOKUP_CHUNK]
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
