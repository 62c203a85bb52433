"""The merge decision every write goes through: ADD, UPDATE, DELETE (supersede) or NOOP.

Explicit writes, extraction, imports and "remember …" in a turn all call `memory_write`, so the
same memory said twice is reinforced instead of duplicated, and a changed value supersedes the old
one (which is penalised ×0.5 and linked by a `supersedes` relation).
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from memories import scoring, updates
from memories.contradiction import contradicts, negated
from memories.models import EventType, Memory, MemoryRelation, MemorySource, RelationType, Source, Status
from memories.moderation import looks_like_instruction
from memories.selectors.retrieval import memory_search
from memories.services.actions import memory_forget
from memories.services.embeddings import embedding_get
from memories.services.memories import memory_create, memory_reinforce, memory_update
from memory_project.events import event_publish
from memory_project.text import content_hash, normalize


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


def _similar(owner, agent: str, vector: list[float], limit: int = 8) -> list[tuple[Memory, float]]:
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


def _already_read(existing: Memory, source_turns: list, content: str = "") -> bool:
    """Did `existing` take `content` in from these turns before (a repeated or overlapping extraction)?
    A second, different statement of the same turn is news: it is recorded, not skipped."""
    turn_ids = [t.pk for t in source_turns]
    if not (turn_ids and existing.sources.filter(turn_id__in=turn_ids).exists()):
        return False
    if not content or content_hash(content) == existing.content_hash:
        return True
    return existing.events.filter(after__incoming=content).exists()


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


def _negative(text: str) -> bool:
    return negated(text)


def _superseded_ids(memories) -> set:
    return set(
        MemoryRelation.objects.filter(target__in=list(memories), type=RelationType.SUPERSEDES).values_list(
            "target_id", flat=True
        )
    )


def _update_reason(content: str, existing: Memory, similarity: float, min_similarity: float) -> str:
    """Why `content` replaces `existing` as a knowledge update, or "" when it does not.

    The cues are in the words: a stop ("quit coffee", "不再喝咖啡") retracts every positive statement
    naming the thing; a switch ("from vim to VS Code", "moved to Lisbon", "换成绿茶") retracts what held
    the same place; "these days only …" / "现在只…" retracts the other values of the same habit.
    """
    update = updates.update_of(content)
    if update is None or _negative(existing.content) or updates.update_of(existing.content) == update:
        return ""
    existing_terms = updates.terms(existing.content)
    new_terms = updates.key_terms(update.new) if update.new else set()
    if new_terms and new_terms <= existing_terms:
        return ""  # the old memory already states the new value
    if (
        update.old
        and updates.names(update.old, existing.content)
        and not updates.other_relation(update.old, existing.content)
    ):
        return f'knowledge update: "{update.old}" no longer holds'
    slot = update.slot or (updates.slot_of(content) if update.kind != "stop" else "")
    if slot and updates.slot_of(existing.content) == slot:
        return f"knowledge update: new {slot} {update.new or content!r}"
    if update.kind == "stop":
        return ""
    new_domain = updates.domain(update.new or content)
    same_domain = bool(new_domain) and new_domain == updates.domain(existing.content)
    if update.kind == "switch" and update.new and same_domain:
        # "switched to VS Code" replaces the editor in use, whatever words (or language) named it.
        return f'knowledge update: switched to "{update.new}"'
    if similarity < min_similarity:
        return ""
    verb = updates.head_verb(content)
    same_habit = verb and verb not in ("is", "has", "have", "be") and verb == updates.head_verb(existing.content)
    if update.kind == "switch" and update.new and same_habit:
        return f'knowledge update: switched to "{update.new}"'
    if same_habit and (updates.exclusive(content) or same_domain):
        return "knowledge update: the habit changed"
    return ""


def _noop(existing: Memory, *, actor: str, session, source_turns: list, reason: str, incoming: str) -> WriteResult:
    """Saying it again reinforces it; re-reading the same turns (a repeated or overlapping
    extraction) must not, or replays would inflate strength. The history keeps what was said."""
    if _already_read(existing, source_turns, incoming):
        return WriteResult("noop", existing, changed=False)
    memory = memory_reinforce(memory=existing, actor=actor, session=session, reason=reason, incoming=incoming)
    _link_sources(memory, source_turns)
    return WriteResult("noop", memory)


def _replacers(memories) -> list[Memory]:
    return list(
        Memory.objects.filter(
            relations_out__target__in=list(memories),
            relations_out__type=RelationType.SUPERSEDES,
            status__in=[Status.ACTIVE, Status.ARCHIVED],
        ).distinct()
    )


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
    the caller knows this one contradicts (an LLM extractor says so explicitly).

    Knowledge updates come first: every memory the statement makes stale is superseded at once
    (archived, out of the prompt). A near duplicate is absorbed only when it carries the same values
    (numbers, identifiers, names): otherwise it is another fact, or the same fact with a new value.
    """
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
    superseded = _superseded_ids(same)
    current = [m for m in same if m.pk not in superseded]
    if current:
        return _noop(
            current[0],
            actor=actor,
            session=source_session,
            source_turns=source_turns,
            reason="same content",
            incoming=content,
        )
    restated: list[Memory] = []
    if same:
        if any(_already_read(m, source_turns) for m in same):
            return WriteResult("noop", same[0], changed=False)
        # Said again after something superseded it ("tea" → "coffee" → "tea"): the statement is current
        # again. It is written anew (the superseded copy stays, as history) and supersedes in turn what
        # had replaced it.
        restated = _replacers(same)
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
    known = {m.pk for m, _ in candidates}
    slot_matches = _same_slot(owner, agent, subject, predicate, vector, known)
    known |= {m.pk for m, _ in slot_matches}
    update = updates.update_of(content)
    mentioned = (
        _mentioning(owner, agent, updates.search_words(update.old), vector, known) if update and update.old else []
    )
    pool = candidates + slot_matches + mentioned
    stale = _superseded_ids(m for m, _ in pool) - {m.pk for m in restated}
    targets: list[tuple[Memory, str]] = []
    for existing, similarity in pool:
        if existing.status == Status.PENDING_REVIEW or existing.pk in stale:
            continue
        reason = _supersede_reason(
            existing, similarity, content=content, subject=subject, predicate=predicate,
            structured_data=structured_data, replaces=replaces, restated=restated, cfg=cfg,
        )  # fmt: skip
        if reason:
            targets.append((existing, reason))
    pinned_target = next((m for m, _ in targets if m.pinned), None)
    if pinned_target is not None:
        # A person pinned the old memory: the contradiction waits for review instead of winning.
        review = f"contradicts pinned memory {pinned_target.pk}"
        new = memory_create(**fields, status=Status.PENDING_REVIEW, reason=review)
        Memory.objects.filter(pk=new.pk).update(review_reason=review[:200])
        new.review_reason = review[:200]
        MemoryRelation.objects.get_or_create(
            owner_id=owner.pk, source=new, target=pinned_target, type=RelationType.CONTRADICTS
        )
        return WriteResult("add", new, related=[pinned_target])
    if targets:
        olds = ", ".join(str(m.pk) for m, _ in targets)
        new = memory_create(**fields, status=status, reason=f"supersedes {olds}: {targets[0][1]}"[:500])
        for old, reason in targets:
            _supersede(old=old, new=new, actor=actor, session=source_session, reason=reason)
        return WriteResult("delete", new, previous=targets[0][0], superseded=[m for m, _ in targets])

    best = candidates[0] if candidates else None
    if best and best[1] >= cfg["DUPLICATE_SIMILARITY"] and _absorbs(best[0].content, content):
        if best[0].pk in stale:
            # Close to a statement that was superseded: the old state holds again, so what replaced it
            # is stale now. Reinforcing the archived copy would leave both values live.
            replacers = _replacers([best[0]])
            new = memory_create(**fields, status=status, reason=f"restates {best[0].pk}")
            for old in replacers:
                _supersede(old=old, new=new, actor=actor, session=source_session, reason="restated earlier value")
            return WriteResult("delete" if replacers else "add", new, previous=best[0], superseded=replacers)
        return _noop(
            best[0],
            actor=actor,
            session=source_session,
            source_turns=source_turns,
            reason="near duplicate",
            incoming=content,
        )
    kept = (content if len(content) >= len(best[0].content) else best[0].content) if best else ""
    if (
        best
        and _absorbs(kept, best[0].content)
        and _absorbs(kept, content)
        and best[0].pk not in stale
        and best[1] >= cfg["UPDATE_SIMILARITY"]
        and best[0].category == category
        # Instruction-like text must not slip into an active memory by way of a merge: it is added
        # on its own, where moderation sends it to review.
        and not looks_like_instruction(content)
    ):
        existing = best[0]
        if _already_read(existing, source_turns, content):
            return WriteResult("noop", existing, changed=False)
        updated = memory_update(
            memory=existing,
            actor=actor,
            event_type=EventType.MERGE,
            reason="refined by a closer statement",
            session=source_session,
            note={"incoming": content},
            content=kept,
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


def _absorbs(kept: str, other: str) -> bool:
    """May the text `kept` stand for both? Only when it carries every value of the other (numbers,
    identifiers, names) and says the same thing (not its negation): "db-01 … 10.0.0.11" never absorbs
    "db-02 … 10.0.0.12", "plays tennis on Mondays and Fridays" does absorb "… on Mondays"."""
    return updates.values(other) <= updates.values(kept) and negated(kept) == negated(other)


def _supersede_reason(
    existing: Memory,
    similarity: float,
    *,
    content: str,
    subject: str,
    predicate: str,
    structured_data: dict | None,
    replaces: str,
    restated: list,
    cfg: dict,
) -> str:
    """Why the incoming statement makes `existing` stale, or "" when both stand."""
    if replaces and existing.content_hash == content_hash(replaces):
        return "the extractor named it as replaced"
    if existing in restated:
        return "restated earlier value"
    min_similarity = cfg["CONTRADICTION_MIN_SIMILARITY"]
    in_slot = bool(subject and predicate) and (existing.subject.lower(), existing.predicate.lower()) == (
        subject.lower(),
        predicate.lower(),
    )
    old_value = (existing.structured_data or {}).get("value", "")
    new_value = (structured_data or {}).get("value", "")
    if (similarity >= min_similarity or in_slot) and contradicts(
        existing.content, content, existing.subject, subject, existing.predicate, predicate, old_value, new_value
    ):
        return f"contradicted: {subject} {predicate} changed" if in_slot else "contradicted by a negation"
    reason = _update_reason(content, existing, similarity, min_similarity)
    if reason:
        return reason
    if similarity >= min_similarity and updates.value_change(existing.content, content):
        return "knowledge update: new value for the same thing"
    return ""


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
