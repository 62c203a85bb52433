"""Reads of the stored request analytics: requests per day by kind, and latency per owner and agent."""

from datetime import timedelta

from django.db.models import Max, Sum
from django.utils import timezone

from analytics.models import BUCKETS, LATENCY_BOUNDS_MS, RequestDaily, RequestKind

MAX_DAYS = 365


def _since(days: int):
    return timezone.now().date() - timedelta(days=days - 1)


def _scope(owner, days: int):
    qs = RequestDaily.objects.filter(day__gte=_since(days))
    return qs if owner is None else qs.filter(owner=owner)


def requests_per_day(*, owner=None, days: int = 30) -> dict:
    """Requests per day (UTC) and kind over the last `days` days, zeros included; all owners when
    `owner` is None (staff)."""
    first = _since(days)
    labels = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    series = {kind: [0] * days for kind in RequestKind.values}
    rows = _scope(owner, days).values_list("day", "kind").annotate(n=Sum("count")).order_by()
    for day, kind, n in rows:
        index = (day - first).days
        if 0 <= index < days and kind in series:
            series[kind][index] += n
    return {"days": labels, "series": series}


def _percentile(buckets: list[int], count: int, p: float) -> float | None:
    """The upper bound of the bucket holding the p-th request (None when slower than the last)."""
    if not count:
        return None
    rank = p * count
    seen = 0
    for index, n in enumerate(buckets):
        seen += n
        if seen >= rank:
            return float(LATENCY_BOUNDS_MS[index]) if index < len(LATENCY_BOUNDS_MS) else None
    return None


def latency_by_owner_and_agent(*, owner=None, days: int = 30, limit: int = 500) -> list[dict]:
    """Per owner, agent and kind over the period: requests, errors, mean, p50 / p95 (as histogram
    bucket bounds) and the slowest request, busiest first."""
    grouped: dict[tuple, dict] = {}
    rows = _scope(owner, days).values(
        "owner_id", "owner__username", "agent", "kind", "count", "errors", "total_ms", "max_ms", "buckets"
    )
    for row in rows.iterator(chunk_size=2000):
        key = (row["owner__username"], row["agent"], row["kind"])
        acc = grouped.setdefault(
            key, {"count": 0, "errors": 0, "total_ms": 0.0, "max_ms": 0.0, "buckets": [0] * BUCKETS}
        )
        acc["count"] += row["count"]
        acc["errors"] += row["errors"]
        acc["total_ms"] += row["total_ms"]
        acc["max_ms"] = max(acc["max_ms"], row["max_ms"])
        acc["buckets"] = [a + b for a, b in zip(acc["buckets"], row["buckets"])]
    out = []
    for (username, agent, kind), acc in grouped.items():
        n = acc["count"]
        out.append(
            {
                "owner": username,
                "agent": agent,
                "kind": kind,
                "count": n,
                "errors": acc["errors"],
                "mean_ms": round(acc["total_ms"] / n, 2) if n else None,
                "p50_ms": _percentile(acc["buckets"], n, 0.50),
                "p95_ms": _percentile(acc["buckets"], n, 0.95),
                "max_ms": round(acc["max_ms"], 2),
            }
        )
    out.sort(key=lambda r: (-r["count"], r["owner"], r["agent"], r["kind"]))
    return out[:limit]


def analytics_totals(*, owner=None, days: int = 30) -> dict:
    agg = _scope(owner, days).aggregate(count=Sum("count"), errors=Sum("errors"), slowest=Max("max_ms"))
    return {"requests": agg["count"] or 0, "errors": agg["errors"] or 0, "slowest_ms": agg["slowest"]}
