"""REST API of memory groups: CRUD, assigning memories by hand, and the memories of a group."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.models import Category
from memory_groups.models import MemoryGroup
from memory_groups.selectors import group_get, group_list, group_paths
from memory_groups.services import (
    group_create,
    group_delete,
    group_members_assign,
    group_members_unassign,
    group_update,
)
from memory_project.api.create import OwnerCreateApi
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, StrictSerializer, request_owner, validated
from memory_project.api.lists import OwnerListApi
from memory_project.api.schema import ErrorSerializer


class GroupRulesSerializer(StrictSerializer):
    categories = serializers.ListField(
        child=serializers.ChoiceField(choices=Category.choices), required=False, max_length=20
    )
    agents = serializers.ListField(
        child=CleanCharField(max_length=100, allow_blank=True), required=False, max_length=50
    )
    entities = serializers.ListField(child=CleanCharField(max_length=200), required=False, max_length=50)


class GroupInputSerializer(StrictSerializer):
    name = CleanCharField(max_length=100)
    parent = serializers.UUIDField(required=False, allow_null=True, default=None)
    description = CleanCharField(max_length=2000, required=False, allow_blank=True, default="")
    rules = GroupRulesSerializer(required=False, default=dict)


class GroupPatchSerializer(StrictSerializer):
    name = CleanCharField(max_length=100, required=False)
    parent = serializers.UUIDField(required=False, allow_null=True)
    description = CleanCharField(max_length=2000, required=False, allow_blank=True)
    rules = GroupRulesSerializer(required=False)


class GroupOutputSerializer(serializers.ModelSerializer):
    parent_id = serializers.UUIDField(read_only=True, allow_null=True)
    path = serializers.SerializerMethodField()
    rules = serializers.SerializerMethodField()
    memory_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = MemoryGroup
        fields = ["id", "name", "parent_id", "path", "description", "rules", "memory_count", "created_at", "updated_at"]

    def get_path(self, group) -> str:
        return self.context.get("paths", {}).get(group.pk, group.name)

    def get_rules(self, group) -> GroupRulesSerializer:
        return {"categories": group.rule_categories, "agents": group.rule_agents, "entities": group.rule_entities}


class MemberIdsSerializer(StrictSerializer):
    memory_ids = serializers.ListField(child=serializers.UUIDField(), allow_empty=False, max_length=1000)


class UnassignOutputSerializer(serializers.Serializer):
    removed = serializers.IntegerField()
    kept_by_rule = serializers.ListField(child=serializers.UUIDField())


def _context(request) -> dict:
    # Each group is shown with its path: the owner's tree read once for all the groups answered.
    return {"paths": group_paths(owner=request_owner(request))}


def _out(request, group) -> dict:
    group = group_get(owner=request_owner(request), group_id=group.pk)
    return GroupOutputSerializer(group, context=_context(request)).data


class _GroupOutput:
    output_serializer = GroupOutputSerializer

    def output_context(self, request) -> dict:
        return _context(request)


@extend_schema_view(post=extend_schema(responses={201: GroupOutputSerializer, 409: ErrorSerializer}))
class GroupListCreateApi(_GroupOutput, OwnerCreateApi, OwnerListApi):
    input_serializer = GroupInputSerializer

    def rows(self, request):
        return group_list(owner=request_owner(request))

    def create(self, request, *, name, parent, description, rules):
        owner = request_owner(request)
        group = group_create(owner=owner, name=name, parent_id=parent, description=description, rules=rules)
        # Read again for its memory count: its rules may have filled it already.
        return group_get(owner=owner, group_id=group.pk)


class GroupDetailApi(_GroupOutput, OwnerDetailApi):
    def row(self, request, group_id):
        return group_get(owner=request_owner(request), group_id=group_id)

    @extend_schema(request=GroupPatchSerializer, responses={200: GroupOutputSerializer, 409: ErrorSerializer})
    def patch(self, request, group_id):
        group = group_get(owner=request_owner(request), group_id=group_id)
        data = dict(validated(GroupPatchSerializer, request.data))
        if "parent" in data:
            data["parent_id"] = data.pop("parent")
        group = group_update(group=group, **data)
        return Response(_out(request, group))

    @extend_schema(responses={204: None})
    def delete(self, request, group_id):
        group_delete(group=group_get(owner=request_owner(request), group_id=group_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupAssignApi(APIView):
    @extend_schema(request=MemberIdsSerializer, responses=GroupOutputSerializer)
    def post(self, request, group_id):
        group = group_get(owner=request_owner(request), group_id=group_id)
        data = validated(MemberIdsSerializer, request.data)
        group_members_assign(group=group, memory_ids=data["memory_ids"])
        return Response(_out(request, group))


class GroupUnassignApi(APIView):
    @extend_schema(request=MemberIdsSerializer, responses=UnassignOutputSerializer)
    def post(self, request, group_id):
        group = group_get(owner=request_owner(request), group_id=group_id)
        data = validated(MemberIdsSerializer, request.data)
        return Response(group_members_unassign(group=group, memory_ids=data["memory_ids"]))
