"""The memory graph's data: memories, the relations among them and the entities they mention.

Readable by construction: memories with no relation and no entity are left out unless asked for
(they are counted, not drawn), an entity or a text search narrows the graph to what it names, and a
neighbourhood is one memory with what is a few relations or a shared entity away from it.
"""

from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef, Q, Value

from memories.models import Entity, Memory, MemoryEntity, MemoryRelation, Status

GRAPH_STATUSES = (Status.ACTIVE, Status.ARCHIVED, Status.PENDING_REVIEW)
GRAPH_DEFAULT_NODES = 400
GRAPH_MAX_NODES = 5000
# The entity filter lists the entities mentioned most; the search box finds the others.
GRAPH_ENTITY_CHOICES = 300
NEIGHBOURHOOD_MAX_DEPTH = 3


@dataclass(frozen=True)
class GraphQuery:
    categories: tuple[str, ...] = ()
    limit: int = GRAPH_DEFAULT_NODES
    unlinked: bool = False
    entity: int | None = None
    q: str = ""
    focus: str | None = None
    depth: int = 1


def _linked(owner):
    """Memories with a relation to another memory the graph shows, or an entity."""
    relation_out = MemoryRelation.objects.filter(owner=owner, source=OuterRef("pk"), target__status__in=GRAPH_STATUSES)
    relation_in = MemoryRelation.objects.filter(owner=owner, target=OuterRef("pk"), source__status__in=GRAPH_STATUSES)
    entity = MemoryEntity.objects.filter(owner=owner, memory=OuterRef("pk"))
    return Exists(relation_out) | Exists(relation_in) | Exists(entity)


def _capped_count(qs, cap: int = GRAPH_MAX_NODES) -> int:
    return qs.order_by().values_list(Value(1))[: cap + 1].count()


def _neighbourhood(owner, focus: Memory, depth: int, limit: int) -> dict:
    """Hop distance of each memory within `depth` relations of `focus`; memories sharing an entity
    with it count as one hop."""
    hops = {focus.pk: 0}
    frontier = {focus.pk}
    shared = (
        MemoryEntity.objects.filter(owner=owner, entity__memory_links__memory=focus, memory__status__in=GRAPH_STATUSES)
        .exclude(memory=focus)
        .values_list("memory_id", flat=True)[:limit]
    )
    for depth_one in shared:
        hops.setdefault(depth_one, 1)
    for hop in range(1, depth + 1):
        if not frontier or len(hops) >= limit:
            break
        pairs = MemoryRelation.objects.filter(owner=owner).filter(
            Q(source_id__in=frontier, target__status__in=GRAPH_STATUSES)
            | Q(target_id__in=frontier, source__status__in=GRAPH_STATUSES)
        )
        found = set()
        for source, target in pairs.values_list("source_id", "target_id")[: limit * 4]:
            found.update((source, target))
        frontier = {pk for pk in found if pk not in hops}
        for pk in frontier:
            hops[pk] = hop
    return dict(sorted(hops.items(), key=lambda item: item[1])[:limit])


def graph_entities(*, owner) -> list[dict]:
    """The entities the filter offers: the most mentioned first."""
    mentions = Count("memory_links", filter=Q(memory_links__memory__status__in=GRAPH_STATUSES))
    rows = (
        Entity.objects.filter(owner=owner)
        .annotate(mentions=mentions)
        .filter(mentions__gt=0)
        .order_by("-mentions", "name")
        .values("id", "name", "kind", "mentions")[:GRAPH_ENTITY_CHOICES]
    )
    return list(rows)


def memory_graph(*, owner, query: GraphQuery) -> dict:
    """Nodes and edges for the graph page, and what was left out (`hidden_unlinked`, `truncated`)."""
    qs = Memory.objects.filter(owner=owner, status__in=GRAPH_STATUSES)
    hops: dict = {}
    hidden_unlinked = 0
    focus = None
    if query.focus is not None:
        focus = Memory.objects.get(owner=owner, pk=query.focus, status__in=GRAPH_STATUSES)
        hops = _neighbourhood(owner, focus, query.depth, query.limit)
        qs = qs.filter(pk__in=list(hops))
    else:
        if query.categories:
            qs = qs.filter(category__in=query.categories)
        if query.entity is not None:
            qs = qs.filter(entity_links__entity_id=query.entity)
        if query.q:
            named = MemoryEntity.objects.filter(owner=owner, memory=OuterRef("pk"), entity__name__icontains=query.q)
            qs = qs.filter(Q(content__icontains=query.q) | Exists(named))
        if not query.unlinked and query.entity is None:
            linked = _linked(owner)
            hidden_unlinked = _capped_count(qs.filter(~linked))
            qs = qs.filter(linked)
    memories = list(
        qs.order_by("-strength", "-updated_at").values("id", "content", "category", "status", "strength", "pinned")[
            : query.limit
        ]
    )
    ids = [m["id"] for m in memories]
    nodes = [
        {
            "id": str(m["id"]),
            "kind": "memory",
            "label": m["content"][:120],
            "category": m["category"],
            "status": m["status"],
            "strength": round(m["strength"], 3),
            "pinned": m["pinned"],
            **({"hop": hops[m["id"]]} if hops else {}),
        }
        for m in memories
    ]
    edges = [
        {"id": f"r{r['id']}", "source": str(r["source_id"]), "target": str(r["target_id"]), "type": r["type"]}
        for r in MemoryRelation.objects.filter(owner=owner, source_id__in=ids, target_id__in=ids)
        .order_by("id")
        .values("id", "source_id", "target_id", "type")
    ]
    links = list(
        MemoryEntity.objects.filter(owner=owner, memory_id__in=ids)
        .order_by("id")
        .values("id", "memory_id", "entity_id")[: query.limit * 4]
    )
    entity_ids = {link["entity_id"] for link in links}
    for entity in Entity.objects.filter(owner=owner, pk__in=entity_ids).order_by("id").values("id", "name", "kind"):
        nodes.append(
            {"id": f"e{entity['id']}", "kind": "entity", "label": entity["name"][:80], "entity_kind": entity["kind"]}
        )
    edges += [
        {
            "id": f"l{link['id']}",
            "source": str(link["memory_id"]),
            "target": f"e{link['entity_id']}",
            "type": "mentions",
        }
        for link in links
    ]
    total = _capped_count(qs)
    return {
        "nodes": nodes,
        "edges": edges,
        "memory_count": len(memories),
        "truncated": total > len(memories),
        "hidden_unlinked": hidden_unlinked,
        "focus": {"id": str(focus.pk), "label": focus.content[:200], "depth": query.depth} if focus else None,
    }
