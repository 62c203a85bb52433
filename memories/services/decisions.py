"""The merge decision every write goes through: ADD, UPDATE, DELETE (supersede) or NOOP.

Explicit writes, extraction, imports and "remember …" in a turn all call `memory_write`, so the
same memory said twice is reinforced instead of duplicated, and a changed value supersedes the old
one (which is penalised ×0.5 and linked by a `supersedes` relation). It reads the memories near the
draft, asks the pure `memories.merge.decide`, and writes what that decided.
"""

from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from memories import scoring, updates
from memories.attributes import attribute_of
from memories.drafts import MemoryDraft
from memories.merge import Decision, Neighbourhood, decide
from memories.models import EventType, Memory, MemoryEvent, MemoryRelation, MemorySource, RelationType, Status
from memories.selectors.retrieval import memory_search
from memories.services.actions import memory_forget
from memories.services.embeddings import embedding_get
from memories.services.memories import memory_create, memory_reinforce, memory_update
from memory_project.events import event_publish
from memory_project.text import content_hash


@dataclass
class WriteResult:
    action: str  # add | update | delete | noop
    memory: Memory
    previous: Memory | None = None
    related: list = field(default_factory=list)
    changed: bool = True  # False for a NOOP that only re-read turns already linked (nothing written)
    superseded: list = field(default_factory=list)  # every memory this write replaced

    @property
    def absorbed_by(self) -> Memory | None:
        """The existing memory that took the incoming text in (NOOP or merge), None when it was written."""
        return self.memory if self.action in ("noop", "update") else None


@transaction.atomic
def memory_write(*, owner, draft: MemoryDraft, actor: str, source_session=None, source_turns=()) -> WriteResult:
    """Store `draft` through the merge decision: read what is near it, decide, write."""
    source_turns = list(source_turns)
    vector = embedding_get(owner=owner, text=draft.content)
    near = _gather(owner=owner, draft=draft, vector=vector, source_turns=source_turns)
    decision = decide(draft=draft, near=near, cfg=settings.MEMORY_DECISION)
    return _apply(
        decision, owner=owner, draft=draft, actor=actor, vector=vector, session=source_session, turns=source_turns
    )


def _gather(*, owner, draft: MemoryDraft, vector: list[float], source_turns: list) -> Neighbourhood:
    """Every memory the decision may weigh: near in meaning, the same text, the same slot, naming
    the value an update retracts; which of them something superseded, and which read these turns."""
    agent, digest = draft.agent, content_hash(draft.content)
    candidates = _similar(owner, agent, vector)
    same = [m for m, _ in candidates if m.content_hash == digest]
    if not same:
        same = list(
            Memory.objects.filter(owner=owner, agent=agent, content_hash=digest).exclude(
                status__in=[Status.FORGOTTEN, Status.REJECTED]
            )[:5]
        )
    superseded = _superseded_ids(same)
    restated: list[Memory] = []
    if same and all(m.pk in superseded for m in same):
        # Said again after something superseded it ("tea" → "coffee" → "tea"): the statement is current
        # again, and supersedes in turn what had replaced it.
        restated = _replacers(same)
        candidates = [(m, _cosine(vector, m.embedding)) for m in restated] + [
            (m, sim) for m, sim in candidates if m not in same and m not in restated
        ]
    if draft.replaces:
        named = (
            Memory.objects.filter(owner=owner, agent=agent, content_hash=content_hash(draft.replaces))
            .exclude(status__in=[Status.FORGOTTEN, Status.REJECTED])
            .first()
        )
        if named is not None and all(m.pk != named.pk for m, _ in candidates):
            candidates.insert(0, (named, 1.0))
    known = {m.pk for m, _ in candidates}
    slot_matches = _same_slot(owner, agent, draft.subject, draft.predicate, vector, known)
    known |= {m.pk for m, _ in slot_matches}
    update = updates.update_of(draft.content)
    mentioned = (
        _mentioning(owner, agent, updates.search_words(update.old), vector, known) if update and update.old else []
    )
    known |= {m.pk for m, _ in mentioned}
    # What gave the same attribute a value ("User's bank is …"), wherever its vector is.
    attribute = attribute_of(draft.content)
    holders = _mentioning(owner, agent, {attribute.name}, vector, known) if attribute else []
    pool = candidates + slot_matches + mentioned + holders
    superseded |= _superseded_ids(m for m, _ in pool)
    best = candidates[0][0] if candidates else None
    stale_best = best is not None and best.pk in superseded and best not in restated
    linked, heard = _read_before(same + [best] if best else same, source_turns, draft.content)
    return Neighbourhood(
        candidates=candidates,
        pool=pool,
        same=same,
        superseded=frozenset(superseded),
        restated=restated,
        replacers=_replacers([best]) if stale_best else [],
        linked=linked,
        heard=heard,
    )


