"""Restore mode: our JSONL export back row for row, ids, statuses and timestamps as exported."""

import uuid

from django.utils import timezone

from memories import scoring
from memories.models import (
    EventType,
    ImportedEntry,
    Memory,
    MemoryEvent,
    MemoryRelation,
    Source,
    Status,
)
from memories.moderation import REASON as MODERATION_REASON
from memories.moderation import moderation_check
from memories.services.embeddings import embedding_get_many
from memories.services.entities import memory_entities_link
from memories.services.import_validation import (
    ImportInvalid,
    ImportProblem,
    import_progress_tick,
    import_record_problems,
)
from memories.services.memories import LIVE_STATUSES, memory_changed_payload, memory_snapshot
from memories.services.transfer.records import LOOKUP_CHUNK, ImportRecord, ImportReport, record_agent
from memory_project.events import event_publish
from memory_project.text import normalize


def records_restore(
    *, owner, records: list[ImportRecord], report: ImportReport, actor: str, agent: str | None, problems
) -> None:
    """Our JSONL export back row for row (see the module's docstring): no merge decision, no
    reinforcement; each row keeps its id when it is free, and a row restored before is left alone."""
    problems = list(problems)
    for record in records:
        if record.source_id is None:
            problems.append(
                ImportProblem(record.line, "id", "a restore needs each line's id (a UUID, as exported); "
                              "import the file with mode merge to write it through the merge decision")
            )  # fmt: skip
        problems += import_record_problems(record=record, agent=record_agent(record, agent))
    if problems:
        raise ImportInvalid(problems)
    ids = [r.source_id for r in records]
    owners: dict = {}
    restored: dict = {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start : start + LOOKUP_CHUNK]
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
        batch.append((record, pk, record_agent(record, agent)))
        report.added += 1
        report.memory_ids.append(str(pk))
        if len(batch) == _RESTORE_BATCH:
            _restore_rows(owner=owner, batch=batch, actor=actor, reason=where)
            batch = []
    _restore_rows(owner=owner, batch=batch, actor=actor, reason=where)
    _restore_relations(owner=owner, records=records, local=local, report=report)
    import_progress_tick(done=len(records), total=len(records))


_RESTORE_BATCH = 500


# A restored memory's fields taken from its record as exported, and its use counters with what an
# older export without them means (never used).
_AS_EXPORTED = ("category", "subject", "predicate", "confidence", "retention")
_USE_AS_EXPORTED = {"access_count": 0, "last_accessed_at": None, "hit_count": 0}


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
        row = Memory(
            id=pk,
            owner=owner,
            agent=namespace,
            content=content,
            **{name: getattr(record, name) for name in _AS_EXPORTED},
            **{name: keep.get(name, default) for name, default in _USE_AS_EXPORTED.items()},
            structured_data=record.structured_data or {},
            embedding=vector,
            importance=importance,
            strength=strength,
            base_strength=strength,
            expires_at=expires,
            status=status,
            pinned=keep.get("pinned", False) and status == Status.ACTIVE,
            review_reason=MODERATION_REASON if status == Status.PENDING_REVIEW else "",
            last_reinforced_at=keep.get("last_reinforced_at") or observed,
            source=record.source or Source.IMPORT,
            observed_at=observed,
        )
        row.text_keys_set()
        rows.append(row)
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
        event_publish(owner_id=owner.pk, type="memory.changed", data=memory_changed_payload(memory, "added"))


def _restore_relations(*, owner, records: list[ImportRecord], local: dict, report: ImportReport) -> None:
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
