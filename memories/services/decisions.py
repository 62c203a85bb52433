"""The merge decision every write goes through: ADD, UPDATE, DELETE (supersede) or NOOP.

Explicit writes, extraction, imports and "remember …" in a turn all call `memory_write`, so the
same memory said twice is reinforced instead of duplicated, and a changed value supersedes the old
one (which is penalised ×0.5 and linked by a `supersedes` relation).
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction

from memories import scoring
from memories.contradiction import contradicts
from memories.models import EventType, Memory, MemoryRelation, MemorySource, RelationType, Source, Status
from memories.moderation import looks_like_instruction
from memories.selectors.retrieval import memory_search
from memories.services.embeddings import embedding_get
from memories.services.memories import memory_create, memory_reinforce, memory_update
from memories.text import content_hash, normalize
from memory_project.events import event_publish


@dataclass
class WriteResult:
    action: str  # add | update | delete | noop
    memory: Memory
    previous: Memory | None = None
    related: list = field(default_factory=list)
    changed: bool = True  # False for a NOOP that only re-read turns already linked (nothing written)


def _similar(owner, agent: str, vector: list[float], limit: int = 5) -> list[tuple[Memory, float]]:
    literal = "[" + ",".join(f"{v:.7g}" for v in vector) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
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


def _already_read(existing: Memory, source_turns: list) -> bool:
    turn_ids = [t.pk for t in source_turns]
    return bool(turn_ids) and existing.sources.filter(turn_id__in=turn_ids).exists()


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


def _cosine(a, b) -> float:
    return float(sum(x * y for x, y in zip(a, b)))


def _noop(existing: Memory, *, actor: str, session, source_turns: list, reason: str) -> WriteResult:
    """Saying it again reinforces it; re-reading the same turns (a repeated or overlapping
    extraction) must not, or replays would inflate strength."""
    if _already_read(existing, source_turns):
        return WriteResult("noop", existing, changed=False)
    memory = memory_reinforce(memory=existing, actor=actor, session=session, reason=reason)
    _link_sources(memory, source_turns)
    return WriteResult("noop", memory)


@transaction.atomic
def memory_write(
    *,
    owner,
    content: str,
    actor: str,
    category: str = "fact",
    importance: float | str | None = None,
    agent: str = "",
    source: str = Source.AGENT_WRITE,
    retention: str | None = None,
    subject: str = "",
    predicate: str = "",
    structured_data: dict | None = None,
    confidence: float = 1.0,
    observed_at: datetime | None = None,
    expires_at: datetime | None = None,
    source_session=None,
    source_turns=(),
    pinned: bool = False,
    status: str | None = None,
    replaces: str = "",
) -> WriteResult:
    """Store `content` through the merge decision. `replaces` names the text of an existing memory
    the caller knows this one contradicts (an LLM extractor says so explicitly)."""
    cfg = settings.MEMORY_DECISION
    content = normalize(content)
    retention = retention or scoring.default_retention(category)
    source_turns = list(source_turns)
    vector = embedding_get(owner=owner, text=content)
    digest = content_hash(content)
    candidates = _similar(owner, agent, vector)
    same = [m for m, _ in candidates if m.content_hash == digest]
    if not same:
        same = list(
            Memory.objects.filter(owner=owner, agent=agent, content_hash=digest).exclude(
                status__in=[Status.FORGOTTEN, Status.REJECTED]
            )[:5]
        )
    superseded = set(
        MemoryRelation.objects.filter(target__in=same, type=RelationType.SUPERSEDES).values_list("target_id", flat=True)
    )
    current = [m for m in same if m.pk not in superseded]
    if current:
        return _noop(current[0], actor=actor, session=source_session, source_turns=source_turns, reason="same content")
    restated: list[Memory] = []
    if same:
        if any(_already_read(m, source_turns) for m in same):
            return WriteResult("noop", same[0], changed=False)
        # Said again after something superseded it ("tea" → "coffee" → "tea"): the statement is current
        # again. It is written anew (the superseded copy stays, as history) and supersedes in turn what
        # had replaced it.
        restated = list(
            Memory.objects.filter(
                owner=owner,
                relations_out__target__in=same,
                relations_out__type=RelationType.SUPERSEDES,
                status__in=[Status.ACTIVE, Status.ARCHIVED],
            ).distinct()
        )
        candidates = [(m, _cosine(vector, m.embedding)) for m in restated] + [
            (m, sim) for m, sim in candidates if m not in same and m not in restated
        ]

    fields = dict(
        owner=owner, content=content, actor=actor, category=category, importance=importance, agent=agent,
        source=source, retention=retention, subject=subject, predicate=predicate, structured_data=structured_data,
        confidence=confidence, observed_at=observed_at, expires_at=expires_at, source_session=source_session,
        source_turns=source_turns, embedding=vector, pinned=pinned,
    )  # fmt: skip
    if replaces:
        named = (
            Memory.objects.filter(owner=owner, agent=agent, content_hash=content_hash(replaces))
            .exclude(status__in=[Status.FORGOTTEN, Status.REJECTED])
            .first()
        )
        if named is not None and all(m.pk != named.pk for m, _ in candidates):
            candidates.insert(0, (named, 1.0))
    slot_matches = _same_slot(owner, agent, subject, predicate, vector, {m.pk for m, _ in candidates})
    for existing, similarity in candidates + slot_matches:
        replaced = (bool(replaces) and existing.content_hash == content_hash(replaces)) or existing in restated
        in_slot = bool(subject and predicate) and (existing.subject.lower(), existing.predicate.lower()) == (
            subject.lower(),
            predicate.lower(),
        )
        if existing.status == Status.PENDING_REVIEW or (
            similarity < cfg["CONTRADICTION_MIN_SIMILARITY"] and not replaced and not in_slot
        ):
            continue
        old_value = (existing.structured_data or {}).get("value", "")
        new_value = (structured_data or {}).get("value", "")
        if not replaced and not contradicts(
            existing.content, content, existing.subject, subject, existing.predicate, predicate, old_value, new_value
        ):
            continue
        if existing.pinned:
            # A person pinned the old memory: the contradiction waits for review instead of winning.
            review = f"contradicts pinned memory {existing.pk}"
            new = memory_create(**fields, status=Status.PENDING_REVIEW, reason=review)
            Memory.objects.filter(pk=new.pk).update(review_reason=review[:200])
            new.review_reason = review[:200]
            MemoryRelation.objects.get_or_create(
                owner_id=owner.pk, source=new, target=existing, type=RelationType.CONTRADICTS
            )
            return WriteResult("add", new, related=[existing])
        new = memory_create(**fields, status=status, reason=f"supersedes {existing.pk}")
        _supersede(old=existing, new=new, actor=actor, session=source_session)
        return WriteResult("delete", new, previous=existing)

    best = candidates[0] if candidates else None
    if best and best[1] >= cfg["DUPLICATE_SIMILARITY"]:
        return _noop(best[0], actor=actor, session=source_session, source_turns=source_turns, reason="near duplicate")
    if (
        best
        and best[1] >= cfg["UPDATE_SIMILARITY"]
        and best[0].category == category
        # Instruction-like text must not slip into an active memory by way of a merge: it is added
        # on its own, where moderation sends it to review.
        and not looks_like_instruction(content)
    ):
        existing = best[0]
        if _already_read(existing, source_turns):
            return WriteResult("noop", existing, changed=False)
        updated = memory_update(
            memory=existing,
            actor=actor,
            event_type=EventType.MERGE,
            reason="refined by a closer statement",
            session=source_session,
            content=content if len(content) >= len(existing.content) else existing.content,
            importance=max(existing.importance, scoring.importance_value(importance)),
            strength=scoring.reinforce(existing.strength),
        )
        _link_sources(updated, source_turns)
        return WriteResult("update", updated, previous=existing)
    new = memory_create(**fields, status=status)
    related = [m for m, s in candidates if s >= cfg["RELATED_SIMILARITY"]]
    for other in related[:3]:
        MemoryRelation.objects.get_or_create(
            owner_id=owner.pk, source=new, target=other, type=RelationType.RELATED, defaults={"weight": 0.5}
        )
    return WriteResult("add", new, related=related)


def _supersede(*, old: Memory, new: Memory, actor: str, session=None) -> None:
    penalised = scoring.contradict(old.strength)
    status = scoring.status_for_strength(penalised, retention=old.retention, current=old.status)
    memory_update(
        memory=old,
        actor=actor,
        event_type=EventType.SUPERSEDE,
        reason=f"superseded by {new.pk}",
        session=session,
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
    found = memory_search(owner=owner, query=query, top_k=1, scope="memories", agent=agent, record_access=False)
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
    return memory_update(
        memory=memory,
        actor=actor,
        event_type=EventType.FORGET,
        reason=reason or f"forget request: {query[:200]}",
        session=session,
        status=Status.FORGOTTEN,
    )
