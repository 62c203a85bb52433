"""Dashboard pages. Thin: each reads through selectors and writes through services, scoped to the
owner picked by dashboard.owners.owner_for (the user, or the owner a staff member switched to)."""

import functools
import json
import re
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accesslog.selectors import memory_access_summary
from accesslog.services import access_log_flush
from dashboard import graph as graph_data
from dashboard import selectors, services
from dashboard.layout import page_render
from dashboard.owners import owner_for, owner_query
from memories.models import Category, Memory, Retention, Source, Status
from memories.selectors.memories import memory_get, memory_get_detail, memory_history
from memories.services.actions import memory_revert
from memories.services.memories import SNAPSHOT_FIELDS
from memory_groups.selectors import group_paths
from memory_project.exceptions import ServiceError
from sessions.choices import Channel
from sessions.models import ChatSession, Episode
from sessions.selectors.sessions import episode_list, scratchpad_get, session_get, session_list, turn_list

SESSIONS_PER_PAGE = 50
TURNS_PER_PAGE = 200
MODERATION_PAGE = 100


def _actor(request) -> str:
    return f"dashboard:{request.user.get_username()}"


@login_required
def overview(request):
    owner = owner_for(request)
    metrics = selectors.overview_metrics(owner=owner)
    activity = selectors.memory_activity(owner=owner)
    return page_render(
        request,
        "overview",
        metrics=metrics,
        charts={"metrics": metrics, "activity": activity},
        categories=Category.values,
    )


@login_required
def memory_browser(request):
    owner = owner_for(request)
    try:
        query = selectors.browse_query_parse(request.GET)
    except ValueError as error:
        messages.error(request, str(error))
        query = selectors.BrowseQuery()
    first_page = selectors.memory_browse(owner=owner, query=query)
    return page_render(
        request,
        "memories",
        initial={"query": request.GET.dict(), "page": first_page},
        categories=Category.values,
        statuses=Status.values,
        sources=Source.values,
        agents=selectors.memory_agents(owner=owner),
        selected_agent=request.GET.get("agent", "*"),
        sorts=list(selectors.SORTS),
        groups=sorted(((str(pk), path) for pk, path in group_paths(owner=owner).items()), key=lambda g: g[1]),
    )


# The merge decision names other memories by id in its reasons ("superseded by <id>: …"); the page
# links each one by its text instead.
MEMORY_ID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")


def _reason_parts(reason: str, others: dict) -> list[dict]:
    parts, at = [], 0
    for found in MEMORY_ID.finditer(reason):
        parts.append({"text": reason[at : found.start()]})
        memory_id = uuid.UUID(found.group(0))
        parts.append({"id": memory_id, "memory": others.get(memory_id)})
        at = found.end()
    parts.append({"text": reason[at:]})
    return [p for p in parts if p.get("text") != ""]


def _history_rows(events, owner) -> list[dict]:
    named = {uuid.UUID(m) for event in events for m in MEMORY_ID.findall(event.reason or "")}
    others = {m.pk: m for m in Memory.objects.filter(owner=owner, pk__in=named).only("id", "content", "status")}
    rows = []
    for event in events:
        before = event.before if isinstance(event.before, dict) else {}
        after = event.after if isinstance(event.after, dict) else {}
        changes = [
            {"field": f, "before": before.get(f), "after": after.get(f)}
            for f in SNAPSHOT_FIELDS
            if (f in after or f in before) and before.get(f) != after.get(f) and (before or f in ("content", "status"))
        ]
        rows.append(
            {
                "event": event,
                "changes": changes,
                "revertible": bool(after or before),
                "reason": _reason_parts(event.reason or "", others),
            }
        )
    return rows


@login_required
def memory_detail(request, memory_id):
    owner = owner_for(request)
    memory = memory_get_detail(owner=owner, memory_id=memory_id)
    events = list(memory_history(memory=memory))
    sources = [link.turn for link in memory.sources.all()]
    access_log_flush(inline=True)  # what this process answered a moment ago counts too
    return page_render(
        request,
        "memory",
        template="dashboard/memory_detail.html",
        memory=memory,
        structured_json=json.dumps(memory.structured_data, indent=2, ensure_ascii=False)
        if memory.structured_data
        else "",
        history=_history_rows(events, owner),
        conflict=selectors.memory_conflicts(owner=owner, ids=[memory.pk]).get(str(memory.pk)),
        sources=sources,
        relations=selectors.memory_relations(memory=memory),
        entities=list(memory.entities.order_by("name")[:200]),
        series=selectors.memory_strength_series(memory=memory, events=events),
        access=memory_access_summary(owner=owner, memory_id=memory.pk),
        categories=Category.values,
        retentions=Retention.values,
    )


def _memory_form(handle):
    """A form posted from the memory page: `handle(request, memory)` makes the change, a ServiceError
    becomes the page's error message, and the browser goes back to the memory either way."""

    @login_required
    @require_POST
    @functools.wraps(handle)
    def view(request, memory_id):
        owner = owner_for(request)
        memory = memory_get(owner=owner, memory_id=memory_id)
        try:
            handle(request, memory)
        except ServiceError as error:
            messages.error(request, error.message)
        return redirect(reverse("dashboard:memory", args=[memory_id]) + owner_query(request, owner))

    return view


