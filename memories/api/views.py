from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.serializers import (
    ContextOutputSerializer,
    ContextQuerySerializer,
    MemoryCreateInputSerializer,
    MemoryDetailOutputSerializer,
    MemoryEventOutputSerializer,
    MemoryOutputSerializer,
    MemoryUpdateInputSerializer,
    MemoryWriteOutputSerializer,
    MetricsOutputSerializer,
    SearchInputSerializer,
    SearchOutputSerializer,
    ToolForgetOutputSerializer,
    ToolListOutputSerializer,
    ToolSearchOutputSerializer,
    ToolWriteOutputSerializer,
)
from memories.drafts import MemoryDraft
from memories.models import Category, Source, Status
from memories.selectors.memories import (
    memory_get,
    memory_get_detail,
    memory_group_filter_ids,
    memory_history,
    memory_list,
)
from memories.selectors.metrics import metrics_get
from memories.services.actions import memory_change, memory_delete_hard, memory_forget
from memories.services.decisions import memory_write
from memories.services.memories import memory_update
from memories.services.search import context_deliver, memory_search_run
from memories.services.tools import tool_execute
from memories.tools import TOOL_NAMES, TOOL_SCHEMAS
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, request_owner, validated
from memory_project.api.lists import OwnerListApi
from memory_project.exceptions import ServiceError
from sessions.selectors.sessions import session_get


def actor_of(request) -> str:
    key = request.auth
    if key is not None and hasattr(key, "prefix"):
        return f"api:{request.user.username}:{key.prefix}"
    return f"user:{request.user.username}"


class MemoryListFilterSerializer(serializers.Serializer):
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    status = serializers.ChoiceField(
        choices=[*Status.values, "all"],
        required=False,
        help_text="one status, or `all` for every status; without it, every status but forgotten",
    )
    source = serializers.ChoiceField(choices=Source.choices, required=False)
    agent = serializers.CharField(required=False, allow_blank=True, max_length=100)
    q = serializers.CharField(required=False, max_length=500)
    group = CleanCharField(
        required=False, max_length=100, help_text="a memory group's name or id (groups below it too)"
    )
    ordering = serializers.ChoiceField(
        choices=[
            "-updated_at",
            "updated_at",
            "-created_at",
            "created_at",
            "-strength",
            "strength",
            "-importance",
            "importance",
            "-observed_at",
            "observed_at",
        ],
        required=False,
        default="-updated_at",
    )


@extend_schema_view(get=extend_schema(parameters=[MemoryListFilterSerializer]))
class MemoryListCreateApi(OwnerListApi):
    output_serializer = MemoryOutputSerializer

    def rows(self, request):
        data = dict(validated(MemoryListFilterSerializer, request.query_params))
        owner = request_owner(request)
        return memory_list(
            owner=owner, group_ids=memory_group_filter_ids(owner=owner, ref=data.pop("group", None)), **data
        )

    @extend_schema(
        request=MemoryCreateInputSerializer,
        responses={201: MemoryWriteOutputSerializer, 200: MemoryWriteOutputSerializer},
        description="Stores a memory through the merge decision: a duplicate reinforces the existing memory "
        "(200 with `action: noop` and `absorbed_by` naming it; the text is kept in its history), a changed "
        "value or a knowledge update (quit, switched to, moved to, 不再, 换成 …) supersedes the old memories "
        "(201 with `action: delete` and `superseded_ids`).",
    )
    def post(self, request):
        data = dict(validated(MemoryCreateInputSerializer, request.data))
        expires_at = data.pop("expires_at", None)
        actor = actor_of(request)
        draft = MemoryDraft(**data, source=Source.USER_EXPLICIT)
        with transaction.atomic():
            result = memory_write(owner=request_owner(request), draft=draft, actor=actor)
            if expires_at is not None and result.action in ("add", "delete"):
                # The merge decision computes expiry from the retention; an explicit one wins.
                result.memory = memory_update(
                    memory=result.memory, actor=actor, reason="expires_at given at creation", expires_at=expires_at
                )
        body = {
            **MemoryOutputSerializer(result.memory).data,
            "action": result.action,
            "absorbed_by": str(result.absorbed_by.pk) if result.absorbed_by is not None else None,
            "superseded_ids": [str(m.pk) for m in result.superseded],
        }
        if result.previous is not None:
            body["previous_id"] = str(result.previous.pk)
        code = status.HTTP_201_CREATED if result.action in ("add", "delete") else status.HTTP_200_OK
        return Response(body, status=code)