def _apply(
    decision: Decision, *, owner, draft: MemoryDraft, actor: str, vector: list[float], session, turns: list
) -> WriteResult:
    existing = decision.memory
    if not decision.changed:
        return WriteResult("noop", existing, changed=False)
    if decision.action == "noop":
        # The history keeps what was said, even when it is absorbed.
        memory = memory_reinforce(
            memory=existing, actor=actor, session=session, reason=decision.reason, incoming=draft.content
        )
        _link_sources(memory, turns)
        return WriteResult("noop", memory)
    if decision.action == "update":
        updated = memory_update(
            memory=existing,
            actor=actor,
            event_type=EventType.MERGE,
            reason=decision.reason,
            session=session,
            note={"incoming": draft.content},
            content=decision.content,
            importance=max(existing.importance, scoring.importance_value(draft.importance)),
            strength=scoring.reinforce(existing.strength),
        )
        _link_sources(updated, turns)
        return WriteResult("update", updated, previous=existing)
    if decision.review is not None:
        draft = replace(draft, status=Status.PENDING_REVIEW)
    new = memory_create(
        owner=owner, draft=draft, actor=actor, source_session=session, source_turns=turns, embedding=vector,
        reason=decision.reason,
    )  # fmt: skip
    if decision.review is not None:
        Memory.objects.filter(pk=new.pk).update(review_reason=decision.reason[:200])
        new.review_reason = decision.reason[:200]
        MemoryRelation.objects.get_or_create(
            owner_id=owner.pk, source=new, target=decision.review, type=RelationType.CONTRADICTS
        )
    for old, reason in decision.superseded:
        _supersede(old=old, new=new, actor=actor, session=session, reason=reason)
    if decision.action == "add" and decision.review is None:
        for other in decision.related[:3]:
            MemoryRelation.objects.get_or_create(
                owner_id=owner.pk, source=new, target=other, type=RelationType.RELATED, defaults={"weight": 0.5}
            )
    return WriteResult(
        decision.action,
        new,
        previous=decision.previous,
        related=list(decision.related),
        superseded=[m for m, _ in decision.superseded],
    )


def _similar(owner, agent: str, vector: list[float], limit: int = 8) -> list[tuple[Memory, float]]:
    literal = "[" + ",".join(f"{v:.7g}" for v in vector) + "]"
    # No savepoint of its own: it runs inside memory_write's transaction, which SET LOCAL lasts to
    # either way (releasing a savepoint keeps the setting), so one would only add two round trips.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT id, 1 - (embedding <=> %s::vector) FROM memories_memory "
            "WHERE owner_id = %s AND agent = %s AND status IN ('active', 'archived', 'pending_review') "
            "AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector LIMIT %s",
            [literal, owner.pk, agent, literal, limit],
        )
        rows = cursor.fetchall()
    by_id = {str(m.pk): m for m in Memory.objects.filter(pk__in=[r[0] for r in rows])}
    return [(by_id[str(r[0])], float(r[1])) for r in rows if str(r[0]) in by_id]


def _read_before(memories: list[Memory], source_turns: list, content: str) -> tuple[frozenset, frozenset]:
    """Which of `memories` are linked to these turns already, and which of those took `content` from
    them (a repeated or overlapping extraction). A second, different statement of the same turn is
    news: it is recorded, not skipped."""
    turn_ids = [t.pk for t in source_turns]
    if not (turn_ids and memories):
        return frozenset(), frozenset()
    linked = set(
        MemorySource.objects.filter(memory__in=memories, turn_id__in=turn_ids).values_list("memory_id", flat=True)
    )
    digest = content_hash(content)
    heard = {m.pk for m in memories if m.pk in linked and m.content_hash == digest}
    others = [m.pk for m in memories if m.pk in linked and m.pk not in heard]
    if others:
        heard |= set(
            MemoryEvent.objects.filter(memory_id__in=others, after__incoming=content).values_list(
                "memory_id", flat=True
            )
        )
    return frozenset(linked), frozenset(heard)


def _link_sources(memory: Memory, source_turns: list) -> None:
    if not source_turns:
        return
    start = memory.sources.count()
    MemorySource.objects.bulk_create(
        [
            MemorySource(owner_id=memory.owner_id, memory=memory, turn=t, position=start + i)
            for i, t in enumerate(source_turns)
        ],
        ignore_conflicts=True,
    )


def _same_slot(owner, agent: str, subject: str, predicate: str, vector: list[float], known: set) -> list:
    """Memories filling the same subject/predicate slot, however differently worded: a new value for
    the slot contradicts them even when their vectors are far apart ("likes jazz" / "doesn't like jazz")."""
    if not (subject and predicate):
        return []
    rows = (
        Memory.objects.filter(
            owner=owner,
            agent=agent,
            subject__iexact=subject,
            predicate__iexact=predicate,
            status__in=[Status.ACTIVE, Status.ARCHIVED],
            embedding__isnull=False,
        )
        .exclude(pk__in=known)
        .order_by("-strength")[:5]
    )
    return [(m, _cosine(vector, m.embedding)) for m in rows]


