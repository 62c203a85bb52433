"""REST API of attachments: the owner's list (caption search, filters), one's metadata, its download."""

import base64
import binascii

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.views import APIView

from attachments.models import Attachment
from attachments.selectors import attachment_get, attachment_list
from attachments.services import attachment_storage
from attachments.sniff import TEXT_TYPES
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, StrictSerializer, request_owner, validated
from memory_project.api.lists import OwnerListApi

# Types sent under their own name (always as a download); anything else unknown is plain bytes.
SERVED_AS_IS = {"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"}


class Base64Field(serializers.CharField):
    """Bytes sent as standard base64 text; refused with a 400 when it is not base64."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise serializers.ValidationError("Not valid base64.") from None


class AttachmentInputSerializer(StrictSerializer):
    filename = CleanCharField(max_length=255)
    content_type = CleanCharField(max_length=100, help_text="Checked against the bytes (see ATTACHMENT_ALLOWED_TYPES).")
    data = Base64Field(help_text="The file's bytes, base64-encoded (at most ATTACHMENT_MAX_BYTES once decoded).")
    caption = CleanCharField(max_length=2000, required=False, allow_blank=True, default="")


class AttachmentOutputSerializer(serializers.ModelSerializer):
    turn_id = serializers.UUIDField(read_only=True)
    session_id = serializers.UUIDField(source="turn.session_id", read_only=True)
    memory_ids = serializers.ListField(child=serializers.UUIDField(), read_only=True, default=list)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = Attachment
        fields = [
            "id",
            "turn_id",
            "session_id",
            "memory_ids",
            "filename",
            "content_type",
            "size",
            "sha256",
            "caption",
            "created_at",
            "expires_at",
            "download_url",
        ]

    def get_download_url(self, attachment) -> str:
        return f"/api/v1/attachments/{attachment.pk}/download/"


class AttachmentFilterSerializer(serializers.Serializer):
    q = CleanCharField(max_length=500, required=False, allow_blank=True, default="")
    session = serializers.UUIDField(required=False)
    turn = serializers.UUIDField(required=False)
    memory = serializers.UUIDField(required=False)
    content_type = CleanCharField(max_length=100, required=False, allow_blank=True, default="")


@extend_schema_view(get=extend_schema(parameters=[AttachmentFilterSerializer]))
class AttachmentListApi(OwnerListApi):
    output_serializer = AttachmentOutputSerializer

    def rows(self, request):
        data = validated(AttachmentFilterSerializer, request.query_params)
        return attachment_list(
            owner=request_owner(request),
            query=data["q"],
            session_id=data.get("session"),
            turn_id=data.get("turn"),
            memory_id=data.get("memory"),
            content_type=data["content_type"],
        )


class AttachmentDetailApi(OwnerDetailApi):
    output_serializer = AttachmentOutputSerializer

    def row(self, request, attachment_id):
        return attachment_get(owner=request_owner(request), attachment_id=attachment_id)


class AttachmentDownloadApi(APIView):
    @extend_schema(responses={(200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY)})
    def get(self, request, attachment_id):
        attachment = attachment_get(owner=request_owner(request), attachment_id=attachment_id)
        content_type = attachment.content_type
        if content_type in TEXT_TYPES:
            content_type = f"{content_type}; charset=utf-8"
        elif content_type not in SERVED_AS_IS:
            content_type = "application/octet-stream"
        response = FileResponse(
            attachment_storage().open(attachment.storage_name, "rb"),
            as_attachment=True,
            filename=attachment.filename,
            content_type=content_type,
        )
        # Never rendered as a page by a browser: a download, no sniffing, and sandboxed if opened.
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "private, no-store"
        return response

    def perform_content_negotiation(self, request, force=False):
        # A file, whatever the client's Accept header says (errors are still JSON).
        return super().perform_content_negotiation(request, force=True)
