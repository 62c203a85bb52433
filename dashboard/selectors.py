"""Reads behind the dashboard pages, each scoped to one owner.

The memory browser pages with a keyset cursor (the sort value and id of the last row shown), so
page 2,000 of 100,000 rows costs what page 1 does, and counts at most COUNT_CAP rows.
"""

import base64
import json
import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Count, Q, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import TruncDate
from django.utils import timezone

from memories import scoring
from memories.models import (
    Category,
    EventType,
    Memory,
    MemoryEvent,
    MemoryRelation,
    RelationType,
    Source,
    Status,
)
from memories.selectors.metrics import metrics_get
from memories.selectors.retrieval import SEARCHABLE_STATUSES, memory_search
from memory_groups.selectors import group_filter_ids

# Each order walks an index on (owner_id, column[, id]) (dashboard/migrations/0001_browse_indexes.py).
SORTS = {
    "updated": "updated_at",
    "observed": "observed_at",
    "strength": "strength",
    "importance": "importance",
}
DATETIME_SORTS = {"updated_at", "observed_at"}
PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
COUNT_CAP = 10_000
SEARCH_TOP_K = 100
# A search result is listed when its relevance is at least this share of the best result's.
SEARCH_RELATIVE_CUTOFF = 0.5
ROW_FIELDS = (
    "id",
    "content",
    "category",
    "status",
    "agent",
    "source",
    "importance",
    "strength",
    "confidence",
    "pinned",
    "retention",
    "review_reason",
    "observed_at",
    "created_at",
    "updated_at",
    "version",
)
STATUS_ALL = "all"


@dataclass
class BrowseQuery:
    q: str = ""
    category: str = ""
    # "" hides forgotten memories (like the API's list); "all" shows them too.
    status: str = ""
    agent: str | None = None
    source: str = ""
    min_strength: float | None = None
    max_strength: float | None = None
    sort: str = "updated"
    direction: str = "desc"
    cursor: str = ""
    limit: int = PAGE_SIZE
    # A memory group's name or id (memory_groups): its memories and those of the groups below it.
    group: str = ""
    # Search lists the matches under SEARCH_RELATIVE_CUTOFF too.
    weak: bool = False


def _float_param(params, name: str) -> float | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number between 0 and 1") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise ValueError(f"{name} must be a number between 0 and 1")
    return value


def browse_query_parse(params) -> BrowseQuery:
    """A BrowseQuery from query parameters; ValueError with a reason for anything out of range."""
    q = params.get("q", "").strip()
    if "\x00" in q or len(q) > 4000:
        raise ValueError("q must be text of at most 4000 characters")
    category = params.get("category", "").strip()
    if category and category not in Category.values:
        raise ValueError(f"category must be one of {', '.join(Category.values)}")
    status = params.get("status", "").strip()
    if status and status != STATUS_ALL and status not in Status.values:
        raise ValueError(f"status must be '{STATUS_ALL}' or one of {', '.join(Status.values)}")
    source = params.get("source", "").strip()
    if source and source not in Source.values:
        raise ValueError(f"source must be one of {', '.join(Source.values)}")
    agent = params.get("agent")
    group = params.get("group", "").strip()
    if "\x00" in group or len(group) > 100:
        raise ValueError("group must be a group's name or id")
    sort = params.get("sort", "updated").strip() or "updated"
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    direction = params.get("dir", "desc").strip() or "desc"
    if direction not in ("asc", "desc"):
        raise ValueError("dir must be asc or desc")
    try:
        limit = int(params.get("limit", PAGE_SIZE))
    except ValueError:
        raise ValueError("limit must be an integer") from None
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    query = BrowseQuery(
        q=q,
        category=category,
        status=status,
        agent=agent if agent not in (None, "*") else None,
        source=source,
        min_strength=_float_param(params, "min_strength"),
        max_strength=_float_param(params, "max_strength"),
        sort=sort,
        direction=direction,
        cursor=params.get("cursor", "").strip(),
        limit=limit,
        group=group,
        weak=params.get("weak", "") in ("1", "true"),
    )
    if query.cursor:
        _cursor_decode(query.cursor, SORTS[sort])
    return query


