"""Import / export of the seed formats, and MEMORY.md / learnings.md as editable views."""

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.views import actor_of
from memories.formats.memory_json import FormatError
from memories.services.memory_md_edit import memory_md_apply, memory_md_get
from memories.services.transfer import (
    EXPORT_CONTENT_TYPES,
    EXPORT_FILE_NAMES,
    EXPORT_FORMATS,
    FORMATS,
    memory_export,
    memory_import_text,
)
from memory_project.api.fields import CleanCharField, StrictSerializer, request_owner
from memory_project.exceptions import ServiceError

DEFAULT_MAX_IMPORT_BYTES = 20 * 1024 * 1024


def max_import_bytes() -> int:
    return int(getattr(settings, "MEMORY_IMPORT_MAX_BYTES", DEFAULT_MAX_IMPORT_BYTES))


class FirstRendererNegotiation(DefaultContentNegotiation):
    """`?format=` names a file format here, not one of DRF's renderers (its URL_FORMAT_OVERRIDE)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class AgentQuerySerializer(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    owner = CleanCharField(max_length=150, required=False)


class ImportJsonSerializer(StrictSerializer):
    content = CleanCharField(trim_whitespace=False, allow_blank=False)
    format = serializers.ChoiceField(choices=FORMATS, required=False, allow_null=True, default=None)
    name = CleanCharField(max_length=255, required=False, allow_blank=True, default="")
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)


class ImportUploadSerializer(StrictSerializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=FORMATS, required=False, allow_null=True, default=None)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)


_REPORT = inline_serializer(
    "ImportReport",
    {
        "format": serializers.CharField(),
        "source": serializers.CharField(),
        "entries": serializers.IntegerField(),
        "added": serializers.IntegerField(),
        "merged": serializers.IntegerField(),
        "reinforced": serializers.IntegerField(),
        "superseded": serializers.IntegerField(),
        "skipped": serializers.IntegerField(),
        "digests": serializers.IntegerField(),
        "rolling_summary": serializers.BooleanField(),
        "warnings": serializers.ListField(child=serializers.DictField()),
        "memory_ids": serializers.ListField(child=serializers.CharField()),
        "files": serializers.ListField(child=serializers.DictField()),
        "migrated": serializers.ListField(child=serializers.CharField()),
        "error": serializers.CharField(),
    },
)


class ImportApi(APIView):
    parser_classes = [JSONParser, MultiPartParser]

    @extend_schema(
        request={
            "application/json": ImportJsonSerializer,
            "multipart/form-data": ImportUploadSerializer,
        },
        responses={200: _REPORT},
        description="Imports a MEMORY.md / learnings.md (seed 002), memory.json or a daily log (seed 004), a "
        "USER.md or our JSONL export, as a multipart upload (`file`, optional `format`, `agent`) or as JSON "
        "`{content, format?, name?, agent?}`. The format is detected from the file name or content when not "
        f"given ({', '.join(FORMATS)}). Every memory goes through the merge decision (duplicates reinforce, "
        "changed values supersede); broken entries are skipped and listed in `warnings` with their line.",
    )
    def post(self, request):
        owner = request_owner(request)
        if request.content_type.startswith("multipart/"):
            data = {key: request.data.get(key) for key in request.data}
            serializer = ImportUploadSerializer(data=data)
            serializer.is_valid(raise_exception=True)
            upload = serializer.validated_data["file"]
            if upload.size > max_import_bytes():
                raise ServiceError(
                    f"The file is larger than {max_import_bytes()} bytes.", code="too_large", status_code=413
                )
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ServiceError("The file is not UTF-8 text.") from None
            name = upload.name or ""
        else:
            serializer = ImportJsonSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            text = serializer.validated_data["content"]
            if len(text.encode()) > max_import_bytes():
                raise ServiceError(
                    f"The content is larger than {max_import_bytes()} bytes.", code="too_large", status_code=413
                )
            name = serializer.validated_data["name"]
        args = serializer.validated_data
        try:
            report = memory_import_text(
                owner=owner, text=text, fmt=args["format"], name=name, actor=actor_of(request), agent=args["agent"]
            )
        except FormatError as exc:
            raise ServiceError(f"Cannot import {name or 'this content'}: {exc}", code="invalid_format") from None
        return Response(report.to_dict())


class ExportQuerySerializer(StrictSerializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS, required=False, default="jsonl")
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    owner = CleanCharField(max_length=150, required=False)


class ExportApi(APIView):
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=list(EXPORT_FORMATS), description="default jsonl"),
            OpenApiParameter("agent", str, description="one agent namespace; all of them when absent"),
        ],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="the file")},
        description="Downloads everything of the owner in one format (as an attachment): MEMORY.md / "
        "learnings.md (seed 002), memory.json (seed 004, with `x_*` keys keeping our exact category, "
        "status and strength), USER.md, or our full-fidelity JSONL.",
    )
    def get(self, request):
        query = ExportQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["format"]
        text = memory_export(owner=request_owner(request), fmt=fmt, agent=query.validated_data["agent"])
        response = HttpResponse(text, content_type=EXPORT_CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{EXPORT_FILE_NAMES[fmt]}"'
        return response


class MemoryMdPutSerializer(StrictSerializer):
    content = CleanCharField(trim_whitespace=False, allow_blank=True)
    version = CleanCharField(max_length=100)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")


_VIEW = inline_serializer(
    "MemoryMdView",
    {
        "view": serializers.CharField(),
        "file": serializers.CharField(),
        "agent": serializers.CharField(),
        "content": serializers.CharField(),
        "version": serializers.CharField(),
        "entries": serializers.IntegerField(),
        "hidden": serializers.IntegerField(),
    },
)
_APPLIED = inline_serializer(
    "MemoryMdApplied",
    {
        "view": serializers.CharField(),
        "file": serializers.CharField(),
        "agent": serializers.CharField(),
        "content": serializers.CharField(),
        "version": serializers.CharField(),
        "changes": serializers.DictField(),
        "warnings": serializers.ListField(child=serializers.DictField()),
    },
)


class _MarkdownViewApi(APIView):
    view = "memory-md"

    def get(self, request):
        query = AgentQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        owner = request_owner(request)
        return Response(memory_md_get(owner=owner, agent=query.validated_data["agent"], view=self.view))

    def put(self, request):
        serializer = MemoryMdPutSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if len(data["content"].encode()) > max_import_bytes():
            raise ServiceError("The content is too large.", code="too_large", status_code=413)
        result = memory_md_apply(
            owner=request_owner(request),
            content=data["content"],
            version=data["version"],
            # The person who edited the file, also when staff edit someone else's (?owner=).
            actor=f"user:{request.user.get_username()}",
            agent=data["agent"],
            view=self.view,
        )
        return Response(result)


_EDIT_DESCRIPTION = (
    "The owner's {file} as an editable view. GET returns `{{content, version}}`; PUT `{{content, version}}` "
    "applies the edit: entries whose content, category, score or section changed are updated, entries "
    "removed are forgotten, entries with an unknown or no id are written through the merge decision; each "
    "change is recorded in the memory's history with the editor (`user:<username>`) as actor. A PUT made "
    "from an older `version` is refused with 409 (`stale_version`) and nothing is applied; so is one with "
    "an entry that cannot be parsed (400 `unreadable_entries`)."
)


class MemoryMdApi(_MarkdownViewApi):
    view = "memory-md"

    @extend_schema(
        parameters=[AgentQuerySerializer], responses=_VIEW, description=_EDIT_DESCRIPTION.format(file="MEMORY.md")
    )
    def get(self, request):
        return super().get(request)

    @extend_schema(request=MemoryMdPutSerializer, responses=_APPLIED)
    def put(self, request):
        return super().put(request)


class LearningsMdApi(_MarkdownViewApi):
    view = "learnings-md"

    @extend_schema(
        parameters=[AgentQuerySerializer],
        responses=_VIEW,
        description=_EDIT_DESCRIPTION.format(file="learnings.md (skills, errors, rules)"),
    )
    def get(self, request):
        return super().get(request)

    @extend_schema(request=MemoryMdPutSerializer, responses=_APPLIED)
    def put(self, request):
        return super().put(request)
