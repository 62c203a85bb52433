from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memories.models import Category, Memory, MemoryEvent, Retention, Status
from memories.scoring import importance_value
from memories.selectors.retrieval import SCOPES
from memories.services.memories import SNAPSHOT_FIELDS
from memory_project.api.fields import (
    CleanCharField,
    ContentField,
    FieldsBuiltOnce,
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


class MemoryOutputSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    source_session_id = serializers.UUIDField(read_only=True, allow_null=True)

    class Meta:
        model = Memory
        fields = [
            "id",
            *SNAPSHOT_FIELDS,
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


class MemoryWriteOutputSerializer(MemoryOutputSerializer):
    """POST /memories/: the memory the merge decision settled on, and what it did with the text."""

    action = serializers.ChoiceField(choices=["add", "update", "delete", "noop"], read_only=True)
    # Present only when a memory was superseded: not read_only, which the schema would mark required.
    previous_id = serializers.UUIDField(required=False, help_text="The memory this write superseded (delete).")
    absorbed_by = serializers.UUIDField(
        read_only=True, allow_null=True, help_text="The existing memory that absorbed the text (noop, update)."
    )
    superseded_ids = serializers.ListField(
        child=serializers.UUIDField(), read_only=True, help_text="Memories this write replaced (delete)."
    )

    class Meta(MemoryOutputSerializer.Meta):
        fields = MemoryOutputSerializer.Meta.fields + ["action", "previous_id", "absorbed_by", "superseded_ids"]


class MemoryDetailOutputSerializer(MemoryOutputSerializer):
    source_turns = SourceTurnSerializer(source="sources", many=True, read_only=True)

    class Meta(MemoryOutputSerializer.Meta):
        fields = MemoryOutputSerializer.Meta.fields + ["source_turns"]


class MemoryEventOutputSerializer(serializers.ModelSerializer):
    memory_id = serializers.UUIDField(read_only=True)
    session_id = serializers.UUIDField(read_only=True, allow_null=True)

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
    group = CleanCharField(
        max_length=100,
        required=False,
        help_text="A memory group's name or id: its memories and those of the groups below it.",
    )


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
    group = CleanCharField(max_length=100, required=False, help_text="Only memories of this memory group (name or id).")


# What GET /api/v1/context/ returns (memories.selectors.context.context_build), field for field.
class ContextMemorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    category = serializers.ChoiceField(choices=Category.choices)
    kind = serializers.ChoiceField(choices=["pinned", "recalled"])
    strength = serializers.FloatField(required=False, help_text="pinned memories")
    importance = serializers.FloatField(required=False, help_text="pinned memories")
    score = serializers.FloatField(required=False, help_text="recalled memories: the search score")


class ContextScratchpadSerializer(serializers.Serializer):
    current_focus = serializers.CharField(allow_blank=True)
    active_projects = serializers.ListField(child=serializers.JSONField())
    recent_completions = serializers.ListField(child=serializers.JSONField())


class ShortTermMessageSerializer(serializers.Serializer):
    sequence = serializers.IntegerField()
    role = serializers.CharField()
    speaker = serializers.CharField(allow_blank=True)
    content = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class ShortTermSerializer(serializers.Serializer):
    summary = serializers.CharField(allow_blank=True)
    messages = ShortTermMessageSerializer(many=True)
    tokens = serializers.IntegerField()


def _counts(name: str, *fields: str) -> type[serializers.Serializer]:
    """A serializer of whole numbers only; the schema names it after `name`."""
    return type(name, (serializers.Serializer,), {f: serializers.IntegerField() for f in fields})


ContextBreakdownSerializer = _counts(
    "ContextBreakdownSerializer",
    *("instructions", "scratchpad", "pinned", "recalled", "used", "budget", "short_term", "short_term_budget"),
)


class ContextOutputSerializer(serializers.Serializer):
    system_prompt = serializers.CharField()
    memories = ContextMemorySerializer(many=True)
    cached = serializers.BooleanField(help_text="the memories came from the hot cache (no search ran)")
    scratchpad = ContextScratchpadSerializer()
    tokens = serializers.IntegerField()
    budget = serializers.IntegerField()
    short_term = ShortTermSerializer(allow_null=True, help_text="with session_id only")
    breakdown = ContextBreakdownSerializer()


# GET /api/v1/metrics/ (memories.selectors.metrics.metrics_get).
class MemoryStatsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    by_category = serializers.DictField(child=serializers.IntegerField())
    avg_importance = serializers.FloatField()
    avg_strength = serializers.FloatField()


SessionStatsSerializer = _counts("SessionStatsSerializer", "total", "open")
ExtractionQueueSerializer = _counts("ExtractionQueueSerializer", "pending", "running", "failed", "done")


class LastLifecycleRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    started_at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField(allow_null=True)
    counts = serializers.DictField()


class PercentilesSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    p50 = serializers.FloatField(allow_null=True)
    p95 = serializers.FloatField(allow_null=True)
    p99 = serializers.FloatField(allow_null=True)


class EmbeddingCacheStatsSerializer(serializers.Serializer):
    hits = serializers.IntegerField()
    misses = serializers.IntegerField()
    hit_rate = serializers.FloatField(allow_null=True)


class ContextCacheStatsSerializer(EmbeddingCacheStatsSerializer):
    store = serializers.ChoiceField(choices=["redis", "process"])


class MetricsOutputSerializer(serializers.Serializer):
    memories = MemoryStatsSerializer()
    sessions = SessionStatsSerializer()
    turns = serializers.IntegerField()
    turns_awaiting_vector = serializers.IntegerField()
    extraction_queue = ExtractionQueueSerializer()
    last_lifecycle_run = LastLifecycleRunSerializer(allow_null=True)
    retrieval_latency_ms = PercentilesSerializer()
    embedding_cache = EmbeddingCacheStatsSerializer()
    context_cache = ContextCacheStatsSerializer(help_text="GET /context/ lookups served from the hot cache")


# GET /api/v1/tools/ and POST /api/v1/tools/{name}/ (memories.tools, memories.services.tools).
class ToolFunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.JSONField(help_text="the arguments' JSON Schema")


class ToolSchemaSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = ToolFunctionSerializer()


class ToolListOutputSerializer(serializers.Serializer):
    tools = ToolSchemaSerializer(many=True)


# A search result as the search tool answers it (memories.services.tools._brief): without the
# per-signal scores, and session_id and source_turns only where the result has them.
class ToolSearchResultSerializer(SearchResultSerializer):
    scores = None
    session_id = serializers.UUIDField(allow_null=True, required=False)
    source_turns = SourceRefSerializer(many=True, required=False)


class ToolSearchOutputSerializer(serializers.Serializer):
    results = ToolSearchResultSerializer(many=True)


class ToolMemoryBriefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)


class ToolWriteOutputSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["add", "update", "delete", "noop"])
    memory = ToolMemoryBriefSerializer()
    absorbed_by = serializers.UUIDField(allow_null=True, help_text="The existing memory that absorbed the text.")
    superseded_ids = serializers.ListField(child=serializers.UUIDField(), help_text="Memories this write replaced.")


class ToolForgottenSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()


class ToolForgetOutputSerializer(serializers.Serializer):
    forgotten = ToolForgottenSerializer(allow_null=True)
