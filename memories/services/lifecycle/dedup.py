"""Dedup: active near-duplicates (same agent and category) merge, the stronger absorbing the weaker."""

from collections import defaultdict
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction

from memories.models import Memory, MemoryRelation, RelationType
from memories.services.lifecycle.common import (
    ACTOR,
    EVENT_AFTER_SQL,
    EVENT_BEFORE_SQL,
    StepContext,
    decay_sql,
    wall_now,
)
from memories.updates import same_facts


def _dedup_pairs(run: StepContext, since) -> tuple[list[tuple], int, datetime | None]:
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


def dedup_step(run: StepContext) -> tuple[dict, dict]:
    """Merge active near-duplicates (same agent and category): the stronger absorbs the weaker."""
    started = wall_now()
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


def _merge_apply(run: StepContext, losers: list[tuple]) -> int:
    """Forget each loser (merge event, `supersedes` relation, provenance moved) and reinforce its winner."""
    wall = wall_now()
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
            SELECT %(owner)s, id, 'merge', {EVENT_BEFORE_SQL}, {EVENT_AFTER_SQL},
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
                    1 - (1 - {decay_sql(run, "m.")}) * power(1 - %(rate)s::float8, h.k) AS reinforced
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
            SELECT %(owner)s, id, 'reinforce', {EVENT_BEFORE_SQL}, {EVENT_AFTER_SQL},
                %(actor)s, 'absorbed ' || k || ' duplicate(s)', %(wall)s
            FROM moved
            """,
            {**params, "winners": list(hits), "hits": list(hits.values())},
        )
    return len(merged)
