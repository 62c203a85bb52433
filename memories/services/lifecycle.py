"""The nightly per-owner lifecycle (DESIGN §4 "Lifecycle"), one set-based step after another.

Steps, in order: drain leftover extraction jobs → semantic dedup and merge → decay → archive /
forget / demote → expire → expired attachments → compress old rarely used memories → daily digests → MEMORY.md /
USER.md / learnings.md exports → per-owner cap.

Each step commits on its own (a crash part-way leaves the finished steps done) and is idempotent:
decay recomputes from `base_strength`, thresholds and expiry only move rows that still qualify,
compression and digests only pick work not done yet. So re-running after a crash, or twice the
same night, gives the same result.

Concurrency: a run holds a session-level PostgreSQL advisory lock keyed on the owner for its
whole duration. A second run for the same owner does not wait: it is recorded as a LifecycleRun
with status "failed" and error "another run in progress" (`LOCK_BUSY_ERROR`), does nothing, and
is returned at once.

Bulk changes leave history like single ones: every row a threshold, expiry, compression, merge or
the cap moves gets a MemoryEvent (actor "system:lifecycle", before/after with strength, status,
retention and expires_at), inserted by the same statement that changes the row. Decay updates
every row's strength but writes a "decay" event only when the strength crosses a multiple of 0.05
(`DECAY_CHECKPOINTS`): a history checkpoint every 0.05 of strength lost, instead of one row per
memory per night. Lifecycle bookkeeping (event times, `updated_at`) uses the wall clock; the
scoring clock (`now`) can be moved for time travel. Pure decay does not touch `updated_at`, so
"recently updated" keeps meaning a content or status change, and it changes no indexed column,
so each row is a HOT update (see memories migration 0004).

Memories a person pinned are never changed by the lifecycle: no decay, no status change, never a
dedup loser, never compressed, never capped.
"""

import hashlib
import logging
import math
import re
import time
from collections import defaultdict
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from memories import scoring
from memories.formats.memory_md import (
    ARCHIVED,
    MemoryMdEntry,
    file_write_with_backup,
    render_learnings_md,
    render_memory_md,
    render_user_md,
)
from memories.models import (
    PROCEDURAL_CATEGORIES,
    CoreMemory,
    DailyDigest,
    EventType,
    LifecycleRun,
    Memory,
    MemoryEvent,
    MemoryRelation,
    RelationType,
    Retention,
    Source,
    Status,
)
from memories.updates import same_facts
from memory_project.events import event_publish

logger = logging.getLogger(__name__)

ACTOR = "system:lifecycle"
LOCK_BUSY_ERROR = "another run in progress"
INTERRUPTED_ERROR = "interrupted: the process running it stopped before it finished"
USER_MD_CATEGORIES = ("preference", "fact", "project", "workflow", "rule")
# Retentions whose expiry means "forget it"; long memories fade through decay instead.
EXPIRING_RETENTIONS = ("transient", "short")
# Event types that tell what happened on a day (the lifecycle's own bulk moves are only counted).
DIGEST_EVENT_TYPES = ("add", "update", "merge", "supersede", "contradict", "forget", "restore", "import", "moderate")
PROMOTABLE_EVENT_TYPES = ("add", "update", "merge", "import")

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


def lifecycle_settings() -> dict:
    """LIFECYCLE_DEFAULTS overridden key by key by settings.MEMORY_LIFECYCLE."""
    return {**LIFECYCLE_DEFAULTS, **getattr(settings, "MEMORY_LIFECYCLE", {})}


def _llm():
    from memories.providers.llm import get_llm

    return get_llm()


class _Run:
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


def _wall() -> datetime:
    return timezone.now()


# --- lock -------------------------------------------------------------------------------------


def _lock_key(owner_id) -> str:
    return f"memory.lifecycle:{owner_id}"


def _lock_try(owner_id) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [_lock_key(owner_id)])
        return bool(cursor.fetchone()[0])


def _lock_release(owner_id) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [_lock_key(owner_id)])
    except Exception:  # a lost connection has released the lock already
        logger.warning("could not release the lifecycle lock of owner %s", owner_id, exc_info=True)


# --- set-based moves with history --------------------------------------------------------------

_EVENT_STATE = (
    "jsonb_build_object('strength', {p}strength, 'status', {p}status, "
    "'retention', {p}retention, 'expires_at', {p}expires_at)"
)
# Decay writes a history row when a memory's strength crosses a multiple of 1 / DECAY_CHECKPOINTS
# (0.05). Multiplying keeps the grid exact in binary floating point (0.6 * 20 == 12.0, whereas
# 0.6 / 0.05 < 12).
DECAY_CHECKPOINTS = 20


def _returning_old() -> bool:
    """PostgreSQL 18 can return a row's values from before the UPDATE (RETURNING old.*)."""
    return connection.pg_version >= 180000


def _move(
    run: _Run,
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
    if _returning_old():
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
            SELECT %(owner)s, id, %(event_type)s, {_EVENT_STATE.format(p="old_")}, {_EVENT_STATE.format(p="")},
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
        "wall": _wall(),
        "now": run.now,
        **(params or {}),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, values)
        moved, events = cursor.fetchone()
        return moved, events


def _decay_expr(run: _Run, prefix: str) -> str:
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


# --- steps -------------------------------------------------------------------------------------


