"""Import / export of the seed formats, and MEMORY.md / learnings.md as editable views."""

from django.conf import settings
from django.http import Http404, HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.views import actor_of
from memories.formats.memory_json import FormatError
from memories.models import ImportJob
from memories.selectors.memories import memory_group_filter_ids
from memories.services.import_jobs import import_job_create
from memories.services.import_validation import ImportInvalid
from memories.services.memory_md_edit import memory_md_apply, memory_md_get
from memories.services.transfer import (
    EXPORT_CONTENT_TYPES,
    EXPORT_FILE_NAMES,
    EXPORT_FORMATS,
    FORMATS,
    MODES,
    memory_export,
    memory_import_text,
)
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, StrictSerializer, request_owner, validated
from memory_project.api.lists import OwnerListApi
from memory_project.api.schema import ErrorSerializer
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


_BACKGROUND_HELP = (
    "Run as a background job (202 and the job to poll). Imports above MEMORY_IMPORT_SYNC_MAX_BYTES always do; "
    "false for such an import is refused."
)


_MODE_HELP = (
    "merge: every entry through the merge decision, entries imported before left as they are; restore (JSONL "
    "only): the export's rows back row for row with their ids, statuses, strengths and timestamps, rows already "
    "there left as they are. Default: restore for a JSONL file whose every line has its id, merge otherwise."
)


class ImportJsonSerializer(StrictSerializer):
    content = CleanCharField(trim_whitespace=False, allow_blank=False)
    format = serializers.ChoiceField(choices=FORMATS, required=False, allow_null=True, default=None)
    mode = serializers.ChoiceField(choices=MODES, required=False, allow_null=True, default=None, help_text=_MODE_HELP)
    name = CleanCharField(max_length=255, required=False, allow_blank=True, default="")
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    background = serializers.BooleanField(required=False, allow_null=True, default=None, help_text=_BACKGROUND_HELP)


class ImportUploadSerializer(StrictSerializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=FORMATS, required=False, allow_null=True, default=None)
    mode = serializers.ChoiceField(choices=MODES, required=False, allow_null=True, default=None, help_text=_MODE_HELP)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    background = serializers.BooleanField(required=False, allow_null=True, default=None, help_text=_BACKGROUND_HELP)


class ImportJobOutputSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True, help_text="0 to 100; 100 only once the job is done.")
    url = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "status",
            "format",
            "mode",
            "name",
            "agent",
            "size",
            "processed",
            "total",
            "percent",
            "report",
            "error",
            "problems",
            "created_at",
            "started_at",
            "finished_at",
            "url",
        ]

    def get_url(self, job) -> str:
        return reverse("import-job", kwargs={"job_id": job.pk})


