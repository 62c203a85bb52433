"""Strict serializer building blocks shared by every API: unknown fields, NUL bytes and unstorable JSON are refused."""

import copy
from datetime import UTC

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import Http404
from rest_framework import serializers

from memory_project.text import has_surrogate


def validated(serializer_class: type[serializers.Serializer], data) -> dict:
    """`data` as `serializer_class` validates it; invalid data raises the ValidationError every API answers 400 with."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class CleanCharField(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        if "\x00" in data:
            raise serializers.ValidationError("NUL bytes are not allowed in text.")
        if has_surrogate(data):
            # PostgreSQL text holds UTF-8 only; a lone surrogate (JSON "\ud800") cannot be stored.
            raise serializers.ValidationError("Surrogate characters are not allowed in text.")
        return super().to_internal_value(data)


class SafeDateTimeField(serializers.DateTimeField):
    """A timestamp PostgreSQL and Python can both hold: years 1 to 9999 once converted to UTC
    (`0001-01-01T00:00:00+14:00` is year 0 in UTC and overflowed into a 500)."""

    def to_internal_value(self, value):
        try:
            parsed = super().to_internal_value(value)
            in_utc = parsed.astimezone(UTC) if parsed.tzinfo else parsed
        except (OverflowError, ValueError):
            raise serializers.ValidationError("Timestamp out of range: years 1 to 9999 (UTC) only.") from None
        if not MIN_YEAR <= in_utc.year <= MAX_YEAR:
            raise serializers.ValidationError("Timestamp out of range: years 1 to 9999 (UTC) only.")
        return parsed


MIN_YEAR, MAX_YEAR = 1, 9999


class ContentField(CleanCharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", settings.MAX_CONTENT_CHARS)
        kwargs.setdefault("trim_whitespace", True)
        super().__init__(**kwargs)


# Client JSON (metadata, structured data, tool calls) is stored in jsonb and returned as given; deeper
# nesting than this is refused before any recursive code (validation, encoding) can overflow the stack.
MAX_JSON_DEPTH = 64


def json_problem(value) -> str | None:
    """Why PostgreSQL's jsonb (or this service) cannot store `value` as given, or None.

    Walks the value without recursion: NUL bytes and lone surrogates anywhere (keys included) are
    refused by jsonb, and nesting is capped at MAX_JSON_DEPTH.
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list) and depth > MAX_JSON_DEPTH:
            return f"Nested deeper than {MAX_JSON_DEPTH} levels."
        if isinstance(item, str):
            if "\x00" in item:
                return "NUL bytes are not allowed."
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return "Surrogate characters are not allowed."
        elif isinstance(item, dict):
            for key, inner in item.items():
                stack.append((key, depth))
                stack.append((inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
    return None


class StrictJSONField(serializers.JSONField):
    """Any JSON value that jsonb can hold exactly as given (see `json_problem`)."""

    def to_internal_value(self, data):
        problem = json_problem(data)
        if problem:
            raise serializers.ValidationError(problem)
        return super().to_internal_value(data)


class StrictJSONObjectField(StrictJSONField):
    """A JSON object (not a list or scalar) that jsonb can hold exactly as given."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        return super().to_internal_value(data)


def comma_list(value: str, *, known, noun: str) -> tuple[str, ...]:
    """`a,b` from a query string as the tuple of its items, empty ones dropped; an item not in `known` is refused."""
    items = tuple(item for item in value.split(",") if item)
    unknown = sorted(set(items) - set(known))
    if unknown:
        raise serializers.ValidationError(f"Unknown {noun}: {', '.join(unknown)}.")
    return items


# A serializer whose fields are built once per class; each instance binds copies of them. DRF builds
# every serializer instance's fields anew (a ModelSerializer's from the model's metadata, a plain
# one's by deep-copying the declared fields, which runs each field's __init__ again): 0.15 to 0.65 ms
# a serializer, on every request. Until bound, the fields of one class are the same for each
# instance, so the built set is kept and copied: a field's settings are only read, so a copy of its
# attributes will do; a nested serializer is deep-copied, as DRF does. (No docstring: drf-spectacular
# would publish it as the description of every serializer without one of its own.)
class FieldsBuiltOnce:
    def get_fields(self):
        cls = type(self)
        built = cls.__dict__.get("_fields_built")
        if built is None:
            built = super().get_fields()
            cls._fields_built = built
        return {name: _field_copy(field) for name, field in built.items()}


def _field_copy(field):
    if isinstance(field, serializers.BaseSerializer) or hasattr(field, "child_relation"):
        return copy.deepcopy(field)
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    if getattr(field, "child", None) is not None:
        # A list's or dict's child was bound to its field by the field's __init__: bound to the copy.
        clone.child = _field_copy(field.child)
        clone.child.parent = clone
    return clone


class StrictSerializer(FieldsBuiltOnce, serializers.Serializer):
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
        if "\x00" in username:
            # PostgreSQL text cannot hold NUL; no user can have such a name.
            raise Http404
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise Http404 from None
    return request.user