def _step_drain(run: _Run) -> tuple[dict, dict]:
    """Run the owner's extraction jobs still pending (or failed with attempts left) now."""
    from sessions.models import ExtractionJob
    from sessions.tasks import extraction_job_claim, extraction_job_release

    statuses = ExtractionJob.JobStatus
    # A running job is only claimed when no live worker holds its lock (extraction_job_claim checks).
    claimable = (
        Q(status=statuses.PENDING)
        | Q(status=statuses.FAILED, attempts__lt=F("max_attempts"))
        | Q(status=statuses.RUNNING)
    )
    ids = list(
        ExtractionJob.objects.filter(claimable, owner=run.owner)
        .order_by("created_at")
        .values_list("pk", flat=True)[: run.cfg["DRAIN_MAX_JOBS"]]
    )
    counts = {"found": len(ids), "done": 0, "failed": 0, "skipped": 0}
    if not ids:
        return counts, {}
    from sessions.services.extraction import extraction_job_process

    for job_id in ids:
        job = extraction_job_claim(job_id)
        if job is None:  # a worker took it meanwhile
            counts["skipped"] += 1
            continue
        try:
            extraction_job_process(job=job)
            counts["done"] += 1
        except Exception as exc:
            ExtractionJob.objects.filter(pk=job.pk).update(
                status=statuses.FAILED, last_error=f"{exc.__class__.__name__}: {exc}"[:2000], updated_at=_wall()
            )
            logger.warning("lifecycle: extraction job %s failed (attempt %s): %s", job.pk, job.attempts, exc)
            counts["failed"] += 1
        finally:
            extraction_job_release(job.pk)
    return counts, {}


def _dedup_pairs(run: _Run, since) -> tuple[list[tuple], int, datetime | None]:
    """Near-duplicate pairs among recently changed active memories, via the HNSW index.

    Only memories created or changed since the previous dedup are probed (older pairs were
    checked then, and at write time by the merge decision); at most DEDUP_MAX_CANDIDATES per run,
    oldest change first, so a backlog is worked off over several nights.
    """
    limit = run.cfg["DEDUP_MAX_CANDIDATES"]
    sql = """
        WITH cand AS (
            SELECT id, agent, category, embedding, updated_at FROM memories_memory
            WHERE owner_id = %(owner)s AND status = 'active' AND embedding IS NOT NULL
                AND updated_at >= %(since)s
            ORDER BY updated_at, id
            LIMIT %(limit)s
        )
        SELECT c.id, n.id, n.similarity, c.updated_at
        FROM cand c
        CROSS JOIN LATERAL (
            SELECT m.id, 1 - (m.embedding <=> c.embedding) AS similarity
            FROM memories_memory m
            WHERE m.owner_id = %(owner)s AND m.status = 'active' AND m.embedding IS NOT NULL
                AND m.agent = c.agent AND m.category = c.category AND m.id <> c.id
            ORDER BY m.embedding <=> c.embedding
            LIMIT %(k)s
        ) n
        WHERE n.similarity >= %(threshold)s
    """
    params = {
        "owner": run.owner.pk,
        "since": since,
        "limit": limit,
        "k": run.cfg["DEDUP_NEIGHBOURS"],
        "threshold": settings.MEMORY_DECISION["DUPLICATE_SIMILARITY"],
    }
    with transaction.atomic(), connection.cursor() as cursor:
        # Filtered HNSW scans keep going until enough rows pass the owner/agent/category filter,
        # but only so far: with few live rows among many forgotten ones an unbounded probe costs
        # ~40 ms instead of ~5 ms, and a duplicate missed tonight is still caught at write time.
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SELECT set_config('hnsw.max_scan_tuples', %s, true)", [str(run.cfg["DEDUP_MAX_SCAN_TUPLES"])])
        cursor.execute(
            "SELECT count(*), max(updated_at) FROM (SELECT updated_at FROM memories_memory "
            "WHERE owner_id = %(owner)s AND status = 'active' AND embedding IS NOT NULL AND updated_at >= %(since)s "
            "ORDER BY updated_at, id LIMIT %(limit)s) c",
            params,
        )
        probed, last_seen = cursor.fetchone()
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [(a, b, float(s)) for a, b, s, _ in rows], probed, (last_seen if probed >= limit else None)


def _step_dedup(run: _Run) -> tuple[dict, dict]:
    """Merge active near-duplicates (same agent and category): the stronger absorbs the weaker."""
    started = _wall()
    marker = run.marker("dedup", "through")
    since = datetime.fromisoformat(marker) if marker else datetime(1970, 1, 1, tzinfo=UTC)
    pairs, probed, backlog_at = _dedup_pairs(run, since)
    counts = {"probed": probed, "pairs": len(pairs), "merged": 0}
    # With a backlog the next run continues where this one stopped.
    meta = {"through": (backlog_at or started).isoformat()}
    if not pairs:
        return counts, meta
    ids = {a for a, _, _ in pairs} | {b for _, b, _ in pairs}
    info = {
        m["id"]: m
        for m in Memory.objects.filter(pk__in=ids).values(
            "id", "pinned", "strength", "importance", "hit_count", "observed_at", "content"
        )
    }

    def rank(memory_id):
        m = info[memory_id]
        older_first = -m["observed_at"].timestamp()
        return (m["pinned"], m["strength"], m["importance"], m["hit_count"], older_first, str(m["id"]))

    neighbours: dict = defaultdict(dict)
    for a, b, similarity in pairs:
        # Close vectors with different values are different facts ("db-01 … 10.0.0.11" and "db-02 …
        # 10.0.0.12"), or one the negation of the other: forgetting either would drop a fact.
        if a in info and b in info and same_facts(info[a]["content"], info[b]["content"]):
            neighbours[a][b] = max(similarity, neighbours[a].get(b, 0.0))
            neighbours[b][a] = neighbours[a][b]
    # Strongest first: each memory absorbs its direct duplicates that nothing stronger took, so a
    # survivor is never itself absorbed later and merges never chain through a middle memory.
    gone: set = set()
    absorbed: dict = defaultdict(list)
    for winner in sorted(neighbours, key=rank, reverse=True):
        if winner in gone:
            continue
        for loser, similarity in sorted(neighbours[winner].items(), key=lambda kv: (-kv[1], str(kv[0]))):
            if loser in gone or loser in absorbed or info[loser]["pinned"]:
                continue
            gone.add(loser)
            absorbed[winner].append((loser, similarity))
    losers = [(loser, winner, sim) for winner, items in absorbed.items() for loser, sim in items]
    if not losers:
        return counts, meta
    counts["merged"] = _merge_apply(run, losers)
    return counts, meta


