"""An owner's agents as a first-class list. An agent is a namespace (the `agent` string on memories,
sessions, scratchpads and core memory), not a row of its own: the list gathers every namespace in
use with what it holds and when it was last active."""

from django.db.models import Count, Max

from dashboard.selectors import memory_agents
from memories.models import CoreMemory, Memory, Status
from sessions.models import ChatSession, Scratchpad

MAX_AGENTS = 200


def agent_names(*, owner) -> list[str]:
    """Every agent namespace of the owner, the default one ("") first."""
    names = set(memory_agents(owner=owner))
    names.update(ChatSession.objects.filter(owner=owner).values_list("agent", flat=True).distinct()[:MAX_AGENTS])
    names.update(Scratchpad.objects.filter(owner=owner).values_list("agent", flat=True)[:MAX_AGENTS])
    names.update(CoreMemory.objects.filter(owner=owner).values_list("agent", flat=True)[:MAX_AGENTS])
    names.add("")
    return sorted(names)[:MAX_AGENTS]


def agent_list(*, owner) -> list[dict]:
    """One row per agent: its memories by status, sessions, and last activity."""
    names = agent_names(owner=owner)
    memories: dict[str, dict] = {}
    for agent, status, n in (
        Memory.objects.filter(owner=owner, agent__in=names)
        .values_list("agent", "status")
        .annotate(n=Count("*"))
        .order_by()
    ):
        memories.setdefault(agent, {})[status] = n
    sessions = {
        row["agent"]: row
        for row in ChatSession.objects.filter(owner=owner, agent__in=names)
        .values("agent")
        .annotate(n=Count("*"), last=Max("last_activity_at"))
        .order_by()
    }
    updated = dict(
        Memory.objects.filter(owner=owner, agent__in=names)
        .values_list("agent")
        .annotate(last=Max("updated_at"))
        .order_by()
    )
    rows = []
    for name in names:
        by_status = memories.get(name, {})
        session = sessions.get(name, {})
        times = [t for t in (session.get("last"), updated.get(name)) if t]
        rows.append(
            {
                "agent": name,
                "memories": sum(n for status, n in by_status.items() if status != Status.FORGOTTEN),
                "active": by_status.get(Status.ACTIVE, 0),
                "pending_review": by_status.get(Status.PENDING_REVIEW, 0),
                "sessions": session.get("n", 0),
                "last_activity": max(times) if times else None,
            }
        )
    return rows
