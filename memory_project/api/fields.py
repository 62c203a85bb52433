"""Strict serializer building blocks shared by every API: unknown fields and NUL bytes are refused."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import Http404
from rest_framework import serializers


class CleanCharField(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        if "\x00" in data:
            raise serializers.ValidationError("NUL bytes are not allowed in text.")
        return super().to_internal_value(data)


class ContentField(CleanCharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", settings.MAX_CONTENT_CHARS)
        kwargs.setdefault("trim_whitespace", True)
        super().__init__(**kwargs)


class StrictJSONObjectField(serializers.JSONField):
    """A JSON object (not a list or scalar), with no NUL byte anywhere in it."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        if _has_nul(data):
            raise serializers.ValidationError("NUL bytes are not allowed.")
        return super().to_internal_value(data)


def _has_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, so a typo is a 400 instead of silently ignored."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def request_owner(request):
    """The owner a request acts for: the key's user, or ?owner=USERNAME for staff."""
    username = request.query_params.get("owner") if hasattr(request, "query_params") else None
    if username and request.user.is_staff:
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise Http404 from None
    return request.user