def _merge_apply(run: _Run, losers: list[tuple]) -> int:
    """Forget each loser (merge event, `supersedes` relation, provenance moved) and reinforce its winner."""
    wall = _wall()
    params = {
        "owner": run.owner.pk,
        "losers": [str(loser) for loser, _, _ in losers],
        "winners": [str(winner) for _, winner, _ in losers],
        "sims": [sim for _, _, sim in losers],
        "actor": ACTOR,
        "wall": wall,
        "now": run.now,
        "rate": float(run.scoring["REINFORCE_RATE"]),
        "factor": float(run.scoring["DECAY_FACTOR"]),
        "grace": float(run.scoring["GRACE_DAYS"]),
    }
    forget_sql = f"""
        WITH pairs AS (
            SELECT * FROM unnest(%(losers)s::uuid[], %(winners)s::uuid[], %(sims)s::float8[]) AS p(loser, winner, sim)
        ), target AS (
            SELECT m.id, m.strength, m.status, m.retention, m.expires_at, p.winner, p.sim
            FROM memories_memory m JOIN pairs p ON p.loser = m.id
            JOIN memories_memory w ON w.id = p.winner AND w.status = 'active'
            WHERE m.owner_id = %(owner)s AND m.status = 'active' AND NOT m.pinned
            FOR UPDATE OF m
        ), moved AS (
            UPDATE memories_memory m SET status = 'forgotten', updated_at = %(wall)s
            FROM target t WHERE m.id = t.id
            RETURNING m.id, t.winner, t.sim, t.strength AS old_strength, t.status AS old_status,
                t.retention AS old_retention, t.expires_at AS old_expires_at,
                m.strength, m.status, m.retention, m.expires_at
        ), history AS (
            INSERT INTO memories_memoryevent (owner_id, memory_id, event_type, before, after, actor, reason, created_at)
            SELECT %(owner)s, id, 'merge', {_EVENT_STATE.format(p="old_")}, {_EVENT_STATE.format(p="")},
                %(actor)s, 'duplicate of ' || winner::text || ' (similarity ' || round(sim::numeric, 3) || ')', %(wall)s
            FROM moved
        )
        SELECT id, winner, sim FROM moved
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(forget_sql, params)
        merged = cursor.fetchall()
        if not merged:
            return 0
        loser_ids = [str(r[0]) for r in merged]
        winner_ids = [str(r[1]) for r in merged]
        MemoryRelation.objects.bulk_create(
            [
                MemoryRelation(owner_id=run.owner.pk, source_id=w, target_id=lo, type=RelationType.SUPERSEDES, weight=s)
                for lo, w, s in merged
            ],
            ignore_conflicts=True,
        )
        cursor.execute(
            """
            INSERT INTO memories_memorysource (owner_id, memory_id, turn_id, position)
            SELECT %(owner)s, p.winner, s.turn_id, least(32767, 1000 + s.position)
            FROM unnest(%(losers)s::uuid[], %(winners)s::uuid[]) AS p(loser, winner)
            JOIN memories_memorysource s ON s.memory_id = p.loser
            ON CONFLICT (memory_id, turn_id) DO NOTHING
            """,
            {"owner": run.owner.pk, "losers": loser_ids, "winners": winner_ids},
        )
        # Each absorbed duplicate is one hit: s' = 1 − (1 − s_now)(1 − rate)^k, s_now decayed to now.
        hits: dict[str, int] = defaultdict(int)
        for w in winner_ids:
            hits[w] += 1
        cursor.execute(
            f"""
            WITH hits AS (SELECT * FROM unnest(%(winners)s::uuid[], %(hits)s::int[]) AS h(id, k)),
            target AS (
                SELECT m.id, m.strength, m.status, m.retention, m.expires_at, h.k,
                    1 - (1 - {_decay_expr(run, "m.")}) * power(1 - %(rate)s::float8, h.k) AS reinforced
                FROM memories_memory m JOIN hits h ON h.id = m.id
                WHERE m.owner_id = %(owner)s
                FOR UPDATE OF m
            ), moved AS (
                UPDATE memories_memory m SET strength = t.reinforced, base_strength = t.reinforced,
                    hit_count = m.hit_count + t.k, last_reinforced_at = %(now)s, updated_at = %(wall)s
                FROM target t WHERE m.id = t.id
                RETURNING m.id, t.k, t.strength AS old_strength, t.status AS old_status,
                    t.retention AS old_retention, t.expires_at AS old_expires_at,
                    m.strength, m.status, m.retention, m.expires_at
            )
            INSERT INTO memories_memoryevent (owner_id, memory_id, event_type, before, after, actor, reason, created_at)
            SELECT %(owner)s, id, 'reinforce', {_EVENT_STATE.format(p="old_")}, {_EVENT_STATE.format(p="")},
                %(actor)s, 'absorbed ' || k || ' duplicate(s)', %(wall)s
            FROM moved
            """,
            {**params, "winners": list(hits), "hits": list(hits.values())},
        )
    return len(merged)


def _step_decay(run: _Run) -> tuple[dict, dict]:
    """ONE UPDATE: strength recomputed from base_strength, so a second run the same day changes nothing.

    Every decayed row's strength is updated; the same statement writes a "decay" event only for
    rows whose strength crossed a multiple of 1 / DECAY_CHECKPOINTS (a checkpoint every 0.05).
    """
    params = {
        "factor": float(run.scoring["DECAY_FACTOR"]),
        "grace": float(run.scoring["GRACE_DAYS"]),
    }
    decayed, checkpoints = _move(
        run,
        where=f"m.status IN ('active', 'archived') AND NOT m.pinned AND m.strength <> {_decay_expr(run, 'm.')}",
        set_sql=f"strength = {_decay_expr(run, 'm.')}",
        event_type=EventType.DECAY,
        reason="decay since the last reinforcement",
        params=params,
        history_if=f"floor(old_strength * {DECAY_CHECKPOINTS}) <> floor(strength * {DECAY_CHECKPOINTS})",
    )
    return {"decayed": decayed, "checkpoints": checkpoints}, {}


def _step_thresholds(run: _Run) -> tuple[dict, dict]:
    """Forget below FORGET_BELOW (never permanent), archive below ARCHIVE_BELOW, demote below DEMOTE_BELOW."""
    cfg = run.scoring
    wall = _wall()
    forgotten, _ = _move(
        run,
        where="m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent' "
        "AND m.strength < %(below)s",
        set_sql="status = 'forgotten', pinned = false, updated_at = %(wall)s",
        event_type=EventType.FORGET,
        reason=f"strength below {cfg['FORGET_BELOW']}",
        params={"below": float(cfg["FORGET_BELOW"]), "wall": wall},
    )
    archived, _ = _move(
        run,
        where="m.status = 'active' AND NOT m.pinned AND m.strength < %(below)s",
        set_sql="status = 'archived', updated_at = %(wall)s",
        event_type=EventType.ARCHIVE,
        reason=f"strength below {cfg['ARCHIVE_BELOW']}",
        params={"below": float(cfg["ARCHIVE_BELOW"]), "wall": wall},
    )
    transient_days = scoring.RETENTION_DAYS[Retention.TRANSIENT]
    demoted, _ = _move(
        run,
        where="m.status IN ('active', 'archived') AND NOT m.pinned "
        "AND m.retention NOT IN ('transient', 'permanent') AND m.strength < %(below)s",
        set_sql="retention = 'transient', "
        "expires_at = least(coalesce(m.expires_at, %(expires)s), %(expires)s), updated_at = %(wall)s",
        event_type=EventType.DEMOTE,
        reason=f"strength below {cfg['DEMOTE_BELOW']}: retention demoted to transient",
        params={
            "below": float(cfg["DEMOTE_BELOW"]),
            "expires": run.now + timedelta(days=transient_days),
            "wall": wall,
        },
    )
    return {"forgotten": forgotten, "archived": archived, "demoted": demoted}, {}


def _step_expire(run: _Run) -> tuple[dict, dict]:
    """Todos and transient / short memories whose expires_at passed are forgotten."""
    moved, _ = _move(
        run,
        where="m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent' "
        "AND m.expires_at <= %(now)s AND (m.retention = ANY(%(retentions)s) OR m.category = 'todo')",
        set_sql="status = 'forgotten', updated_at = %(wall)s",
        event_type=EventType.EXPIRE,
        reason="expired",
        params={"retentions": list(EXPIRING_RETENTIONS)},
    )
    return {"expired": moved}, {}


def _step_attachments(run: _Run) -> tuple[dict, dict]:
    """Seed 001 (清理过期附件): attachments past their retention go, rows and files."""
    from attachments.services import attachments_expire

    return {"deleted": attachments_expire(owner_id=run.owner.pk, now=run.now)}, {}


def _compress_batches(run: _Run) -> list[list[dict]]:
    cfg = run.cfg
    cutoff = run.now - timedelta(days=cfg["COMPRESS_AFTER_DAYS"])
    eligible = Memory.objects.filter(
        owner=run.owner,
        status=Status.ACTIVE,
        pinned=False,
        access_count__lt=cfg["COMPRESS_MAX_ACCESS"],
        observed_at__lt=cutoff,
    ).exclude(category="todo")
    # "Old" means old in every sense: said, reinforced and used more than the cutoff ago.
    eligible = eligible.filter(
        Q(last_reinforced_at__isnull=True) | Q(last_reinforced_at__lt=cutoff),
        Q(last_accessed_at__isnull=True) | Q(last_accessed_at__lt=cutoff),
    )
    groups = (
        eligible.values("agent", "category")
        .annotate(n=Count("id"))
        .filter(n__gte=cfg["COMPRESS_MIN_GROUP"])
        .order_by("-n", "agent", "category")
    )
    budget = cfg["COMPRESS_MAX_BATCHES"]
    batches: list[list[dict]] = []
    for group in groups:
        if budget <= 0:
            break
        rows = list(
            eligible.filter(agent=group["agent"], category=group["category"])
            .order_by("observed_at", "id")
            .values("id", "content", "importance", "retention", "source_session_id", "observed_at")[
                : budget * cfg["COMPRESS_BATCH"]
            ]
        )
        chunks = [rows[i : i + cfg["COMPRESS_BATCH"]] for i in range(0, len(rows), cfg["COMPRESS_BATCH"])]
        if len(chunks) > 1 and len(chunks[-1]) < cfg["COMPRESS_MIN_GROUP"]:
            chunks[-2].extend(chunks.pop())
        for chunk in chunks:
            if len(chunk) >= cfg["COMPRESS_MIN_GROUP"] and budget > 0:
                batches.append([{**r, "agent": group["agent"], "category": group["category"]} for r in chunk])
                budget -= 1
    return batches


def _clean_summaries(raw) -> list[str]:
    from memories.text import normalize

    out: list[str] = []
    for item in raw or []:
        text = normalize(str(item)) if item is not None else ""
        if text and text not in out:
            out.append(text)
    return out[:3]


def _step_compress(run: _Run) -> tuple[dict, dict]:
    """Old rarely used memories, per (agent, category), in batches of ≥ 3 → 1–3 summaries; originals archived."""
    batches = _compress_batches(run)
    counts = {"groups": len(batches), "compressed": 0, "summaries": 0, "failed": 0}
    if not batches:
        return counts, {}
    llm = _llm()
    for batch in batches:
        try:
            summaries = _clean_summaries(llm.compress(memories=[m["content"] for m in batch]))
        except Exception:
            logger.warning("lifecycle: compression of %s memories failed", len(batch), exc_info=True)
            summaries = []
        if not summaries:
            counts["failed"] += 1
            continue
        archived, created = _compress_apply(run, batch, summaries)
        counts["compressed"] += archived
        counts["summaries"] += created
    return counts, {}


def _compress_apply(run: _Run, batch: list[dict], summaries: list[str]) -> tuple[int, int]:
    from memories.services.memories import memory_create

    min_group = run.cfg["COMPRESS_MIN_GROUP"]
    with transaction.atomic():
        ids = [m["id"] for m in batch]
        # Re-checked under lock: the LLM call ran outside any transaction and a write may have
        # reinforced or forgotten one of them meanwhile.
        still = list(
            Memory.objects.select_for_update()
            .filter(pk__in=ids, status=Status.ACTIVE, pinned=False)
            .values_list("pk", flat=True)
        )
        if len(still) < min_group:
            return 0, 0
        originals = [m for m in batch if m["id"] in set(still)]
        sessions = {m["source_session_id"] for m in originals}
        retention = Retention.PERMANENT if all(m["retention"] == "permanent" for m in originals) else Retention.LONG
        created = []
        for text in summaries:
            summary = memory_create(
                owner=run.owner,
                content=text,
                actor=ACTOR,
                category=batch[0]["category"],
                agent=batch[0]["agent"],
                importance=max(m["importance"] for m in originals),
                source=Source.CONSOLIDATION,
                retention=retention,
                observed_at=run.now,
                source_session=_session_of(sessions),
                reason=f"compressed from {len(originals)} memories",
            )
            created.append(summary)
        created_ids = [str(s.pk) for s in created]
        MemoryRelation.objects.bulk_create(
            [
                MemoryRelation(owner_id=run.owner.pk, source=s, target_id=m_id, type=RelationType.REFINES)
                for s in created
                for m_id in still
            ],
            ignore_conflicts=True,
        )
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO memories_memorysource (owner_id, memory_id, turn_id, position)
                SELECT %(owner)s, s.id, t.turn_id, least(32767, t.rn - 1)
                FROM unnest(%(summaries)s::uuid[]) AS s(id)
                CROSS JOIN (
                    SELECT turn_id, row_number() OVER (ORDER BY min(position), turn_id) AS rn
                    FROM memories_memorysource WHERE memory_id = ANY(%(originals)s::uuid[])
                    GROUP BY turn_id
                ) t
                ON CONFLICT (memory_id, turn_id) DO NOTHING
                """,
                {"owner": run.owner.pk, "summaries": created_ids, "originals": [str(i) for i in still]},
            )
        archived, _ = _move(
            run,
            where="m.id = ANY(%(ids)s::uuid[]) AND m.status = 'active'",
            set_sql="status = 'archived', updated_at = %(wall)s",
            event_type=EventType.ARCHIVE,
            reason=f"compressed into {', '.join(created_ids)}",
            params={"ids": [str(i) for i in still]},
        )
    return archived, len(created)


