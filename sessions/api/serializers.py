from django.conf import settings
from django.utils import timezone
from rest_framework import serializers

from attachments.api import AttachmentInputSerializer
from memory_project.api.fields import (
    CleanCharField,
    ContentField,
    FieldsBuiltOnce,
    SafeDateTimeField,
    StrictJSONField,
    StrictJSONObjectField,
    StrictSerializer,
)
from sessions.choices import Channel, Role
from sessions.models import ChatSession, ConversationTurn, Episode, Scratchpad


class SessionInputSerializer(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    channel = serializers.ChoiceField(choices=Channel.choices, required=False, default=Channel.API)
    external_id = CleanCharField(max_length=200, required=False, allow_blank=True, default="")
    title = CleanCharField(max_length=200, required=False, allow_blank=True, default="")


class SessionListFilterSerializer(serializers.Serializer):
    """Query-string filters of the session list; a bad value is a 400, not an empty page or a 500."""

    status = serializers.ChoiceField(choices=ChatSession.SessionStatus.choices, required=False)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True)
    channel = serializers.ChoiceField(choices=Channel.choices, required=False)


class AgentFilterSerializer(serializers.Serializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True)


class SessionOutputSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    class Meta:
        model = ChatSession
        fields = [
            "id",
            "agent",
            "channel",
            "external_id",
            "title",
            "status",
            "started_at",
            "ended_at",
            "last_activity_at",
            "turn_count",
            "rolling_summary",
            "consolidated",
            "consolidated_at",
            "memories_extracted",
        ]


class TurnInputSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=Role.choices)
    content = ContentField()
    speaker = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    created_at = SafeDateTimeField(required=False)
    metadata = StrictJSONObjectField(required=False, default=dict)
    tool_name = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    tool_calls = StrictJSONField(required=False, allow_null=True, default=None)
    tool_error = CleanCharField(max_length=settings.MAX_CONTENT_CHARS, required=False, allow_blank=True, default="")
    attachments = AttachmentInputSerializer(
        many=True, required=False, max_length=settings.ATTACHMENT_MAX_PER_TURN, help_text="Files shared in this turn."
    )


class BulkTurnInputSerializer(StrictSerializer):
    turns = TurnInputSerializer(many=True, allow_empty=False, max_length=settings.MAX_BULK_TURNS)


# A row of a session's (a turn, an episode), shown with the id of its session. No docstring:
# drf-spectacular would publish it as the description of every subclass.
class SessionPartOutputSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    session_id = serializers.UUIDField(read_only=True)

    class Meta:
        fields = ["id", "session_id"]


class TurnOutputSerializer(SessionPartOutputSerializer):
    class Meta:
        model = ConversationTurn
        fields = [
            *SessionPartOutputSerializer.Meta.fields,
            "sequence",
            "role",
            "speaker",
            "content",
            "tool_name",
            "tool_calls",
            "tool_error",
            "token_count",
            "metadata",
            "created_at",
        ]


class EpisodeOutputSerializer(SessionPartOutputSerializer):
    class Meta:
        model = Episode
        fields = [
            *SessionPartOutputSerializer.Meta.fields,
            "agent",
            "summary",
            "goal",
            "outcome",
            "entities",
            "tools_used",
            "started_at",
            "ended_at",
            "created_at",
        ]


class ScratchpadSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scratchpad
        fields = ["agent", "current_focus", "active_projects", "recent_completions", "updated_at"]


class RecentCompletionSerializer(StrictSerializer):
    """One finished task: the context block prints its task and the date it was completed."""

    task = CleanCharField(max_length=500)
    completed_at = SafeDateTimeField(required=False)

    def validate(self, attrs):
        # Stored in a JSON column, read back as text by the context builder.
        when = attrs.get("completed_at") or timezone.now()
        return {"task": attrs["task"], "completed_at": when.isoformat()}


class ScratchpadInputSerializer(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    current_focus = CleanCharField(max_length=2000, required=False, allow_blank=True)
    active_projects = serializers.ListField(child=CleanCharField(max_length=500), required=False, max_length=50)
    recent_completions = serializers.ListField(child=RecentCompletionSerializer(), required=False, max_length=5)
