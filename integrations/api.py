"""REST API for webhook subscriptions and their delivery log, under /api/v1/webhooks/ (owner-scoped)."""

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.response import Response

from integrations.choices import WebhookEvent
from integrations.models import WebhookDelivery, WebhookSubscription
from integrations.services.webhook_targets import target_problem, url_problem
from integrations.services.webhooks import webhook_subscription_create, webhook_subscription_delete
from memory_project.api.create import OwnerCreateApi
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, StrictSerializer, request_owner
from memory_project.api.lists import OwnerListApi


class WebhookUrlField(serializers.URLField):
    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            raise serializers.ValidationError("NUL bytes are not allowed in text.")
        value = super().to_internal_value(data)
        if not value.lower().startswith(("http://", "https://")):
            raise serializers.ValidationError("Use an http:// or https:// URL.")
        problem = url_problem(value)
        if problem:
            raise serializers.ValidationError(f"Webhooks cannot be sent to this URL: {problem}.")
        problem = target_problem(value)
        if problem:
            raise serializers.ValidationError(
                f"Webhooks are sent to public addresses only: {problem} (an operator can allow a network "
                "with WEBHOOK_ALLOWED_NETWORKS)."
            )
        return value


class WebhookCreateInputSerializer(StrictSerializer):
    url = WebhookUrlField(max_length=1000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices),
        allow_empty=False,
        max_length=len(WebhookEvent.values),
        required=False,
        help_text="Defaults to every event.",
    )
    secret = CleanCharField(
        min_length=16,
        max_length=200,
        required=False,
        help_text="The HMAC-SHA256 key for X-Memory-Signature; generated when omitted.",
    )
    description = CleanCharField(max_length=200, required=False, allow_blank=True, default="")


class WebhookOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookSubscription
        fields = ["id", "url", "events", "description", "active", "created_at"]


class WebhookCreatedOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookSubscription
        fields = ["id", "url", "events", "description", "active", "created_at", "secret"]


class WebhookDeliveryOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event",
            "status",
            "attempts",
            "last_status_code",
            "last_error",
            "attempt_log",
            "payload",
            "created_at",
            "next_attempt_at",
            "delivered_at",
        ]


def _subscription(request, webhook_id) -> WebhookSubscription:
    found = WebhookSubscription.objects.filter(owner=request_owner(request), pk=webhook_id).first()
    if found is None:
        raise Http404
    return found


@extend_schema_view(post=extend_schema(description="The response is the only time the secret is shown."))
class WebhookListCreateApi(OwnerCreateApi, OwnerListApi):
    input_serializer = WebhookCreateInputSerializer
    output_serializer = WebhookOutputSerializer
    created_serializer = WebhookCreatedOutputSerializer

    def rows(self, request):
        return WebhookSubscription.objects.filter(owner=request_owner(request)).order_by("-created_at", "id")

    def create(self, request, **data):
        return webhook_subscription_create(owner=request_owner(request), **data)


class WebhookDetailApi(OwnerDetailApi):
    output_serializer = WebhookOutputSerializer

    def row(self, request, webhook_id):
        return _subscription(request, webhook_id)

    @extend_schema(responses={204: None}, description="Deletes the subscription and its delivery log.")
    def delete(self, request, webhook_id):
        webhook_subscription_delete(subscription=_subscription(request, webhook_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveryListApi(OwnerListApi):
    output_serializer = WebhookDeliveryOutputSerializer

    def rows(self, request, webhook_id):
        subscription = _subscription(request, webhook_id)
        return WebhookDelivery.objects.filter(subscription=subscription).order_by("-created_at", "id")