def _session_of(session_ids: set):
    if len(session_ids) != 1:
        return None
    (session_id,) = session_ids
    if session_id is None:
        return None
    from sessions.models import ChatSession

    return ChatSession.objects.filter(pk=session_id).first()


# --- daily digests -----------------------------------------------------------------------------


def _day_bounds(day, tz) -> tuple[datetime, datetime]:
    start = timezone.make_aware(datetime.combine(day, datetime.min.time()), tz)
    return start, timezone.make_aware(datetime.combine(day + timedelta(days=1), datetime.min.time()), tz)


def _digest_days(run: _Run, since: datetime, tz) -> set:
    sql = """
        SELECT DISTINCT (e.created_at AT TIME ZONE %(tz)s)::date FROM memories_memoryevent e
        WHERE e.owner_id = %(owner)s AND e.created_at >= %(since)s AND e.actor <> %(actor)s
        UNION
        SELECT DISTINCT (s.started_at AT TIME ZONE %(tz)s)::date FROM chat_sessions_chatsession s
        WHERE s.owner_id = %(owner)s AND (s.created_at >= %(since)s OR s.last_activity_at >= %(since)s)
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"tz": str(tz), "owner": run.owner.pk, "since": since, "actor": ACTOR})
        return {row[0] for row in cursor.fetchall()}


def _digest_entries(run: _Run, days: list, tz) -> dict[tuple[str, object], list[dict]]:
    """{(agent, day): entries} rebuilt from the source rows: stats first, then events and sessions by time."""
    start, _ = _day_bounds(days[0], tz)
    _, end = _day_bounds(days[-1], tz)
    params = {
        "tz": str(tz),
        "owner": run.owner.pk,
        "start": start,
        "end": end,
        "days": days,
        "actor": ACTOR,
        "types": list(DIGEST_EVENT_TYPES),
        "max": run.cfg["DIGEST_MAX_ENTRIES"],
    }
    by_key: dict = defaultdict(list)
    stats: dict = defaultdict(dict)
    omitted: dict = defaultdict(int)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT m.agent, (e.created_at AT TIME ZONE %(tz)s)::date AS day, e.event_type, count(*)
            FROM memories_memoryevent e JOIN memories_memory m ON m.id = e.memory_id
            WHERE e.owner_id = %(owner)s AND e.created_at >= %(start)s AND e.created_at < %(end)s
            GROUP BY 1, 2, 3
            """,
            params,
        )
        for agent, day, event_type, n in cursor.fetchall():
            stats[(agent, day)][event_type] = n
        cursor.execute(
            """
            SELECT agent, day, at, event_type, memory_id, category, importance, content, actor, rn, total FROM (
                SELECT m.agent, (e.created_at AT TIME ZONE %(tz)s)::date AS day,
                    (e.created_at AT TIME ZONE %(tz)s)::time(0) AS at, e.event_type, e.memory_id,
                    coalesce(e.after->>'category', m.category) AS category,
                    coalesce((e.after->>'importance')::float8, m.importance) AS importance,
                    coalesce(e.after->>'content', m.content) AS content, e.actor,
                    row_number() OVER w AS rn, count(*) OVER (PARTITION BY m.agent,
                        (e.created_at AT TIME ZONE %(tz)s)::date) AS total
                FROM memories_memoryevent e JOIN memories_memory m ON m.id = e.memory_id
                WHERE e.owner_id = %(owner)s AND e.created_at >= %(start)s AND e.created_at < %(end)s
                    AND e.actor <> %(actor)s AND e.event_type = ANY(%(types)s)
                WINDOW w AS (PARTITION BY m.agent, (e.created_at AT TIME ZONE %(tz)s)::date ORDER BY e.created_at, e.id)
            ) x WHERE rn <= %(max)s
            """,
            params,
        )
        for agent, day, at, event_type, memory_id, category, importance, content, actor, _rn, total in cursor:
            by_key[(agent, day)].append(
                {
                    "time": at.isoformat(),
                    "type": f"memory.{event_type}",
                    "memory_id": str(memory_id),
                    "category": category,
                    "importance": importance,
                    "content": content,
                    "actor": actor,
                }
            )
            omitted[(agent, day)] = max(0, total - params["max"])
        cursor.execute(
            """
            SELECT s.agent, (s.started_at AT TIME ZONE %(tz)s)::date, (s.started_at AT TIME ZONE %(tz)s)::time(0),
                s.id, s.channel, s.title, s.turn_count, s.status, coalesce(ep.summary, '')
            FROM chat_sessions_chatsession s LEFT JOIN chat_sessions_episode ep ON ep.session_id = s.id
            WHERE s.owner_id = %(owner)s AND s.started_at >= %(start)s AND s.started_at < %(end)s
            ORDER BY s.started_at, s.id
            """,
            params,
        )
        for agent, day, at, session_id, channel, title, turns, status, summary in cursor.fetchall():
            by_key[(agent, day)].append(
                {
                    "time": at.isoformat(),
                    "type": "session",
                    "session_id": str(session_id),
                    "channel": channel,
                    "title": title,
                    "turns": turns,
                    "status": status,
                    "content": summary or title,
                }
            )
    wanted = set(days)
    out = {}
    for key in set(by_key) | set(stats):
        if key[1] not in wanted:
            continue
        entries = sorted(by_key.get(key, []), key=lambda e: e["time"])
        head = [{"type": "stats", "counts": dict(sorted(stats.get(key, {}).items()))}]
        if omitted.get(key):
            head.append({"type": "truncated", "omitted": omitted[key]})
        out[key] = head + entries
    return out


