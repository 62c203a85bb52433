"""REST API of erasure: DELETE /api/v1/data/ (everything of the owner, or ?agent=), and the receipts."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from erasure.models import ErasureReceipt
from erasure.services import owner_erase, receipt_verify
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import CleanCharField, request_owner, validated
from memory_project.api.lists import OwnerListApi
from memory_project.exceptions import ServiceError


class ErasureQuerySerializer(serializers.Serializer):
    confirm = CleanCharField(max_length=150, help_text="The owner's username, to show the erasure is meant.")
    agent = CleanCharField(
        max_length=100, required=False, allow_blank=True, help_text="Erase only this agent's namespace."
    )
    account = serializers.BooleanField(required=False, default=False, help_text="Delete the account and its keys too.")


class ErasureReceiptSerializer(serializers.ModelSerializer):
    verified = serializers.SerializerMethodField()

    class Meta:
        model = ErasureReceipt
        fields = [
            "id",
            "owner_id",
            "agent",
            "account_deleted",
            "requested_by",
            "erased_at",
            "counts",
            "total",
            "digest",
            "verified",
            "duration_ms",
        ]

    def get_verified(self, receipt) -> bool:
        return receipt_verify(receipt)


class ErasureOutputSerializer(ErasureReceiptSerializer):
    noop = serializers.BooleanField(help_text="True when nothing was left to erase: the previous receipt is returned.")

    class Meta(ErasureReceiptSerializer.Meta):
        fields = [*ErasureReceiptSerializer.Meta.fields, "noop"]


def requested_by(request, owner) -> str:
    if owner.pk == request.user.pk:
        return "owner"
    return f"staff:{request.user.get_username()}"


class OwnerDataApi(APIView):
    @extend_schema(
        parameters=[ErasureQuerySerializer],
        # A DELETE is documented as a bodiless 204 unless told: this one answers 200 with the receipt.
        responses={200: ErasureOutputSerializer},
        description="Erases every row, file and cached entry of the owner (or of one agent namespace) in one "
        "transaction and answers with a receipt: counts per kind, a timestamp and a digest, none of the "
        "erased content. Erasing again finds nothing and returns the same receipt with noop=true.",
    )
    def delete(self, request):
        owner = request_owner(request)
        data = validated(ErasureQuerySerializer, request.query_params)
        if data["confirm"] != owner.get_username():
            raise ServiceError(
                "Pass confirm=<the owner's username> to erase their data; nothing was erased.",
                code="confirmation_required",
            )
        receipt, created = owner_erase(
            owner_id=owner.pk,
            requested_by=requested_by(request, owner),
            agent=data.get("agent"),
            delete_account=data["account"],
        )
        receipt.noop = not created
        return Response(ErasureOutputSerializer(receipt).data)


class ErasureReceiptListApi(OwnerListApi):
    output_serializer = ErasureReceiptSerializer

    def rows(self, request):
        return ErasureReceipt.objects.filter(owner_id=request_owner(request).pk)


@extend_schema_view(
    get=extend_schema(parameters=[OpenApiParameter("receipt_id", OpenApiTypes.UUID, OpenApiParameter.PATH)])
)
class ErasureReceiptDetailApi(OwnerDetailApi):
    output_serializer = ErasureReceiptSerializer

    def row(self, request, receipt_id):
        return get_object_or_404(ErasureReceipt, pk=receipt_id, owner_id=request_owner(request).pk)
