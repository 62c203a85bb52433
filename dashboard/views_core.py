"""The core memory editor page (templates/dashboard/core.html, frontend/src/pages/core.js)."""

from django.contrib.auth.decorators import login_required

from dashboard.agents import agent_names
from dashboard.core_memory import core_memory_get
from dashboard.layout import page_render
from dashboard.owners import owner_for

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
    return page_render(
        request,
        "dashboard/core.html",
        "core",
        agent=agent,
        agents=agents,
        tabs=TABS,
        initial=core_memory_get(owner=owner, agent=agent),
    )
