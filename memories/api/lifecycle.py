"""Lifecycle runs over the API: start one for the caller's owner, list the owner's past runs."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.models import LifecycleRun
from memories.services.lifecycle import LOCK_BUSY_ERROR, lifecycle_run
from memory_project.api.fields import StrictSerializer, request_owner, validated
from memory_project.api.lists import OwnerListApi


class LifecycleRunInputSerializer(StrictSerializer):
    """No options: the export directory comes from settings only, never from a request."""


class LifecycleRunOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = LifecycleRun
        fields = ["id", "status", "trigger", "steps", "counts", "error", "started_at", "finished_at", "duration_ms"]
        read_only_fields = fields


class LifecycleRunApi(APIView):
    @extend_schema(
        request=LifecycleRunInputSerializer,
        responses={202: LifecycleRunOutputSerializer, 409: LifecycleRunOutputSerializer},
        description="Runs the lifecycle (dedup, decay, archive/forget, expiry, compression, digests, exports, "
        "cap) for the caller's owner and returns the run. 409 when a run for this owner is already in progress "
        f"(the returned run has status `failed` and error `{LOCK_BUSY_ERROR}`).",
    )
    def post(self, request):
        validated(LifecycleRunInputSerializer, request.data or {})
        run = lifecycle_run(owner=request_owner(request), trigger="api")
        busy = run.status == LifecycleRun.RunStatus.FAILED and run.error == LOCK_BUSY_ERROR
        return Response(
            LifecycleRunOutputSerializer(run).data,
            status=status.HTTP_409_CONFLICT if busy else status.HTTP_202_ACCEPTED,
        )


class LifecycleRunListApi(OwnerListApi):
    output_serializer = LifecycleRunOutputSerializer

    def rows(self, request):
        return LifecycleRun.objects.filter(owner=request_owner(request)).order_by("-started_at", "-pk")
