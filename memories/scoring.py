"""The scoring model (seed 002 §3.4, DESIGN §4) as pure functions; every rate is a setting."""

import math
from datetime import datetime, timedelta

from django.conf import settings

RETENTION_DAYS = {"transient": 1, "short": 3, "long": 30, "permanent": None}
IMPORTANCE_LEVELS = ("high", "medium", "low")


def _cfg(name: str) -> float:
    return settings.MEMORY_SCORING[name]


def importance_value(importance: float | str | None) -> float:
    """A numeric importance from a number or one of high / medium / low."""
    if importance is None:
        return _cfg("IMPORTANCE_MEDIUM")
    if isinstance(importance, str):
        key = importance.strip().lower()
        if key not in IMPORTANCE_LEVELS:
            raise ValueError(f"importance must be a number in [0, 1] or one of {IMPORTANCE_LEVELS}")
        return _cfg(f"IMPORTANCE_{key.upper()}")
    value = float(importance)
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise ValueError("importance must be between 0 and 1")
    return value


def initial_strength(importance: float | str | None) -> float:
    """A new memory starts at its importance (high 0.8 / medium 0.6 / low 0.4)."""
    return importance_value(importance)


def reinforce(strength: float) -> float:
    """One hit: s + (1 - s) × rate — diminishing returns, never above 1."""
    return strength + (1.0 - strength) * _cfg("REINFORCE_RATE")


def decay(strength: float, days_since_reinforced: float) -> float:
    """s × factor^max(0, days − grace)."""
    effective = max(0.0, math.floor(days_since_reinforced) - _cfg("GRACE_DAYS"))
    return strength * _cfg("DECAY_FACTOR") ** effective


def contradict(strength: float) -> float:
    return strength * _cfg("CONTRADICTION_FACTOR")


def status_for_strength(strength: float, *, retention: str, current: str = "active") -> str:
    """Thresholds: below archive → archived; below forget → forgotten unless retention is permanent."""
    if current not in ("active", "archived"):
        return current
    if strength < _cfg("FORGET_BELOW") and retention != "permanent":
        return "forgotten"
    if strength < _cfg("ARCHIVE_BELOW"):
        return "archived"
    return current


def expires_at_for(retention: str, start: datetime) -> datetime | None:
    """Seed 001: a retention class keeps a memory for a span counted from when it is stored."""
    days = RETENTION_DAYS[retention]
    return None if days is None else start + timedelta(days=days)


# Seed 001's defaults: preferences, skills and behaviour rules are kept; lessons and tasks lapse.
DEFAULT_RETENTION = {"todo": "long", "error": "long"}


def default_retention(category: str) -> str:
    """The retention a memory gets when the writer does not say."""
    return DEFAULT_RETENTION.get(category, "permanent")


def recency(age_days: float, *, half_life: float | None = None) -> float:
    """Exponential recency with the configured half-life, 1.0 for something said just now."""
    if half_life is None:
        half_life = settings.MEMORY_RETRIEVAL["RECENCY_HALF_LIFE_DAYS"]
    return 0.5 ** (max(0.0, age_days) / half_life)


def project_strength(strength: float, days: list[float]) -> list[float]:
    """Strength after each of `days` without reinforcement (for decay curves and projections)."""
    return [decay(strength, d) for d in days]
