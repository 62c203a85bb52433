from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memories.models import Category, Memory, MemoryEvent, Retention, Status
from memories.selectors.retrieval import SCOPES
from memory_project.api.fields import (
    CleanCharField,
    ContentField,
    SafeDateTimeField,
    StrictJSONObjectField,
    StrictSerializer,
)


@extend_schema_field(
    {"oneOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "string", "enum": ["high", "medium", "low"]}]}
)
class ImportanceField(serializers.Field):
    """A number in [0, 1] or one of high / medium / low."""

    def to_internal_value(self, data):
        from memories.scoring import importance_value

        if isinstance(data, bool) or not isinstance(data, (int, float, str)):
            raise serializers.ValidationError("Must be a number between 0 and 1 or high / medium / low.")
        try:
            return importance_value(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value):
        return value


class MemoryCreateInputSerializer(StrictSerializer):
    content = ContentField()
    category = serializers.ChoiceField(choices=Category.choices, required=False, default=Category.FACT)
    importance = ImportanceField(required=False)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    retention = serializers.ChoiceField(choices=Retention.choices, required=False, default=None)
    subject = CleanCharField(max_length=200, required=False, allow_blank=True, default="")
    predicate = CleanCharField(max_length=200, required=False, allow_blank=True, default="")
    structured_data = StrictJSONObjectField(required=False, default=dict)
    confidence = serializers.FloatField(required=False, min_value=0, max_value=1, default=1.0)
    pinned = serializers.BooleanField(required=False, default=False)
    observed_at = SafeDateTimeField(required=False)
    expires_at = SafeDateTimeField(required=False)


class MemoryUpdateInputSerializer(StrictSerializer):
    content = ContentField(required=False)
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    importance = ImportanceField(required=False)
    strength = serializers.FloatField(required=False, min_value=0, max_value=1)
    confidence = serializers.FloatField(required=False, min_value=0, max_value=1)
    retention = serializers.ChoiceField(choices=Retention.choices, required=False)
    expires_at = SafeDateTimeField(required=False, allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    pinned = serializers.BooleanField(required=False)
    subject = CleanCharField(max_length=200, required=False, allow_blank=True)
    predicate = CleanCharField(max_length=200, required=False, allow_blank=True)
    structured_data = StrictJSONObjectField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Nothing to update: send at least one field.")
        return attrs


class SourceTurnSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="turn_id")
    session_id = serializers.UUIDField(source="turn.session_id")
    sequence = serializers.IntegerField(source="turn.sequence")
    content = serializers.CharField(source="turn.content")
    created_at = serializers.DateTimeField(source="turn.created_at")
    metadata = serializers.JSONField(source="turn.metadata")


class MemoryOutputSerializer(serializers.ModelSerializer):
    source_session_id = serializers.UUIDField(read_only=True)

    class Meta:
        model = Memory
        fields = [
            "id",
            "content",
            "category",
            "agent",
            "subject",
            "predicate",
            "structured_data",
            "importance",
            "strength",
            "confidence",
            "retention",
            "expires_at",
            "status",
            "pinned",
            "review_reason",
            "access_count",
            "last_accessed_at",
            "hit_count",
            "last_reinforced_at",
            "source",
            "source_session_id",
            "observed_at",
            "version",
            "created_at",
            "updated_at",
        ]


class MemoryDetailOutputSerializer(MemoryOutputSerializer):
    source_turns = SourceTurnSerializer(source="sources", many=True, read_only=True)

    class Meta(MemoryOutputSerializer.Meta):
        fields = MemoryOutputSerializer.Meta.fields + ["source_turns"]


class MemoryEventOutputSerializer(serializers.ModelSerializer):
    memory_id = serializers.UUIDField(read_only=True)
    session_id = serializers.UUIDField(read_only=True)

    class Meta:
        model = MemoryEvent
        fields = ["id", "memory_id", "event_type", "before", "after", "actor", "reason", "session_id", "created_at"]


class SearchInputSerializer(StrictSerializer):
    query = CleanCharField(max_length=4000)
    top_k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=settings.MAX_TOP_K)
    scope = serializers.ChoiceField(choices=SCOPES, required=False, default="memories")
    categories = serializers.ListField(
        child=serializers.ChoiceField(choices=Category.choices), required=False, allow_empty=True, max_length=20
    )
    include_archived = serializers.BooleanField(required=False, default=True)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    since = SafeDateTimeField(required=False, allow_null=True, default=None)
    until = SafeDateTimeField(required=False, allow_null=True, default=None)


class SourceRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    metadata = serializers.JSONField()
    session_id = serializers.UUIDField()


class SearchResultSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["memory", "turn"])
    id = serializers.UUIDField()
    content = serializers.CharField()
    score = serializers.FloatField()
    scores = serializers.DictField()
    created_at = serializers.DateTimeField()
    session_id = serializers.UUIDField(allow_null=True)
    metadata = serializers.JSONField()
    source_turns = SourceRefSerializer(many=True)


class SearchOutputSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True)
    took_ms = serializers.FloatField()


class ContextQuerySerializer(StrictSerializer):
    query = CleanCharField(max_length=4000, required=False, allow_blank=True, default="")
    # As in search: absent means every agent namespace of the owner, present (even empty) that one.
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    session_id = serializers.UUIDField(required=False, allow_null=True, default=None)
    max_tokens = serializers.IntegerField(required=False, min_value=100, max_value=200_000, default=None)
    owner = CleanCharField(max_length=150, required=False)