def _digest_text(digest: DailyDigest) -> str:
    lines = []
    for entry in digest.entries or []:
        if entry.get("type") in ("stats", "truncated"):
            continue
        label = entry.get("category") or entry.get("channel") or ""
        lines.append(f"{entry.get('time', '')} {entry.get('type', '')} {label}: {entry.get('content', '')}".strip())
    return "\n".join(lines)


def _digest_promote(run: _Run, digest: DailyDigest) -> int:
    """The day's important memories (importance ≥ DIGEST_PROMOTE_IMPORTANCE) live on as memories.

    Through the merge decision: one still there is reinforced, one the lifecycle let go is written
    again; one a person forgot, rejected or still has to review is left alone.
    """
    from memories.services.decisions import memory_write

    threshold = run.cfg["DIGEST_PROMOTE_IMPORTANCE"]
    wanted = {}
    for entry in digest.entries or []:
        kind = entry.get("type", "")
        if not kind.startswith("memory.") or kind.split(".", 1)[1] not in PROMOTABLE_EVENT_TYPES:
            continue
        if (entry.get("importance") or 0) < threshold or not entry.get("content"):
            continue
        wanted.setdefault(entry["content"], entry)
    if not wanted:
        return 0
    ids = {e.get("memory_id") for e in wanted.values()}
    status_of = {str(pk): s for pk, s in Memory.objects.filter(pk__in=ids, owner=run.owner).values_list("pk", "status")}
    forgotten_by_person = {
        str(pk)
        for pk in Memory.objects.filter(pk__in=ids, owner=run.owner, status=Status.FORGOTTEN)
        .filter(
            Exists(
                MemoryEvent.objects.filter(memory=OuterRef("pk"), after__status=Status.FORGOTTEN).exclude(actor=ACTOR)
            )
        )
        .values_list("pk", flat=True)
    }
    promoted = 0
    for content, entry in wanted.items():
        memory_id = entry.get("memory_id")
        if status_of.get(memory_id) in (Status.REJECTED, Status.PENDING_REVIEW) or memory_id in forgotten_by_person:
            continue
        category = entry.get("category") or "fact"
        memory_write(
            owner=run.owner,
            content=content,
            actor=ACTOR,
            category=category,
            importance=float(entry["importance"]),
            agent=digest.agent,
            source=Source.CONSOLIDATION,
        )
        promoted += 1
    return promoted


