"""Compression: old, rarely used memories of one agent and category become 1–3 summaries; the originals are archived."""

import logging
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Count, Q

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryRelation, RelationType, Retention, Source, Status
from memories.services.lifecycle import common
from memories.services.lifecycle.common import ACTOR, StepContext, status_move
from memories.services.memories import memory_create
from memory_project.text import normalize
from sessions.models import ChatSession

logger = logging.getLogger(__name__)


def _compress_batches(run: StepContext) -> list[list[dict]]:
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
    out: list[str] = []
    for item in raw or []:
        text = normalize(str(item)) if item is not None else ""
        if text and text not in out:
            out.append(text)
    return out[:3]


def compress_step(run: StepContext) -> tuple[dict, dict]:
    """Old rarely used memories, per (agent, category), in batches of ≥ 3 → 1–3 summaries; originals archived."""
    batches = _compress_batches(run)
    counts = {"groups": len(batches), "compressed": 0, "summaries": 0, "failed": 0}
    if not batches:
        return counts, {}
    llm = common.lifecycle_llm()
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


def _compress_apply(run: StepContext, batch: list[dict], summaries: list[str]) -> tuple[int, int]:
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
            draft = MemoryDraft(
                content=text,
                category=batch[0]["category"],
                agent=batch[0]["agent"],
                importance=max(m["importance"] for m in originals),
                source=Source.CONSOLIDATION,
                retention=retention,
                observed_at=run.now,
            )
            summary = memory_create(
                owner=run.owner,
                draft=draft,
                actor=ACTOR,
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
        archived = status_move(
            run,
            to="archived",
            where="m.id = ANY(%(ids)s::uuid[]) AND m.status = 'active'",
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
    return ChatSession.objects.filter(pk=session_id).first()
