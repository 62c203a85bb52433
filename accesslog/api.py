"""GET /api/v1/access-log/: the owner's logged search and context calls, with their memories' ranks."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers

from accesslog.models import QueryKind, QueryLog
from accesslog.selectors import query_log_list
from accesslog.services import access_log_flush
from memory_project.api.fields import SafeDateTimeField, request_owner, validated
from memory_project.api.lists import OwnerListApi


class AccessLogFilterSerializer(serializers.Serializer):
    memory_id = serializers.UUIDField(required=False, help_text="Only the calls that returned this memory.")
    kind = serializers.ChoiceField(choices=QueryKind.choices, required=False)
    since = SafeDateTimeField(required=False)
    until = SafeDateTimeField(required=False)


class QueryLogHitOutputSerializer(serializers.Serializer):
    memory_id = serializers.UUIDField()
    rank = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True)


class QueryLogOutputSerializer(serializers.ModelSerializer):
    memories = QueryLogHitOutputSerializer(source="hits", many=True)

    class Meta:
        model = QueryLog
        fields = ["id", "kind", "agent", "query", "results", "at", "memories"]


@extend_schema_view(
    get=extend_schema(
        parameters=[AccessLogFilterSerializer],
        description="Which search, context or tool call returned which of the owner's memories, at which "
        "rank (1 = first), newest first; kept ACCESS_LOG_RETENTION_DAYS days. Calls are written in batches "
        "a few seconds after they are answered.",
    )
)
class AccessLogApi(OwnerListApi):
    output_serializer = QueryLogOutputSerializer

    def rows(self, request):
        filters = validated(AccessLogFilterSerializer, request.query_params)
        # What this process answered a moment ago is written now rather than at the next batch.
        access_log_flush(inline=True)
        return query_log_list(owner=request_owner(request), **filters)