def _step_digests(run: _Run) -> tuple[dict, dict]:
    """Daily digests: rebuild recent days, summarise (and promote) after 30 days, drop raw entries after 60."""
    cfg = run.cfg
    tz = timezone.get_current_timezone()
    today = timezone.localtime(run.now, tz).date()
    started = _wall()
    marker = run.marker("digests", "through")
    horizon = run.now - timedelta(days=cfg["DIGEST_PURGE_DAYS"])
    since = datetime.fromisoformat(marker) - timedelta(days=1) if marker else horizon
    oldest = today - timedelta(days=cfg["DIGEST_PURGE_DAYS"])
    days = sorted(d for d in _digest_days(run, since, tz) if oldest < d <= today)
    counts = {"built": 0, "summarized": 0, "promoted": 0, "purged": 0, "failed": 0}
    if days:
        frozen = set(
            DailyDigest.objects.filter(owner=run.owner, day__in=days)
            .filter(Q(summarized_at__isnull=False) | Q(entries_purged_at__isnull=False))
            .values_list("agent", "day")
        )
        rebuilt = _digest_entries(run, days, tz)
        for agent, day in sorted(rebuilt, key=lambda key: (key[1], key[0])):
            if (agent, day) in frozen:
                continue
            DailyDigest.objects.update_or_create(
                owner=run.owner, agent=agent, day=day, defaults={"entries": rebuilt[(agent, day)]}
            )
            counts["built"] += 1

    due = list(
        DailyDigest.objects.filter(
            owner=run.owner,
            day__lte=today - timedelta(days=cfg["DIGEST_SUMMARY_DAYS"]),
            summarized_at__isnull=True,
            entries_purged_at__isnull=True,
        ).order_by("day", "agent")[: cfg["DIGEST_MAX_SUMMARIES"]]
    )
    llm = None
    for digest in due:
        text = _digest_text(digest)
        summary = ""
        if text:
            try:
                llm = llm or _llm()
                summary = llm.summarize(text=text, max_tokens=cfg["DIGEST_SUMMARY_TOKENS"]) or ""
            except Exception:
                logger.warning("lifecycle: summary of digest %s failed", digest.pk, exc_info=True)
                counts["failed"] += 1
                continue
        with transaction.atomic():
            locked = DailyDigest.objects.select_for_update().filter(pk=digest.pk, summarized_at__isnull=True).first()
            if locked is None:
                continue
            counts["promoted"] += _digest_promote(run, locked)
            locked.summary = summary.strip()
            locked.summarized_at = run.now
            locked.save(update_fields=["summary", "summarized_at", "updated_at"])
            counts["summarized"] += 1

    # Raw entries go only once their summary exists, so a failing summariser never loses a day.
    counts["purged"] = DailyDigest.objects.filter(
        owner=run.owner,
        day__lte=today - timedelta(days=cfg["DIGEST_PURGE_DAYS"]),
        entries_purged_at__isnull=True,
        summarized_at__isnull=False,
    ).update(entries=[], entries_purged_at=run.now, updated_at=_wall())
    return counts, {"through": started.isoformat()}


