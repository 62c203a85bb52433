"""A memory's page: its strength over time, its relations, and the conflicts it is part of."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memories import scoring
from memories.models import (
    Memory,
    MemoryRelation,
    RelationType,
    Status,
)


def memory_strength_series(*, memory: Memory, events, horizon_days: int = 365) -> dict:
    """Past strengths from the history rows and the projection under the current decay policy.

    Each history row gives its "after" strength, preceded at the same instant by its "before" one
    when that differs, so a reinforcement is a jump and the line between two rows follows the decay.
    The lifecycle records decay only at checkpoints (each 0.05 of strength lost), not every night,
    so the chart joins the points with straight lines rather than steps.
    The projection is what the lifecycle would compute on each coming day with no reinforcement:
    base_strength × factor^(days since the last reinforcement − grace); pinned memories do not decay.
    """

    def strength_of(state):
        value = state.get("strength") if isinstance(state, dict) else None
        return value if isinstance(value, int | float) else None

    now = timezone.now()
    past = []
    for e in events:
        after = strength_of(e.after)
        if after is None:
            continue
        t = e.created_at.isoformat()
        before = strength_of(e.before)
        if before is not None and before != after:
            past.append({"t": t, "strength": before, "event": f"{e.event_type} (before)"})
        past.append({"t": t, "strength": after, "event": e.event_type})
    past.append({"t": now.isoformat(), "strength": round(memory.strength, 5), "event": "now"})
    reinforced_at = memory.last_reinforced_at or memory.observed_at
    since = max(0.0, (now - reinforced_at).total_seconds() / 86400)
    cfg = settings.MEMORY_SCORING
    projection = []
    crossings = {"archive": None, "forget": None}
    for day in range(0, horizon_days + 1):
        value = memory.strength if memory.pinned else scoring.decay(memory.base_strength, since + day)
        projection.append({"t": (now + timedelta(days=day)).isoformat(), "strength": round(value, 5)})
        if crossings["archive"] is None and value < cfg["ARCHIVE_BELOW"]:
            crossings["archive"] = (now + timedelta(days=day)).isoformat()
        if crossings["forget"] is None and value < cfg["FORGET_BELOW"] and memory.retention != "permanent":
            crossings["forget"] = (now + timedelta(days=day)).isoformat()
            break
    return {
        "past": past,
        "projection": projection,
        "crossings": crossings,
        "archive_below": cfg["ARCHIVE_BELOW"],
        "forget_below": cfg["FORGET_BELOW"],
        "pinned": memory.pinned,
        "permanent": memory.retention == "permanent",
    }


# How a relation reads from each end, strongest first: the strongest of a pair's types names it (a
# supersede is also recorded as a contradiction: one row, "supersedes", not two).
RELATION_WORDS = {
    "supersedes": ("supersedes", "superseded by"),
    "contradicts": ("contradicts", "contradicted by"),
    "refines": ("refines", "refined by"),
    "supports": ("supports", "supported by"),
    "related": ("related to", "related to"),
}

RELATION_ORDER = tuple(RELATION_WORDS)


def memory_relations(*, memory: Memory) -> list[dict]:
    """One row per other memory: its strongest relation to this one, in words from this side."""
    outgoing = MemoryRelation.objects.filter(owner_id=memory.owner_id, source=memory).select_related("target")
    incoming = MemoryRelation.objects.filter(owner_id=memory.owner_id, target=memory).select_related("source")
    pairs: dict = {}
    for direction, rels in (("out", outgoing.order_by("id")[:200]), ("in", incoming.order_by("id")[:200])):
        for rel in rels:
            other = rel.target if direction == "out" else rel.source
            row = pairs.setdefault((direction, other.pk), {"direction": direction, "other": other, "types": set()})
            row["types"].add(rel.type)
    out = []
    for row in pairs.values():
        kind = min(row["types"], key=RELATION_ORDER.index)
        words = RELATION_WORDS[kind]
        out.append(
            {
                "direction": row["direction"],
                "type": kind,
                "words": words[0] if row["direction"] == "out" else words[1],
                "other": row["other"],
            }
        )
    out.sort(key=lambda r: (RELATION_ORDER.index(r["type"]), r["direction"], str(r["other"].pk)))
    return out


CONFLICT_RANK = {"superseded": 0, "supersedes": 1, "contradicted": 2}


def memory_conflicts(*, owner, ids: list) -> dict[str, str]:
    """For each of `ids` in a contradiction with a memory that is not forgotten: "superseded" (a
    newer memory replaced it), "supersedes", or "contradicted" (two memories disagree and neither
    replaced the other). One query for a page of rows."""
    rels = (
        MemoryRelation.objects.filter(owner=owner, type__in=(RelationType.CONTRADICTS, RelationType.SUPERSEDES))
        .filter(Q(source_id__in=ids) | Q(target_id__in=ids))
        .exclude(source__status=Status.FORGOTTEN)
        .exclude(target__status=Status.FORGOTTEN)
        .values_list("source_id", "target_id", "type")
    )
    wanted = {str(i) for i in ids}
    out: dict[str, str] = {}

    def mark(memory_id, state):
        key = str(memory_id)
        if key in wanted and CONFLICT_RANK[state] < CONFLICT_RANK.get(out.get(key), len(CONFLICT_RANK)):
            out[key] = state

    for source, target, kind in rels:
        if kind == RelationType.SUPERSEDES:
            mark(target, "superseded")
            mark(source, "supersedes")
        else:
            mark(target, "contradicted")
            mark(source, "contradicted")
    return out
