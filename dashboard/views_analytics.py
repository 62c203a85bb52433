"""The request analytics page: API requests per day by kind, and latency per owner and agent."""

from django.conf import settings
from django.contrib.auth.decorators import login_required

from analytics.selectors import MAX_DAYS, analytics_totals, latency_by_owner_and_agent, requests_per_day
from analytics.services import request_stats_flush
from dashboard.layout import page_render
from dashboard.owners import owner_for

PERIODS = (7, 30, 90)


@login_required
def analytics(request):
    owner = owner_for(request)
    try:
        days = min(MAX_DAYS, max(1, int(request.GET.get("days", 30))))
    except ValueError:
        days = 30
    everyone = request.user.is_staff and request.GET.get("all") == "1"
    # This process's latest requests are added in first, so the page is current in a single-process
    # deployment; other processes add theirs every REQUEST_ANALYTICS_FLUSH_SECONDS.
    request_stats_flush(inline=True)
    scope = None if everyone else owner
    return page_render(
        request,
        "analytics",
        days=days,
        periods=PERIODS,
        everyone=everyone,
        totals=analytics_totals(owner=scope, days=days),
        latency=latency_by_owner_and_agent(owner=scope, days=days),
        charts={"per_day": requests_per_day(owner=scope, days=days)},
        flush_seconds=settings.REQUEST_ANALYTICS_FLUSH_SECONDS,
        enabled=settings.REQUEST_ANALYTICS,
    )
