"""What every lifecycle step shares: settings, the step context, and set-based moves that leave history."""

import math
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.models import EventType, LifecycleRun, Status
from memories.providers import llm as llm_provider

ACTOR = "system:lifecycle"

LIFECYCLE_DEFAULTS = {
    "DRAIN_MAX_JOBS": 200,
    "DEDUP_MAX_CANDIDATES": 2000,
    "DEDUP_NEIGHBOURS": 5,
    "DEDUP_MAX_SCAN_TUPLES": 1000,
    "COMPRESS_AFTER_DAYS": 90,
    "COMPRESS_MAX_ACCESS": 5,
    "COMPRESS_MIN_GROUP": 3,
    "COMPRESS_BATCH": 20,
    "COMPRESS_MAX_BATCHES": 50,
    "DIGEST_SUMMARY_DAYS": 30,
    "DIGEST_PURGE_DAYS": 60,
    "DIGEST_PROMOTE_IMPORTANCE": 0.8,
    "DIGEST_MAX_ENTRIES": 200,
    "DIGEST_SUMMARY_TOKENS": 200,
    "DIGEST_MAX_SUMMARIES": 60,
    "EXPORT_MAX_ACTIVE": 1000,
    "EXPORT_MAX_ARCHIVED": 200,
    "EXPORT_USER_PER_SECTION": 50,
}

# The history event of a move to a status, unless the step names another (expiry).
STATUS_EVENTS = {Status.ARCHIVED: EventType.ARCHIVE, Status.FORGOTTEN: EventType.FORGET}

_EVENT_STATE = (
    "jsonb_build_object('strength', {p}strength, 'status', {p}status, "
    "'retention', {p}retention, 'expires_at', {p}expires_at)"
)
# A moved row's state in its history event, before and after (SQL over `old_*` and the new columns).
EVENT_BEFORE_SQL = _EVENT_STATE.format(p="old_")
EVENT_AFTER_SQL = _EVENT_STATE.format(p="")


def lifecycle_settings() -> dict:
    """LIFECYCLE_DEFAULTS overridden key by key by settings.MEMORY_LIFECYCLE."""
    return {**LIFECYCLE_DEFAULTS, **getattr(settings, "MEMORY_LIFECYCLE", {})}


def lifecycle_llm():
    """The LLM that compresses and summarises; the one place tests and the bench swap it."""
    return llm_provider.get_llm()


class StepContext:
    """What every step needs: the owner, the scoring clock, settings and the previous run's markers."""

    def __init__(self, *, owner, run: LifecycleRun, now: datetime, export_dir):
        self.owner = owner
        self.run = run
        self.now = now
        self.export_dir = export_dir
        self.cfg = lifecycle_settings()
        self.scoring = settings.MEMORY_SCORING
        self._previous = list(
            LifecycleRun.objects.filter(owner=owner).exclude(pk=run.pk).order_by("-started_at", "-pk")[:20]
        )

    def marker(self, step: str, key: str):
        """`key` of `step` in the latest earlier run where that step finished."""
        for previous in self._previous:
            for entry in previous.steps or []:
                if entry.get("name") == step and entry.get("status") == "done" and key in entry:
                    return entry[key]
        return None


def wall_now() -> datetime:
    """The wall clock for bookkeeping (event times, updated_at); the scoring clock is `StepContext.now`."""
    return timezone.now()


def returning_old() -> bool:
    """PostgreSQL 18 can return a row's values from before the UPDATE (RETURNING old.*)."""
    return connection.pg_version >= 180000


def rows_move(
    run: StepContext,
    *,
    where: str,
    set_sql: str,
    event_type: str,
    reason: str,
    params: dict | None = None,
    history_if: str = "true",
) -> tuple[int, int]:
    """One statement: UPDATE the owner's rows matching `where`, INSERT a MemoryEvent per moved row.

    `where` and `set_sql` refer to the updated row as `m`; `history_if` picks the moved rows that
    get an event, over `old_strength`, `old_status`, … (before) and `strength`, `status`, … (after).
    On PostgreSQL 18 the "before" comes from RETURNING old.*, the version actually replaced. Older
    servers read it through a self-join `t`, without locking the row first: should a concurrent
    write change a row meanwhile, PostgreSQL re-checks `where` on the new version before updating
    it, and the event shows the version the statement's snapshot saw. Returns (rows moved, events).
    """
    if returning_old():
        update = f"""
            UPDATE memories_memory m SET {set_sql}
            WHERE m.owner_id = %(owner)s AND ({where})
            RETURNING m.id, old.strength AS old_strength, old.status AS old_status,
                old.retention AS old_retention, old.expires_at AS old_expires_at,
                new.strength, new.status, new.retention, new.expires_at
        """
    else:
        update = f"""
            UPDATE memories_memory m SET {set_sql}
            FROM memories_memory t
            WHERE t.id = m.id AND t.owner_id = %(owner)s AND m.owner_id = %(owner)s AND ({where})
            RETURNING m.id, t.strength AS old_strength, t.status AS old_status,
                t.retention AS old_retention, t.expires_at AS old_expires_at,
                m.strength, m.status, m.retention, m.expires_at
        """
    sql = f"""
        WITH moved AS ({update}), history AS (
            INSERT INTO memories_memoryevent (owner_id, memory_id, event_type, before, after, actor, reason, created_at)
            SELECT %(owner)s, id, %(event_type)s, {EVENT_BEFORE_SQL}, {EVENT_AFTER_SQL},
                %(actor)s, %(reason)s, %(wall)s
            FROM moved WHERE {history_if}
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM history)
    """
    values = {
        "owner": run.owner.pk,
        "event_type": event_type,
        "actor": ACTOR,
        "reason": reason[:500],
        "wall": wall_now(),
        "now": run.now,
        **(params or {}),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, values)
        moved, events = cursor.fetchone()
        return moved, events


def status_move(
    run: StepContext, *, to: str, where: str, reason: str, params: dict | None = None, event_type: str = ""
) -> int:
    """`rows_move` for a status change: every moved row gets its event, by default the status's own
    ("archive", "forget"). Returns the rows moved."""
    moved, _ = rows_move(
        run,
        where=where,
        set_sql=f"status = '{to}', updated_at = %(wall)s",
        event_type=event_type or STATUS_EVENTS[to],
        reason=reason,
        params=params,
    )
    return moved


def decay_sql(run: StepContext, prefix: str) -> str:
    """strength = base × factor^max(0, floor(days since last reinforcement) − grace), as SQL."""
    factor = float(run.scoring["DECAY_FACTOR"])
    # power() raises on underflow; capping the exponent where factor^n is still ~1e-260 avoids that
    # for absurd ages (a year-1 import) without changing any strength that matters.
    cap = math.floor(-600 / math.log(factor)) if 0 < factor < 1 else 1_000_000
    since = f"%(now)s::timestamptz - coalesce({prefix}last_reinforced_at, {prefix}observed_at)"
    # date_part() gives float8 where extract() gives numeric: a third less time over a million rows.
    days = f"floor(date_part('epoch', {since}) / 86400.0::float8)"
    effective = f"least({cap}, greatest(0, {days} - %(grace)s))"
    return f"({prefix}base_strength * power(%(factor)s::float8, {effective}))"
