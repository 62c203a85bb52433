"""The progressive-disclosure context block (seed 001, seed 004 implicit recall, seed 003 budget)."""

import uuid

from django.conf import settings
from django.utils import timezone

from hotcache.services import hot_cache_get
from memories.models import Memory, MemoryRelation, RelationType, Status
from memories.selectors.memories import memory_in_groups
from memories.selectors.retrieval import memory_search
from memories.tools import TOOLS_DESCRIPTION
from memory_project.text import estimate_tokens
from sessions.choices import Role
from sessions.models import ChatSession, ConversationTurn
from sessions.selectors.sessions import scratchpad_get


def _pinned(owner, agent: str | None, group_ids: list | None = None) -> list[Memory]:
    cfg = settings.MEMORY_SCORING
    rows = Memory.objects.filter(owner=owner, status=Status.ACTIVE, strength__gte=cfg["PIN_MIN_STRENGTH"])
    if agent is not None:
        rows = rows.filter(agent=agent)
    if group_ids is not None:
        rows = memory_in_groups(rows, group_ids)
    return list(
        rows.exclude(expires_at__lte=_now())
        .exclude(relations_in__type=RelationType.SUPERSEDES)
        .defer("embedding", "search_vector")
        .order_by("-pinned", "-strength", "-importance", "-updated_at")[: cfg["PIN_MAX"]]
    )


def _context_memories(owner, agent: str | None, query: str, group_ids: list | None, searches: list) -> dict:
    """The memories of a context block (JSON-ready, as the hot cache keeps them): the pinned ones
    and, for a query, the ones recalled for it; `searched` are the memory ids the search returned.
    The search's own result is appended to `searches` (it is not cached)."""
    pinned = _pinned(owner, agent, group_ids)
    recalled, searched = [], []
    if query:
        pinned_ids = {str(m.pk) for m in pinned}
        found = memory_search(
            owner=owner,
            query=query,
            top_k=settings.CONTEXT_IMPLICIT_RECALL + len(pinned_ids),
            scope="memories",
            include_archived=False,
            agent=agent,
            group_ids=group_ids,
        )
        searches.append(found)
        searched = [r["id"] for r in found["results"] if r["type"] == "memory"]
        # A superseded memory is history, not knowledge: it stays searchable but is never offered.
        superseded = set(
            MemoryRelation.objects.filter(
                owner=owner, type=RelationType.SUPERSEDES, target_id__in=[r["id"] for r in found["results"]]
            ).values_list("target_id", flat=True)
        )
        recalled = [
            {"id": r["id"], "content": r["content"], "category": r["metadata"]["category"], "score": r["score"]}
            for r in found["results"]
            if r["id"] not in pinned_ids and uuid.UUID(r["id"]) not in superseded
        ][: settings.CONTEXT_IMPLICIT_RECALL]
    # An entry must not outlive the first of its memories to expire.
    first_expiry = (
        Memory.objects.filter(pk__in=[m.pk for m in pinned] + [r["id"] for r in recalled], expires_at__isnull=False)
        .order_by("expires_at")
        .values_list("expires_at", flat=True)
        .first()
    )
    return {
        "pinned": [
            {
                "id": str(m.pk),
                "content": m.content,
                "category": m.category,
                "strength": round(m.strength, 4),
                "importance": m.importance,
            }
            for m in pinned
        ],
        "recalled": recalled,
        "searched": searched,
        "valid_until": first_expiry.timestamp() if first_expiry else None,
    }


def _now():
    return timezone.now()


def _is_first_message(owner, session_id) -> bool:
    if session_id is None:
        return True
    return ConversationTurn.objects.filter(owner=owner, session_id=session_id, role=Role.USER).count() <= 1


def context_build(*, owner, **options) -> dict:
    """The context block for an agent's prompt, read only (options as `context_recall`): the
    dashboard's context-window view previews it without counting the recalled memories as used."""
    return context_recall(owner=owner, **options)[0]


