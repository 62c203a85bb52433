"""The core memory editor (templates/dashboard/core.html, frontend/src/pages/core.js) and the
context-window view (templates/dashboard/context.html, frontend/src/pages/context.js)."""

from django.conf import settings
from django.contrib.auth.decorators import login_required

from dashboard.agents import agent_names
from dashboard.core_memory import core_memory_get
from dashboard.layout import page_render
from dashboard.owners import owner_for
from sessions.models import ChatSession

RECENT_SESSIONS = 50

TABS = (
    {
        "key": "memory-md",
        "label": "MEMORY.md",
        "help": "Facts, preferences, projects and decisions, strongest first. Edit an entry's text, "
        "category or score; delete an entry to forget it; add one as '### fact' and a line of text.",
    },
    {
        "key": "learnings-md",
        "label": "learnings.md",
        "help": "Skills, lessons from errors and rules, in the MEMORY.md format.",
    },
    {
        "key": "user-md",
        "label": "USER.md",
        "help": "The user's profile: one line per active memory under its category. Change a line to edit "
        "that memory, move it under another heading to change its category, delete it to forget it, add "
        "one to remember it.",
    },
    {
        "key": "rolling-summary",
        "label": "Rolling summary",
        "help": "The running summary of past conversations (memory.json's rolling_summary).",
    },
    {
        "key": "scratchpad",
        "label": "Scratchpad",
        "help": "Working memory the context block starts with: what the agent is on now and its active projects.",
    },
)


def _agent_param(request) -> str:
    agent = request.GET.get("agent", "")
    # A bad value shows the default agent rather than failing the page.
    return agent if len(agent) <= 100 and "\x00" not in agent else ""


@login_required
def core(request):
    owner = owner_for(request)
    agent = _agent_param(request)
    agents = agent_names(owner=owner)
    if agent not in agents:
        agents = sorted([*agents, agent])
    initial = core_memory_get(owner=owner, agent=agent)
    return page_render(request, "core", agent=agent, agents=agents, tabs=TABS, initial=initial)


@login_required
def context_window(request):
    owner = owner_for(request)
    sessions = (
        ChatSession.objects.filter(owner=owner)
        .order_by("-last_activity_at")
        .values("id", "title", "agent", "channel", "last_activity_at", "turn_count")[:RECENT_SESSIONS]
    )
    return page_render(
        request,
        "context",
        agents=agent_names(owner=owner),
        sessions=list(sessions),
        default_budget=int(settings.LLM_CONTEXT_WINDOW * settings.CONTEXT_MEMORY_SHARE),
        implicit_recall=settings.CONTEXT_IMPLICIT_RECALL,
        pin_max=settings.MEMORY_SCORING["PIN_MAX"],
    )
