"""The frame around every dashboard page: the navigation (declared once, here), the owner switch and
the moderation badge, given to templates by the `chrome` context processor.

A new page adds one NavItem to NAV and renders with `page_render`; the 404 page gets the same frame
because the context processor runs for it too.
"""

from dataclasses import dataclass

from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from dashboard.feed import FEED_TYPES, LIVE_ONLY_TYPES
from dashboard.owners import owner_choices, owner_for, owner_query
from memories.models import Memory, Status


@dataclass(frozen=True)
class NavItem:
    key: str
    label: str
    url_name: str
    section: str
    # The `page` values for which this item is the current one (a detail page highlights its list).
    pages: tuple[str, ...] = ()
    badge: str = ""


NAV_SECTIONS = ("Memory", "Conversations", "Operate")
NAV = (
    NavItem("overview", "Overview", "dashboard:overview", "Memory"),
    NavItem("memories", "Memories", "dashboard:memories", "Memory", pages=("memory",)),
    NavItem("core", "Core memory", "dashboard:core", "Memory"),
    NavItem("moderation", "Moderation", "dashboard:moderation", "Memory", badge="pending"),
    NavItem("graph", "Graph", "dashboard:graph", "Memory"),
    NavItem("decay", "Decay", "dashboard:decay", "Memory"),
    NavItem("sessions", "Sessions", "dashboard:sessions", "Conversations"),
    NavItem("chat", "Chat", "dashboard:chat", "Conversations"),
    NavItem("context", "Context window", "dashboard:context", "Conversations"),
    NavItem("live", "Live", "dashboard:live", "Conversations"),
    NavItem("analytics", "Analytics", "dashboard:analytics", "Operate"),
    NavItem(
        "settings",
        "Settings",
        "dashboard:settings",
        "Operate",
        pages=("settings-keys", "settings-webhooks", "settings-agents"),
    ),
    NavItem("import", "Import", "dashboard:import", "Operate"),
    NavItem("eval", "Evaluate", "dashboard:eval", "Operate"),
)


def _owner(request):
    try:
        return owner_for(request)
    except Http404:
        # An unknown ?owner= on a page that is itself a 404 must not hide the frame.
        return request.user


def nav_sections(owner_qs: str) -> list[dict]:
    sections = []
    for name in NAV_SECTIONS:
        items = [
            {"item": item, "href": reverse(item.url_name) + owner_qs, "current": (item.key, *item.pages)}
            for item in NAV
            if item.section == name
        ]
        if items:
            sections.append({"name": name, "items": items})
    return sections


def chrome(request) -> dict:
    """Context processor: what base.html needs around a page for a logged-in user. The owner list
    and the pending count are lazy, so pages that do not draw the frame (admin) do not query them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or request.path.startswith(("/admin/", "/api/")):
        return {}
    owner = _owner(request)
    owner_qs = owner_query(request, owner)
    return {
        "owner": owner,
        "owner_qs": owner_qs,
        "viewing_other": owner.pk != user.pk,
        "owners": SimpleLazyObject(lambda: owner_choices(request)),
        "pending_count": SimpleLazyObject(
            lambda: Memory.objects.filter(owner=owner, status=Status.PENDING_REVIEW).count()
        ),
        "nav": nav_sections(owner_qs),
        "feed_types": [*FEED_TYPES, *LIVE_ONLY_TYPES],
    }


def page_render(request, page: str, *, template: str = "", **context):
    """A dashboard page: `page` names the current navigation item (NavItem.key or one of its pages),
    and its template, dashboard/<page>.html (dashes as underscores), unless `template` is given."""
    context["page"] = page
    return render(request, template or f"dashboard/{page.replace('-', '_')}.html", context)
