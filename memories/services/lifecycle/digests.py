"""Daily digests: what happened each day, rebuilt while recent, summarised (and promoted) at 30 days, purged at 60."""

import logging
from collections import defaultdict
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import DailyDigest, Memory, MemoryEvent, Source, Status
from memories.services.decisions import memory_write
from memories.services.lifecycle import common
from memories.services.lifecycle.common import ACTOR, StepContext, wall_now

logger = logging.getLogger(__name__)

# Event types that tell what happened on a day (the lifecycle's own bulk moves are only counted).
DIGEST_EVENT_TYPES = ("add", "update", "merge", "supersede", "contradict", "forget", "restore", "import", "moderate")
PROMOTABLE_EVENT_TYPES = ("add", "update", "merge", "import")


def _day_bounds(day, tz) -> tuple[datetime, datetime]:
    start = timezone.make_aware(datetime.combine(day, datetime.min.time()), tz)
    return start, timezone.make_aware(datetime.combine(day + timedelta(days=1), datetime.min.time()), tz)


def _digest_days(run: StepContext, since: datetime, tz) -> set:
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


def _digest_entries(run: StepContext, days: list, tz) -> dict[tuple[str, object], list[dict]]:
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


def _digest_promote(run: StepContext, digest: DailyDigest) -> int:
    """The day's important memories (importance ≥ DIGEST_PROMOTE_IMPORTANCE) live on as memories.

    Through the merge decision: one still there is reinforced, one the lifecycle let go is written
    again; one a person forgot, rejected or still has to review is left alone.
    """
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
        draft = MemoryDraft(
            content=content,
            category=category,
            importance=float(entry["importance"]),
            agent=digest.agent,
            source=Source.CONSOLIDATION,
        )
        memory_write(owner=run.owner, draft=draft, actor=ACTOR)
        promoted += 1
    return promoted


def digests_step(run: StepContext) -> tuple[dict, dict]:
    """Daily digests: rebuild recent days, summarise (and promote) after 30 days, drop raw entries after 60."""
    cfg = run.cfg
    tz = timezone.get_current_timezone()
    today = timezone.localtime(run.now, tz).date()
    started = wall_now()
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
                llm = llm or common.lifecycle_llm()
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
    ).update(entries=[], entries_purged_at=run.now, updated_at=wall_now())
    return counts, {"through": started.isoformat()}
