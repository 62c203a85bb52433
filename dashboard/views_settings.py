"""Settings pages: API keys, webhooks with their delivery log, and the agents."""

import json

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse

from dashboard.agents import agent_list
from dashboard.layout import page_render
from dashboard.owners import owner_for, owner_query
from integrations.choices import WebhookEvent
from integrations.models import WebhookDelivery, WebhookSubscription
from memories.models import ApiKey

DELIVERIES_PER_PAGE = 50
SETTINGS_TABS = (
    ("settings-keys", "API keys", "dashboard:settings-keys"),
    ("settings-webhooks", "Webhooks", "dashboard:settings-webhooks"),
    ("settings-agents", "Agents", "dashboard:settings-agents"),
)


def _render(request, owner, page, **context):
    qs = owner_query(request, owner)
    tabs = [{"key": key, "label": label, "href": reverse(name) + qs} for key, label, name in SETTINGS_TABS]
    return page_render(request, page, settings_tabs=tabs, **context)


@login_required
def settings_home(request):
    return redirect(reverse("dashboard:settings-keys") + owner_query(request, owner_for(request)))


@login_required
def api_keys(request):
    owner = owner_for(request)
    keys = ApiKey.objects.filter(owner=owner).order_by("-created_at", "-id")
    return _render(request, owner, "settings-keys", keys=keys)


@login_required
def webhooks(request):
    owner = owner_for(request)
    subscriptions = WebhookSubscription.objects.filter(owner=owner).order_by("-created_at", "id")
    return _render(
        request,
        owner,
        "settings-webhooks",
        subscriptions=subscriptions,
        events=WebhookEvent.values,
    )


@login_required
def webhook_deliveries(request, webhook_id):
    owner = owner_for(request)
    subscription = get_object_or_404(WebhookSubscription, owner=owner, pk=webhook_id)
    deliveries = WebhookDelivery.objects.filter(subscription=subscription).order_by("-created_at", "id")
    page = Paginator(deliveries, DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
    for delivery in page:
        delivery.payload_text = json.dumps(delivery.payload, indent=2, ensure_ascii=False)
    return _render(
        request,
        owner,
        "settings-webhooks",
        template="dashboard/settings_webhook.html",
        subscription=subscription,
        deliveries=page,
    )


@login_required
def agents(request):
    owner = owner_for(request)
    return _render(request, owner, "settings-agents", agents=agent_list(owner=owner))