# --- exports -----------------------------------------------------------------------------------


def _path_segment(name: str) -> str:
    """A directory name that cannot escape the export directory; unsafe names get a hash suffix."""
    cleaned = re.sub(r"[^A-Za-z0-9_.@+-]", "_", name).strip(".") or "_"
    if cleaned != name:
        cleaned = f"{cleaned}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return cleaned


def export_dir_for(base, *, username: str, agent: str = "") -> Path:
    """<base>/<username>/ for the default agent, <base>/<username>/agents/<agent>/ for the others."""
    path = Path(base) / _path_segment(username)
    return path / "agents" / _path_segment(agent) if agent else path


def short_ids(ids) -> dict:
    """The shortest hex prefix (8+ characters) of each UUID that is unique among `ids`."""
    hexes = {i: i.hex for i in ids}
    length = 8
    while len({h[:length] for h in hexes.values()}) < len(hexes) and length < 32:
        length += 2
    return {i: h[:length] for i, h in hexes.items()}


_EXPORT_FIELDS = ("id", "category", "strength", "last_reinforced_at", "observed_at", "hit_count", "content", "status")


def _entries(rows: list[dict], ids: dict, tz) -> list[MemoryMdEntry]:
    return [
        MemoryMdEntry(
            id=ids[r["id"]],
            category=r["category"],
            score=min(1.0, max(0.0, r["strength"])),
            last_activated=timezone.localtime(r["last_reinforced_at"] or r["observed_at"], tz).date(),
            hits=r["hit_count"],
            content=r["content"],
            section=ARCHIVED if r["status"] == Status.ARCHIVED else "active",
        )
        for r in rows
    ]


def _export_rows(qs, cfg) -> tuple[list[dict], list[str]]:
    notes = []
    rows = []
    for status, limit in ((Status.ACTIVE, cfg["EXPORT_MAX_ACTIVE"]), (Status.ARCHIVED, cfg["EXPORT_MAX_ARCHIVED"])):
        part = list(qs.filter(status=status).order_by("-strength", "id").values(*_EXPORT_FIELDS)[:limit])
        if len(part) == limit:
            hidden = qs.filter(status=status).count() - limit
            if hidden > 0:
                notes.append(f"{hidden} weaker {status} entries not shown")
        rows += part
    return rows, notes


def _step_exports(run: _Run) -> tuple[dict, dict]:
    """CoreMemory per agent (memory_md / user_md / learnings_md), and the files when an export dir is set."""
    cfg = run.cfg
    tz = timezone.get_current_timezone()
    owner = run.owner
    live = Memory.objects.filter(owner=owner, status__in=[Status.ACTIVE, Status.ARCHIVED])
    agents = set(live.values_list("agent", flat=True).distinct()) | set(
        CoreMemory.objects.filter(owner=owner).values_list("agent", flat=True)
    )
    export_dir = run.export_dir or getattr(settings, "MEMORY_EXPORT_DIR", None)
    updated_at = timezone.localtime(run.now, tz)
    archive_below = float(run.scoring["ARCHIVE_BELOW"])
    counts = {"agents": 0, "entries": 0, "files": 0}
    for agent in sorted(agents):
        scoped = live.filter(agent=agent)
        semantic, semantic_notes = _export_rows(scoped.exclude(category__in=PROCEDURAL_CATEGORIES), cfg)
        procedural, procedural_notes = _export_rows(scoped.filter(category__in=PROCEDURAL_CATEGORIES), cfg)
        profile = []
        for category in USER_MD_CATEGORIES:
            profile += list(
                scoped.filter(status=Status.ACTIVE, category=category)
                .order_by("-strength", "id")
                .values(*_EXPORT_FIELDS)[: cfg["EXPORT_USER_PER_SECTION"] + 1]
            )
        ids = short_ids({r["id"] for r in semantic + procedural + profile})
        memory_md = render_memory_md(
            _entries(semantic, ids, tz), updated_at=updated_at, archive_below=archive_below, notes=semantic_notes
        )
        learnings_md = render_learnings_md(
            _entries(procedural, ids, tz), updated_at=updated_at, archive_below=archive_below, notes=procedural_notes
        )
        user_md = render_user_md(
            _entries(profile, ids, tz),
            name=owner.get_full_name() or owner.get_username(),
            updated_at=updated_at,
            per_section=cfg["EXPORT_USER_PER_SECTION"],
        )
        CoreMemory.objects.update_or_create(
            owner=owner,
            agent=agent,
            defaults={
                "memory_md": memory_md,
                "user_md": user_md,
                "learnings_md": learnings_md,
                "generated_at": run.now,
            },
        )
        counts["agents"] += 1
        counts["entries"] += len(semantic) + len(procedural)
        if export_dir:
            folder = export_dir_for(export_dir, username=owner.get_username(), agent=agent)
            for name, text in (("MEMORY.md", memory_md), ("USER.md", user_md), ("learnings.md", learnings_md)):
                file_write_with_backup(folder / name, text)
                counts["files"] += 1
    return counts, {}


