"""Settings endpoints: the owner's API keys (create, revoke) and webhooks (create, delete)."""

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.response import Response

from dashboard.endpoints.base import DashboardApi
from integrations.api import WebhookCreatedOutputSerializer, WebhookCreateInputSerializer
from integrations.models import WebhookSubscription
from integrations.services.webhooks import webhook_subscription_create, webhook_subscription_delete
from memories.models import ApiKey
from memories.services.api_keys import api_key_create, api_key_revoke
from memory_project.api.fields import CleanCharField, StrictSerializer


class ApiKeyOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "created_at", "last_used_at", "revoked_at"]


class ApiKeyCreateSerializer(StrictSerializer):
    name = CleanCharField(max_length=100, required=False, allow_blank=True, default="")


class ApiKeyListApi(DashboardApi):
    def get(self, request):
        keys = ApiKey.objects.filter(owner=self.owner()).order_by("-created_at", "-id")
        return Response({"keys": ApiKeyOutputSerializer(keys, many=True).data})

    def post(self, request):
        data = self.body(ApiKeyCreateSerializer)
        key, raw = api_key_create(username=self.owner().get_username(), name=data["name"])
        # The only time the key itself is shown: only its digest is stored.
        return Response({"key": ApiKeyOutputSerializer(key).data, "raw": raw}, status=status.HTTP_201_CREATED)


class ApiKeyRevokeApi(DashboardApi):
    def post(self, request, key_id):
        key = get_object_or_404(ApiKey, owner=self.owner(), pk=key_id)
        return Response({"key": ApiKeyOutputSerializer(api_key_revoke(key=key)).data})


class WebhookListApi(DashboardApi):
    def post(self, request):
        data = self.body(WebhookCreateInputSerializer)
        subscription = webhook_subscription_create(owner=self.owner(), **data)
        return Response(WebhookCreatedOutputSerializer(subscription).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(DashboardApi):
    def delete(self, request, webhook_id):
        subscription = get_object_or_404(WebhookSubscription, owner=self.owner(), pk=webhook_id)
        webhook_subscription_delete(subscription=subscription)
        return Response(status=status.HTTP_204_NO_CONTENT)