@_memory_form
def memory_detail_edit(request, memory):
    data = {
        k: request.POST[k] for k in ("content", "category", "retention", "subject", "predicate") if k in request.POST
    }
    if "importance" in request.POST:
        try:
            data["importance"] = float(request.POST["importance"])
        except ValueError:
            data["importance"] = None
    services.memory_edit(
        memory=memory,
        actor=_actor(request),
        changes=services.memory_edit_changes(data),
        moderator=request.user.is_staff,
    )
    messages.success(request, "Saved.")


@_memory_form
def memory_detail_action(request, memory):
    services.memory_action(
        memory=memory, action=request.POST.get("action", ""), actor=_actor(request), moderator=request.user.is_staff
    )


@_memory_form
def memory_detail_revert(request, memory):
    try:
        event_id = int(request.POST.get("event", ""))
    except ValueError:
        messages.error(request, "Pick a history entry to revert to.")
        return
    before = memory.version
    reverted = memory_revert(memory=memory, event_id=event_id, actor=_actor(request), moderator=request.user.is_staff)
    if reverted.version == before:
        messages.info(request, "The memory is already at that version.")
    else:
        messages.success(request, "Reverted; the revert is in the history.")


@login_required
def decay(request):
    owner = owner_for(request)
    curves = selectors.decay_curves()
    distribution = selectors.strength_distribution(owner=owner)
    return page_render(
        request,
        "decay",
        policy=curves["policy"],
        curves=curves["curves"],
        reinforced=curves["reinforced"],
        charts={"curves": curves, "distribution": distribution},
        distribution_total=sum(distribution["active"]) + sum(distribution["archived"]),
    )


@login_required
def graph(request):
    # A staff member's unknown ?owner= is a 404 before the page renders.
    owner_for(request)
    return page_render(
        request,
        "graph",
        categories=Category.values,
        max_nodes=graph_data.GRAPH_MAX_NODES,
        default_nodes=graph_data.GRAPH_DEFAULT_NODES,
    )


@login_required
def sessions(request):
    owner = owner_for(request)
    # Every memory the session produced (from its turns as it ran, at its end, or by compaction), not
    # ChatSession.memories_extracted, which counts only what the session-end extraction added.
    produced = (
        Memory.objects.filter(owner=owner, source_session=OuterRef("pk"))
        .order_by()
        .values("source_session")
        .annotate(n=Count("*"))
        .values("n")
    )
    listed = session_list(owner=owner).annotate(memory_count=Coalesce(Subquery(produced), 0))
    paginator = Paginator(listed, SESSIONS_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    pads = [scratchpad_get(owner=owner, agent="")]
    episodes = episode_list(owner=owner).select_related("session")[:10]
    return page_render(request, "sessions", sessions=page, scratchpads=pads, episodes=episodes)


@login_required
def session_detail(request, session_id):
    owner = owner_for(request)
    session = session_get(owner=owner, session_id=session_id)
    turns = Paginator(turn_list(session=session).defer("embedding", "search_vector"), TURNS_PER_PAGE)
    page = turns.get_page(request.GET.get("page"))
    episode = Episode.objects.filter(session=session, owner=owner).first()
    extracted = (
        Memory.objects.filter(owner=owner, source_session=session)
        .defer("embedding", "search_vector")
        .order_by("created_at")[:200]
    )
    return page_render(
        request,
        "sessions",
        template="dashboard/session_detail.html",
        chat_session=session,
        turns=page,
        episode=episode,
        extracted=extracted,
        scratchpad=scratchpad_get(owner=owner, agent=session.agent),
    )


@login_required
def moderation(request):
    owner = owner_for(request)
    queue = (
        Memory.objects.filter(owner=owner, status=Status.PENDING_REVIEW)
        .defer("embedding", "search_vector")
        .select_related("source_session")
        .order_by("-created_at")
    )
    return page_render(
        request,
        "moderation",
        queue=queue[:MODERATION_PAGE],
        categories=Category.values,
    )


@login_required
def chat(request):
    owner = owner_for(request)
    # Coming back to the page picks up the open web conversation instead of starting over.
    session = (
        ChatSession.objects.filter(owner=owner, channel=Channel.WEB, status=ChatSession.SessionStatus.OPEN)
        .order_by("-last_activity_at")
        .first()
    )
    turns = []
    if session is not None:
        recent = turn_list(session=session).filter(role__in=("user", "assistant")).order_by("-sequence")[:100]
        turns = [{"role": t.role, "content": t.content} for t in reversed(recent)]
    return page_render(
        request,
        "chat",
        chat_state={"session_id": str(session.pk) if session else None, "turns": turns},
    )


@login_required
def live(request):
    # A staff member's unknown ?owner= is a 404 before the page renders.
    owner_for(request)
    return page_render(request, "live")