def _mentioning(owner, agent: str, words: set[str], vector: list[float], known: set) -> list:
    """Live memories naming one of `words` (the value an update retracts), wherever their vectors are:
    "quit coffee" must reach "loves coffee" and "espresso every morning" alike."""
    words = {w for w in words if len(w) >= 2}
    if not words:
        return []
    query = Q()
    for word in sorted(words)[:6]:
        query |= Q(content__icontains=word)
    rows = (
        Memory.objects.filter(query, owner=owner, agent=agent, status__in=[Status.ACTIVE, Status.ARCHIVED])
        .exclude(pk__in=known)
        .exclude(embedding__isnull=True)
        .order_by("-strength")[:20]
    )
    return [(m, _cosine(vector, m.embedding)) for m in rows]


def _cosine(a, b) -> float:
    return float(sum(x * y for x, y in zip(a, b)))


def _superseded_ids(memories) -> set:
    return set(
        MemoryRelation.objects.filter(target__in=list(memories), type=RelationType.SUPERSEDES).values_list(
            "target_id", flat=True
        )
    )


def _replacers(memories) -> list[Memory]:
    return list(
        Memory.objects.filter(
            relations_out__target__in=list(memories),
            relations_out__type=RelationType.SUPERSEDES,
            status__in=[Status.ACTIVE, Status.ARCHIVED],
        ).distinct()
    )


def _supersede(*, old: Memory, new: Memory, actor: str, session=None, reason: str = "") -> None:
    """The old memory leaves the prompt and implicit recall at once (archived, ×0.5, unpinned), stays
    searchable as history below the new value, and both rows say why."""
    penalised = scoring.contradict(old.strength)
    status = scoring.status_for_strength(penalised, retention=old.retention, current=old.status)
    if status == Status.ACTIVE:
        status = Status.ARCHIVED
    memory_update(
        memory=old,
        actor=actor,
        event_type=EventType.SUPERSEDE,
        reason=f"superseded by {new.pk}: {reason}" if reason else f"superseded by {new.pk}",
        session=session,
        note={"superseded_by": str(new.pk), "incoming": new.content},
        strength=penalised,
        status=status,
        pinned=False,
    )
    MemoryRelation.objects.get_or_create(owner_id=new.owner_id, source=new, target=old, type=RelationType.SUPERSEDES)
    MemoryRelation.objects.get_or_create(owner_id=new.owner_id, source=new, target=old, type=RelationType.CONTRADICTS)
    event_publish(
        owner_id=new.owner_id,
        type="memory.contradiction",
        data={"new": {"id": str(new.pk), "content": new.content}, "old": {"id": str(old.pk), "content": old.content}},
    )


def _forgotten_similarity(owner, agent: str | None, query: str) -> float:
    """Cosine similarity of `query` to the closest memory already forgotten (0 when there is none)."""
    literal = "[" + ",".join(f"{v:.7g}" for v in embedding_get(owner=owner, text=query)) + "]"
    # max() over the owner's forgotten memories is exact; ORDER BY distance LIMIT 1 could be answered
    # by the HNSW index, whose few nearest neighbours may all belong to other owners (then: none).
    sql = (
        "SELECT max(1 - (embedding <=> %s::vector)) FROM memories_memory WHERE owner_id = %s "
        "AND status = 'forgotten' AND embedding IS NOT NULL"
    )
    params: list = [literal, owner.pk]
    if agent is not None:
        sql += " AND agent = %s"
        params.append(agent)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return float(row[0]) if row and row[0] is not None else 0.0


def memory_forget_matching(
    *, owner, query: str, actor: str, agent: str | None = None, session=None, reason: str = ""
) -> Memory | None:
    """Forget the best match for `query` ("forget …", memory_forget); None when nothing matches well."""
    found = memory_search(owner=owner, query=query, top_k=1, scope="memories", agent=agent)
    if not found["results"]:
        return None
    best = found["results"][0]
    if best["scores"]["relevance"] < settings.MEMORY_DECISION["FORGET_MIN_RELEVANCE"]:
        return None
    if _forgotten_similarity(owner, agent, query) > best["scores"]["similarity"]:
        # What was asked for is forgotten already (a repeated request, a retried call): the next best
        # match is not what the user meant.
        return None
    memory = Memory.objects.get(pk=best["id"], owner=owner)
    return memory_forget(memory=memory, actor=actor, reason=reason or f"forget request: {query[:200]}", session=session)
