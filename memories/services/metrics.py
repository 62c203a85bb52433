"""Latency samples recorded as the service runs (per process), read by /api/v1/metrics/."""

import threading
from collections import deque

_SAMPLES = 2048
_lock = threading.Lock()
_series: dict[str, deque] = {}


def metric_observe(*, name: str, value: float) -> None:
    with _lock:
        _series.setdefault(name, deque(maxlen=_SAMPLES)).append(value)


def metric_percentiles(*, name: str) -> dict:
    with _lock:
        values = sorted(_series.get(name, ()))
    if not values:
        return {"count": 0, "p50": None, "p95": None, "p99": None}

    def pct(p: float) -> float:
        return round(values[min(len(values) - 1, int(p * len(values)))], 3)

    return {"count": len(values), "p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99)}