class MemoryDeleteQuerySerializer(serializers.Serializer):
    purge = serializers.BooleanField(required=False, default=False)


class MemoryDetailApi(OwnerDetailApi):
    output_serializer = MemoryDetailOutputSerializer

    def row(self, request, memory_id):
        return memory_get_detail(owner=request_owner(request), memory_id=memory_id)

    @extend_schema(request=MemoryUpdateInputSerializer, responses=MemoryOutputSerializer)
    def patch(self, request, memory_id):
        memory = memory_get(owner=request_owner(request), memory_id=memory_id)
        data = validated(MemoryUpdateInputSerializer, request.data)
        memory = memory_change(memory=memory, actor=actor_of(request), changes=data, moderator=request.user.is_staff)
        return Response(MemoryOutputSerializer(memory).data)

    @extend_schema(
        parameters=[MemoryDeleteQuerySerializer],
        responses={204: None},
        description="Forgets the memory: it never comes back from search, its history is kept. With "
        "`purge=true` the memory is deleted for good instead: its row, its history, its links, its cached "
        "embedding and the quotes of it in digests and MEMORY.md.",
    )
    def delete(self, request, memory_id):
        memory = memory_get(owner=request_owner(request), memory_id=memory_id)
        query = validated(MemoryDeleteQuerySerializer, request.query_params)
        if query["purge"]:
            memory_delete_hard(memory=memory, actor=actor_of(request))
        else:
            memory_forget(memory=memory, actor=actor_of(request), reason="deleted through the API")
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryHistoryApi(OwnerListApi):
    output_serializer = MemoryEventOutputSerializer

    def rows(self, request, memory_id):
        return memory_history(memory=memory_get(owner=request_owner(request), memory_id=memory_id))


class SearchApi(APIView):
    @extend_schema(request=SearchInputSerializer, responses=SearchOutputSerializer)
    def post(self, request):
        data = dict(validated(SearchInputSerializer, request.data))
        owner = request_owner(request)
        group_ids = memory_group_filter_ids(owner=owner, ref=data.pop("group", None))
        found = memory_search_run(owner=owner, group_ids=group_ids, served_as="search", **data)
        return Response(found)


class ContextApi(APIView):
    @extend_schema(parameters=[ContextQuerySerializer], responses=ContextOutputSerializer)
    def get(self, request):
        data = dict(validated(ContextQuerySerializer, request.query_params.dict()))
        data.pop("owner", None)
        owner = request_owner(request)
        if data.get("session_id") is not None:
            # Another owner's session is a 404 here too, never silently treated as a fresh one.
            session_get(owner=owner, session_id=data["session_id"])
        group_ids = memory_group_filter_ids(owner=owner, ref=data.pop("group", None))
        block = context_deliver(owner=owner, group_ids=group_ids, served_as="context", **data)
        return Response(block)


class MetricsApi(APIView):
    @extend_schema(responses=MetricsOutputSerializer)
    def get(self, request):
        return Response(metrics_get(owner=request_owner(request)))


class ToolListApi(APIView):
    @extend_schema(responses=ToolListOutputSerializer)
    def get(self, request):
        return Response({"tools": TOOL_SCHEMAS})


class ToolQuerySerializer(serializers.Serializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True)


class ToolExecuteApi(APIView):
    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses=PolymorphicProxySerializer(
            component_name="ToolResult",
            serializers=[ToolSearchOutputSerializer, ToolWriteOutputSerializer, ToolForgetOutputSerializer],
            resource_type_field_name=None,
        ),
        parameters=[
            OpenApiParameter("name", str, OpenApiParameter.PATH, enum=list(TOOL_NAMES)),
            OpenApiParameter("agent", str),
        ],
        description="Runs one tool; the body is the tool's arguments object as in its schema.",
    )
    def post(self, request, name):
        if name not in TOOL_NAMES:
            raise ServiceError(
                f"Unknown tool {name!r}. Known tools: {', '.join(TOOL_NAMES)}.", code="not_found", status_code=404
            )
        if not isinstance(request.data, dict):
            raise ServiceError("The body must be a JSON object with the tool's arguments.")
        query = validated(ToolQuerySerializer, request.query_params)
        agent = query.get("agent", "")
        return Response(
            tool_execute(
                owner=request_owner(request), name=name, arguments=request.data, actor=actor_of(request), agent=agent
            )
        )
