"""Latency samples recorded as the service runs (per process, per owner), read by /api/v1/metrics/.

Samples are kept per owner: one owner's figures must not move with another's activity, which would
tell them when and how much that owner searches (issue 12).
"""

import threading
from collections import OrderedDict, deque

_SAMPLES = 2048
# At most this many owners' series are kept in a process; the least recently observed go first.
_OWNERS = 10_000
_lock = threading.Lock()
_series: OrderedDict[tuple[str, int], deque] = OrderedDict()


def metric_observe(*, name: str, value: float, owner_id: int) -> None:
    key = (name, owner_id)
    with _lock:
        _series.setdefault(key, deque(maxlen=_SAMPLES)).append(value)
        _series.move_to_end(key)
        while len(_series) > _OWNERS:
            _series.popitem(last=False)


def metric_percentiles(*, name: str, owner_id: int) -> dict:
    with _lock:
        values = sorted(_series.get((name, owner_id), ()))
    if not values:
        return {"count": 0, "p50": None, "p95": None, "p99": None}

    def pct(p: float) -> float:
        return round(values[min(len(values) - 1, int(p * len(values)))], 3)

    return {"count": len(values), "p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99)}
