"""The memory browser's pages: a filtered list in the chosen order or the API's hybrid search; the agents."""

from django.db import connection
from django.db.models import BooleanField, Q, Value
from django.db.models.expressions import RawSQL

from dashboard.selectors.browse_query import SORTS, STATUS_ALL, BrowseQuery, cursor_decode, cursor_encode
from dashboard.selectors.detail import memory_conflicts
from memories.models import (
    Memory,
    Status,
)
from memories.selectors.memories import memory_in_groups
from memories.selectors.retrieval import memory_search
from memories.selectors.search.statements import SEARCHABLE_STATUSES
from memory_groups.selectors import group_filter_ids

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
        group_ids = group_filter_ids(owner=owner, ref=query.group)
        qs = memory_in_groups(qs, group_ids)
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
        value, last_id = cursor_decode(query.cursor, column)
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
    next_cursor = cursor_encode(rows[-1][column], rows[-1]["id"]) if more else None
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
