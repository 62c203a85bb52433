"""The webhooks' part of /api/v1/, included by web/urls.py (integrations/urls.py is the
namespaced /integrations/ part: the Telegram webhook and link codes)."""

from django.urls import path

from integrations import api

urlpatterns = [
    path("webhooks/", api.WebhookListCreateApi.as_view(), name="webhook-list"),
    path("webhooks/<uuid:webhook_id>/", api.WebhookDetailApi.as_view(), name="webhook-detail"),
    path("webhooks/<uuid:webhook_id>/deliveries/", api.WebhookDeliveryListApi.as_view(), name="webhook-deliveries"),
]