def _cursor_encode(value, row_id) -> str:
    raw = json.dumps([value.isoformat() if isinstance(value, datetime) else value, str(row_id)])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _cursor_decode(cursor: str, column: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, row_id = json.loads(raw)
        if column in DATETIME_SORTS:
            value = datetime.fromisoformat(value)
        else:
            value = float(value)
        row_id = uuid.UUID(row_id)
    except (ValueError, TypeError):
        raise ValueError("cursor is not valid for this sort order") from None
    return value, row_id


def _filtered(owner, query: BrowseQuery, *, text_filter: bool):
    qs = Memory.objects.filter(owner=owner)
    if query.status == STATUS_ALL:
        pass
    elif query.status:
        qs = qs.filter(status=query.status)
    else:
        qs = qs.exclude(status=Status.FORGOTTEN)
    if query.category:
        qs = qs.filter(category=query.category)
    if query.agent is not None:
        qs = qs.filter(agent=query.agent)
    if query.source:
        qs = qs.filter(source=query.source)
    if query.min_strength is not None:
        qs = qs.filter(strength__gte=query.min_strength)
    if query.max_strength is not None:
        qs = qs.filter(strength__lte=query.max_strength)
    if text_filter and query.q:
        qs = qs.filter(Q(content__icontains=query.q) | Q(subject__icontains=query.q))
    if query.group:
        from memory_groups.models import MemoryGroupMember

        group_ids = group_filter_ids(owner=owner, ref=query.group)
        qs = qs.filter(pk__in=MemoryGroupMember.objects.filter(group_id__in=group_ids).values("memory_id"))
    return qs


def _capped_count(qs) -> tuple[int, bool]:
    """At most COUNT_CAP + 1 rows counted. Selecting no column lets the filters run index-only
    (memory_dash_stats covers status, category, agent, source and strength)."""
    n = qs.order_by().values_list(Value(1))[: COUNT_CAP + 1].count()
    return min(n, COUNT_CAP), n > COUNT_CAP


def _row(values: dict) -> dict:
    out = dict(values)
    out["id"] = str(out["id"])
    for key in ("observed_at", "created_at", "updated_at"):
        out[key] = out[key].isoformat() if out[key] else None
    out["strength"] = round(out["strength"], 4)
    return out


def _with_conflicts(owner, rows: list[dict]) -> list[dict]:
    conflicts = memory_conflicts(owner=owner, ids=[r["id"] for r in rows]) if rows else {}
    for row in rows:
        row["conflict"] = conflicts.get(row["id"])
    return rows


def memory_browse(*, owner, query: BrowseQuery) -> dict:
    """One page of the owner's memories: ranked by the API's hybrid search when there is a query
    (top SEARCH_TOP_K, active and archived memories, as the API searches), otherwise in the
    chosen order with a keyset cursor for the next page."""
    searchable = query.status in ("", STATUS_ALL) or query.status in SEARCHABLE_STATUSES
    if query.q and searchable:
        return _browse_search(owner, query)
    qs = _filtered(owner, query, text_filter=True)
    count, capped = _capped_count(qs) if not query.cursor else (None, False)
    column = SORTS[query.sort]
    desc = query.direction == "desc"
    if query.cursor:
        value, last_id = _cursor_decode(query.cursor, column)
        op = "<" if desc else ">"
        table = Memory._meta.db_table
        # A row comparison keeps ties on the sort value in id order; the plain bound beside it lets
        # PostgreSQL start an index scan at the cursor instead of filtering from the first row.
        qs = qs.filter(
            RawSQL(f'("{table}"."{column}", "{table}"."id") {op} (%s, %s)', [value, last_id], BooleanField())
        )
        qs = qs.filter(**{f"{column}__{'lte' if desc else 'gte'}": value})
    ordering = (f"-{column}", "-id") if desc else (column, "id")
    rows = list(qs.order_by(*ordering).values(*ROW_FIELDS)[: query.limit + 1])
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    next_cursor = _cursor_encode(rows[-1][column], rows[-1]["id"]) if more else None
    return {
        "mode": "list",
        "results": _with_conflicts(owner, [_row(r) for r in rows]),
        "next_cursor": next_cursor,
        "count": count,
        "count_capped": capped,
    }


def _browse_search(owner, query: BrowseQuery) -> dict:
    found = memory_search(
        owner=owner,
        query=query.q,
        top_k=SEARCH_TOP_K,
        scope="memories",
        categories=[query.category] if query.category else None,
        include_archived=True,
        agent=query.agent,
        # Browsing is a person looking, not an agent recalling: it must not count as a use.
        record_access=False,
        group_ids=group_filter_ids(owner=owner, ref=query.group),
    )
    ranked = found["results"]
    weak = 0
    if ranked and not query.weak:
        # Matches far below the best one are noise to a person reading the list (a search always
        # finds its top_k); they are counted and one click away.
        floor = SEARCH_RELATIVE_CUTOFF * max(r["scores"]["relevance"] for r in ranked)
        kept = [r for r in ranked if r["scores"]["relevance"] >= floor]
        weak, ranked = len(ranked) - len(kept), kept
    found_by_id = {r["id"]: r for r in ranked}
    rows = {
        str(r["id"]): r
        for r in _filtered(owner, query, text_filter=False).filter(pk__in=list(found_by_id)).values(*ROW_FIELDS)
    }
    results = [
        dict(_row(rows[i]), score=found_by_id[i]["score"], scores=found_by_id[i]["scores"])
        for i in found_by_id
        if i in rows
    ][: query.limit]
    return {
        "mode": "search",
        "results": _with_conflicts(owner, results),
        "next_cursor": None,
        "count": len(results),
        "count_capped": False,
        "weak_hidden": weak,
        "took_ms": found["took_ms"],
    }


def memory_agents(*, owner) -> list[str]:
    """The owner's agent namespaces, by a loose index scan: one index probe per distinct agent
    instead of reading every row's agent."""
    table = Memory._meta.db_table
    sql = f"""
        WITH RECURSIVE agents AS (
            (SELECT agent FROM "{table}" WHERE owner_id = %s ORDER BY agent LIMIT 1)
            UNION ALL
            SELECT (SELECT m.agent FROM "{table}" m WHERE m.owner_id = %s AND m.agent > a.agent
                    ORDER BY m.agent LIMIT 1)
            FROM agents a WHERE a.agent IS NOT NULL
        )
        SELECT agent FROM agents WHERE agent IS NOT NULL LIMIT 200
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [owner.pk, owner.pk])
        return [row[0] for row in cursor.fetchall()]


# --- overview -------------------------------------------------------------------------------------


def overview_metrics(*, owner) -> dict:
    """The overview's figures are the API's (GET /api/v1/metrics/)."""
    return metrics_get(owner=owner)


ACTIVITY_KINDS = {
    "added": (EventType.ADD, EventType.IMPORT),
    "updated": (
        EventType.UPDATE,
        EventType.MERGE,
        EventType.REVERT,
        EventType.MODERATE,
        EventType.SUPERSEDE,
        EventType.RESTORE,
    ),
    "forgotten": (EventType.FORGET, EventType.EXPIRE),
}


def memory_activity(*, owner, days: int = 30) -> dict:
    """Memories added / updated / forgotten per day over the last `days` days (UTC), zeros included."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    kind_of = {event: kind for kind, events in ACTIVITY_KINDS.items() for event in events}
    rows = (
        MemoryEvent.objects.filter(
            owner=owner,
            created_at__gte=datetime.combine(first, datetime.min.time(), tzinfo=timezone.get_current_timezone()),
            event_type__in=list(kind_of),
        )
        .annotate(day=TruncDate("created_at"))
        .values_list("day", "event_type")
        .annotate(n=Count("*"))
        .order_by()
    )
    labels = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    series = {kind: [0] * days for kind in ACTIVITY_KINDS}
    for day, event_type, n in rows:
        index = (day - first).days
        if 0 <= index < days:
            series[kind_of[event_type]][index] += n
    return {"days": labels, **series}


# --- decay ----------------------------------------------------------------------------------------


def decay_policy() -> dict:
    cfg = settings.MEMORY_SCORING
    return {
        "decay_factor": cfg["DECAY_FACTOR"],
        "grace_days": cfg["GRACE_DAYS"],
        "reinforce_rate": cfg["REINFORCE_RATE"],
        "archive_below": cfg["ARCHIVE_BELOW"],
        "forget_below": cfg["FORGET_BELOW"],
        "demote_below": cfg["DEMOTE_BELOW"],
        "contradiction_factor": cfg["CONTRADICTION_FACTOR"],
        "importance": {
            "high": cfg["IMPORTANCE_HIGH"],
            "medium": cfg["IMPORTANCE_MEDIUM"],
            "low": cfg["IMPORTANCE_LOW"],
        },
    }


def _first_day_below(initial: float, threshold: float, horizon: int) -> int | None:
    for day in range(horizon + 1):
        if scoring.decay(initial, day) < threshold:
            return day
    return None


def decay_curves(*, horizon_days: int = 365, reinforce_every: tuple[int, ...] = (30, 7)) -> dict:
    """Strength against days without reinforcement for the three importance levels and full strength,
    and what regular use does to a medium memory — all computed by memories.scoring, so the page
    shows the policy the lifecycle applies."""
    policy = decay_policy()
    days = list(range(horizon_days + 1))
    initials = [1.0, policy["importance"]["high"], policy["importance"]["medium"], policy["importance"]["low"]]
    curves = []
    for initial in dict.fromkeys(initials):
        curves.append(
            {
                "initial": initial,
                "values": [round(v, 5) for v in scoring.project_strength(initial, days)],
                "archived_after_days": _first_day_below(initial, policy["archive_below"], horizon_days),
                "forgotten_after_days": _first_day_below(initial, policy["forget_below"], horizon_days),
            }
        )
    start = policy["importance"]["medium"]
    reinforced = []
    for every in reinforce_every:
        base, last, values = start, 0, []
        for day in days:
            value = scoring.decay(base, day - last)
            if day and day % every == 0:
                base, last = scoring.reinforce(value), day
                value = base
            values.append(round(value, 5))
        reinforced.append({"initial": start, "every_days": every, "values": values})
    return {"days": days, "curves": curves, "reinforced": reinforced, "policy": policy}


def strength_distribution(*, owner, bins: int = 20) -> dict:
    """Histogram of the strengths of the owner's active and archived memories."""
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT least(width_bucket(strength, 0, 1, %s), %s) AS b, status, count(*)
                FROM "{table}" WHERE owner_id = %s AND status IN ('active', 'archived')
                GROUP BY 1, 2""",
            [bins, bins, owner.pk],
        )
        rows = cursor.fetchall()
    active, archived = [0] * bins, [0] * bins
    for bucket, status, n in rows:
        index = max(0, min(bins - 1, bucket - 1))
        (active if status == Status.ACTIVE else archived)[index] += n
    edges = [round(i / bins, 4) for i in range(bins + 1)]
    return {"edges": edges, "active": active, "archived": archived}


# --- memory detail --------------------------------------------------------------------------------


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


# How a relation reads from each end, and which of a pair's types names it (a supersede is also
# recorded as a contradiction: one row, "supersedes", not two).
RELATION_WORDS = {
    "supersedes": ("supersedes", "superseded by"),
    "contradicts": ("contradicts", "contradicted by"),
    "refines": ("refines", "refined by"),
    "supports": ("supports", "supported by"),
    "related": ("related to", "related to"),
}
RELATION_ORDER = ("supersedes", "contradicts", "refines", "supports", "related")


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