_REPORT = inline_serializer(
    "ImportReport",
    {
        "format": serializers.CharField(),
        "source": serializers.CharField(),
        "mode": serializers.ChoiceField(choices=MODES),
        "entries": serializers.IntegerField(),
        "added": serializers.IntegerField(),
        "merged": serializers.IntegerField(),
        "reinforced": serializers.IntegerField(),
        "superseded": serializers.IntegerField(),
        "unchanged": serializers.IntegerField(),
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
        responses={200: _REPORT, 202: ImportJobOutputSerializer},
        description="Imports a MEMORY.md / learnings.md (seed 002), memory.json or a daily log (seed 004), a "
        "USER.md or our JSONL export, as a multipart upload (`file`, optional `format`, `agent`) or as JSON "
        "`{content, format?, name?, agent?}`. The format is detected from the file name or content when not "
        f"given ({', '.join(FORMATS)}). In `merge` mode every memory goes through the merge decision (duplicates "
        "reinforce, changed values supersede); an entry imported before, or whose exact text is already held, "
        "changes nothing (`unchanged`), so importing the same file again changes nothing. In `restore` mode (our "
        "JSONL export, the default when every line carries its id) the rows come back row for row, never merged, "
        "and rows already there are left alone. Every entry passes the same validators as POST /api/v1/memories/: "
        "any bad entry refuses the whole file with 400 `invalid_entries`, its problems listed with their line "
        "numbers in `error.details.entries`, and nothing is imported. A file above MEMORY_IMPORT_SYNC_MAX_BYTES "
        "(or with `background: true`) runs as a background job: 202 with the job, whose `url` reports its progress.",
    )
    def post(self, request):
        owner = request_owner(request)
        if request.content_type.startswith("multipart/"):
            args = validated(ImportUploadSerializer, {key: request.data.get(key) for key in request.data})
            upload = args["file"]
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
            args = validated(ImportJsonSerializer, request.data)
            text = args["content"]
            if len(text.encode()) > max_import_bytes():
                raise ServiceError(
                    f"The content is larger than {max_import_bytes()} bytes.", code="too_large", status_code=413
                )
            name = args["name"]
        large = len(text.encode()) > settings.MEMORY_IMPORT_SYNC_MAX_BYTES
        if large and args["background"] is False:
            raise ServiceError(
                f"This import is larger than {settings.MEMORY_IMPORT_SYNC_MAX_BYTES} bytes: it runs as a "
                "background job (leave out background, or set it to true).",
                code="too_large",
                status_code=413,
            )
        actor = actor_of(request)
        if large or args["background"]:
            job = import_job_create(
                owner=owner,
                text=text,
                fmt=args["format"],
                name=name,
                agent=args["agent"],
                actor=actor,
                mode=args["mode"],
            )
            body = ImportJobOutputSerializer(job).data
            return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
        try:
            report = memory_import_text(
                owner=owner,
                text=text,
                fmt=args["format"],
                name=name,
                actor=actor,
                agent=args["agent"],
                mode=args["mode"],
            )
        except ImportInvalid as exc:
            raise ServiceError(f"Nothing was imported: {exc}", code="invalid_entries", details=exc.details()) from None
        except FormatError as exc:
            raise ServiceError(f"Cannot import {name or 'this content'}: {exc}", code="invalid_format") from None
        return Response(report.to_dict())


@extend_schema_view(get=extend_schema(description="The owner's import jobs, newest first."))
class ImportJobListApi(OwnerListApi):
    output_serializer = ImportJobOutputSerializer

    def rows(self, request):
        return ImportJob.objects.filter(owner=request_owner(request)).defer("text").order_by("-created_at", "id")


@extend_schema_view(
    get=extend_schema(
        description="A background import: `status` (pending, running, done, failed), `processed` of `total` "
        "entries and `percent` while it runs; the import report when done; `problems` (line, field, message) "
        "when its entries were refused, in which case nothing was imported.",
    )
)
class ImportJobDetailApi(OwnerDetailApi):
    output_serializer = ImportJobOutputSerializer

    def row(self, request, job_id):
        job = ImportJob.objects.filter(owner=request_owner(request), pk=job_id).defer("text").first()
        if job is None:
            raise Http404
        return job


class ExportQuerySerializer(StrictSerializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS, required=False, default="jsonl")
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    owner = CleanCharField(max_length=150, required=False)
    group = CleanCharField(max_length=100, required=False, default=None)


class ExportApi(APIView):
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=list(EXPORT_FORMATS), description="default jsonl"),
            OpenApiParameter("agent", str, description="one agent namespace; all of them when absent"),
            OpenApiParameter(
                "group", str, description="only this memory group's memories (name or id, groups below it too)"
            ),
        ],
        # Each format's own media type (EXPORT_CONTENT_TYPES), as the response says.
        responses={
            (200, media_type): OpenApiResponse(
                OpenApiTypes.OBJECT if media_type == "application/json" else OpenApiTypes.STR, description="the file"
            )
            for media_type in sorted({value.split(";")[0] for value in EXPORT_CONTENT_TYPES.values()})
        },
        description="Downloads everything of the owner in one format (as an attachment): MEMORY.md / "
        "learnings.md (seed 002), memory.json (seed 004, with `x_*` keys keeping our exact category, "
        "status and strength), USER.md, or our full-fidelity JSONL.",
    )
    def get(self, request):
        query = validated(ExportQuerySerializer, request.query_params.dict())
        return export_download(owner=request_owner(request), query=query)


def export_download(*, owner, query: dict) -> HttpResponse:
    """The export an ExportQuerySerializer's `query` asks for, as a file to save (the API's and the dashboard's)."""
    fmt = query["format"]
    group_ids = memory_group_filter_ids(owner=owner, ref=query["group"])
    text = memory_export(owner=owner, fmt=fmt, agent=query["agent"], group_ids=group_ids)
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
        query = validated(AgentQuerySerializer, request.query_params.dict())
        owner = request_owner(request)
        return Response(memory_md_get(owner=owner, agent=query["agent"], view=self.view))

    def put(self, request):
        data = validated(MemoryMdPutSerializer, request.data)
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

    @extend_schema(request=MemoryMdPutSerializer, responses={200: _APPLIED, 409: ErrorSerializer})
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

    @extend_schema(request=MemoryMdPutSerializer, responses={200: _APPLIED, 409: ErrorSerializer})
    def put(self, request):
        return super().put(request)