def context_recall(
    *,
    owner,
    query: str = "",
    agent: str | None = None,
    session_id=None,
    max_tokens: int | None = None,
    group_ids: list | None = None,
) -> tuple[dict, dict]:
    """(the context block, its recall): the memory ids its search returned (`searched`, also when
    the memories came from the hot cache) and that search's result when one ran (`search`), for
    memories.services.search.context_deliver to record.

    `agent` reads as in `memory_search`: None pins and recalls from every agent namespace of the owner,
    a string (the empty one included) from that namespace only. The scratchpad is per namespace: None
    shows the default one's."""
    budget = max_tokens or int(settings.LLM_CONTEXT_WINDOW * settings.CONTEXT_MEMORY_SHARE)
    pad = scratchpad_get(owner=owner, agent=agent or "")
    recall_query = query if query and settings.CONTEXT_IMPLICIT_RECALL and _is_first_message(owner, session_id) else ""
    searches: list[dict] = []
    found, hit = hot_cache_get(
        owner_id=owner.pk,
        parts={
            "agent": agent,
            "query": recall_query,
            "recall": settings.CONTEXT_IMPLICIT_RECALL,
            "pin": [settings.MEMORY_SCORING["PIN_MIN_STRENGTH"], settings.MEMORY_SCORING["PIN_MAX"]],
            "groups": sorted(str(g) for g in group_ids) if group_ids is not None else None,
        },
        compute=lambda: _context_memories(owner, agent, recall_query, group_ids, searches),
    )
    recall = {"searched": found["searched"], "search": searches[0] if searches else None}
    pinned, recalled = found["pinned"], found["recalled"]

    sections = [("# Memory tools", [TOOLS_DESCRIPTION])]
    pad_lines = []
    if pad.current_focus:
        pad_lines.append(f"Current focus: {pad.current_focus}")
    if pad.active_projects:
        pad_lines.append("Active projects: " + "; ".join(str(p) for p in pad.active_projects))
    for done in pad.recent_completions[-5:]:
        pad_lines.append(f"Done: {done.get('task', '')} ({done.get('completed_at', '')[:10]})")
    if pad_lines:
        sections.append(("# Scratchpad", pad_lines))

    # What each part costs against the budget, as the budget is counted (heading and lines apiece).
    spent = {
        "instructions" if h == "# Memory tools" else "scratchpad": estimate_tokens(h)
        + sum(estimate_tokens(line) for line in lines)
        for h, lines in sections
    }
    used = sum(spent.values())
    memories_out = []
    core_lines, recall_lines = [], []
    for kind, items in (("pinned", pinned), ("recalled", recalled)):
        for item in items:
            line = f"- {item['content']}"
            cost = estimate_tokens(line)
            if used + cost > budget:
                break
            used += cost
            spent[kind] = spent.get(kind, 0) + cost
            (core_lines if kind == "pinned" else recall_lines).append(line)
            memories_out.append({**item, "kind": kind})
    if core_lines:
        sections.append(("# What you know about the user", core_lines))
        spent["pinned"] += estimate_tokens(sections[-1][0])
    if recall_lines:
        sections.append(("# Possibly relevant memories", recall_lines))
        spent["recalled"] += estimate_tokens(sections[-1][0])
    prompt = "\n\n".join(h + "\n" + "\n".join(lines) for h, lines in sections)
    short_term = short_term_window(owner=owner, session_id=session_id) if session_id else None
    block = {
        "system_prompt": prompt,
        "memories": memories_out,
        # Whether the memories came from the hot cache (no search or pinned query ran).
        "cached": hit,
        "scratchpad": {
            "current_focus": pad.current_focus,
            "active_projects": pad.active_projects,
            "recent_completions": pad.recent_completions,
        },
        "tokens": estimate_tokens(prompt),
        "budget": budget,
        "short_term": short_term,
        "breakdown": {
            **{part: spent.get(part, 0) for part in ("instructions", "scratchpad", "pinned", "recalled")},
            "used": sum(spent.values()),
            "budget": budget,
            "short_term": short_term["tokens"] if short_term else 0,
            "short_term_budget": settings.SESSION_SHORT_TERM_TOKENS,
        },
    }
    return block, recall


def short_term_window(*, owner, session_id, max_tokens: int | None = None) -> dict:
    """Seed 003 §4: the session's rolling summary plus its most recent turns that fit the
    short-term budget (SESSION_SHORT_TERM_TOKENS), newest kept first."""
    budget = max_tokens or settings.SESSION_SHORT_TERM_TOKENS
    session = (
        ChatSession.objects.filter(owner=owner, pk=session_id).only("rolling_summary", "summarized_through").first()
    )
    if session is None:
        return {"summary": "", "messages": [], "tokens": 0}
    used = estimate_tokens(session.rolling_summary) if session.rolling_summary else 0
    recent = []
    turns = (
        ConversationTurn.objects.filter(owner=owner, session_id=session_id, sequence__gt=session.summarized_through)
        .order_by("-sequence")
        .values("sequence", "role", "speaker", "content", "token_count", "created_at")
    )
    for turn in turns.iterator(chunk_size=200):
        cost = turn.pop("token_count") or estimate_tokens(turn["content"])
        if used + cost > budget:
            break
        used += cost
        recent.append(turn)
    return {"summary": session.rolling_summary, "messages": recent[::-1], "tokens": used}