# --- cap ---------------------------------------------------------------------------------------


def _step_cap(run: _Run) -> tuple[dict, dict]:
    """Beyond MEMORY_OWNER_CAP active+archived memories, forget the least important, least recent first."""
    cap = int(settings.MEMORY_OWNER_CAP)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories_memory WHERE owner_id = %s AND status IN ('active', 'archived')",
            [run.owner.pk],
        )
        total = cursor.fetchone()[0]
    excess = max(0, total - cap)
    counts = {"total": total, "cap": cap, "forgotten": 0}
    if not excess:
        return counts, {}
    counts["forgotten"], _ = _move(
        run,
        where="m.id IN (SELECT id FROM memories_memory WHERE owner_id = %(owner)s "
        "AND status IN ('active', 'archived') AND NOT pinned AND retention <> 'permanent' "
        "ORDER BY importance, greatest(observed_at, coalesce(last_accessed_at, observed_at), "
        "coalesce(last_reinforced_at, observed_at)), id LIMIT %(excess)s) "
        "AND m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent'",
        set_sql="status = 'forgotten', updated_at = %(wall)s",
        event_type=EventType.FORGET,
        reason=f"over the per-owner cap of {cap}",
        params={"excess": excess},
    )
    return counts, {}


# --- the run -----------------------------------------------------------------------------------

STEPS = (
    ("drain", _step_drain),
    ("dedup", _step_dedup),
    ("decay", _step_decay),
    ("thresholds", _step_thresholds),
    ("expire", _step_expire),
    ("attachments", _step_attachments),
    ("compress", _step_compress),
    ("digests", _step_digests),
    ("exports", _step_exports),
    ("cap", _step_cap),
)


def _finish(run: LifecycleRun, started: float) -> None:
    run.finished_at = _wall()
    run.duration_ms = int((time.perf_counter() - started) * 1000)
    run.save(update_fields=["status", "steps", "counts", "error", "finished_at", "duration_ms"])
    event_publish(
        owner_id=run.owner_id,
        type="lifecycle.completed",
        data={
            "run_id": run.pk,
            "status": run.status,
            "counts": run.counts,
            "error": run.error,
            "duration_ms": run.duration_ms,
        },
    )


def lifecycle_run(*, owner, trigger: str = "manual", now: datetime | None = None, export_dir=None) -> LifecycleRun:
    """Run every step for `owner`; a run finding another in progress is "failed" with LOCK_BUSY_ERROR."""
    now = now or timezone.now()
    started = time.perf_counter()
    run = LifecycleRun.objects.create(owner=owner, trigger=trigger[:20], status=LifecycleRun.RunStatus.RUNNING)
    if not _lock_try(owner.pk):
        run.status = LifecycleRun.RunStatus.FAILED
        run.error = LOCK_BUSY_ERROR
        _finish(run, started)
        return run
    errors = []
    try:
        # Holding the lock proves no other run of this owner is alive: "running" leftovers crashed.
        LifecycleRun.objects.filter(owner=owner, status=LifecycleRun.RunStatus.RUNNING).exclude(pk=run.pk).update(
            status=LifecycleRun.RunStatus.FAILED, error=INTERRUPTED_ERROR, finished_at=_wall()
        )
        context = _Run(owner=owner, run=run, now=now, export_dir=export_dir)
        for index, (name, step) in enumerate(STEPS, start=1):
            step_started = time.perf_counter()
            entry: dict = {"name": name}
            # Inside a caller's transaction a failing step must only roll back itself.
            guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
            try:
                with guard:
                    counts, meta = step(context)
                entry.update(status="done", counts=counts, **meta)
            except Exception as exc:
                logger.exception("lifecycle step %s failed for owner %s", name, owner.pk)
                counts = {}
                entry.update(status="failed", counts=counts, error=f"{exc.__class__.__name__}: {exc}"[:1000])
                errors.append(f"{name}: {exc.__class__.__name__}: {exc}")
            entry["duration_ms"] = int((time.perf_counter() - step_started) * 1000)
            run.steps = [*run.steps, entry]
            run.counts = {**run.counts, name: counts}
            run.save(update_fields=["steps", "counts"])
            event_publish(
                owner_id=owner.pk,
                type="lifecycle.progress",
                data={"run_id": run.pk, "step": name, "index": index, "total": len(STEPS), **entry},
            )
        run.status = LifecycleRun.RunStatus.FAILED if errors else LifecycleRun.RunStatus.COMPLETED
        run.error = "\n".join(errors)[:5000]
    except BaseException as exc:
        run.status = LifecycleRun.RunStatus.FAILED
        run.error = "\n".join([*errors, f"{exc.__class__.__name__}: {exc}"])[:5000]
        raise
    finally:
        _lock_release(owner.pk)
        _finish(run, started)
    return run


def lifecycle_owners():
    """Owners with anything for the lifecycle to do: memories, sessions or digests."""
    from sessions.models import ChatSession

    User = get_user_model()
    return (
        User.objects.filter(is_active=True)
        .filter(
            Exists(Memory.objects.filter(owner=OuterRef("pk")))
            | Exists(ChatSession.objects.filter(owner=OuterRef("pk")))
            | Exists(DailyDigest.objects.filter(owner=OuterRef("pk")))
        )
        .order_by("pk")
    )


def lifecycle_run_all(*, trigger: str = "schedule", now: datetime | None = None, export_dir=None) -> list[LifecycleRun]:
    """One run per owner (the nightly beat entry point); an owner's failure does not stop the others."""
    runs = []
    for owner in lifecycle_owners().iterator():
        try:
            runs.append(lifecycle_run(owner=owner, trigger=trigger, now=now, export_dir=export_dir))
        except Exception:
            logger.exception("lifecycle run failed for owner %s", owner.pk)
    return runs
