"""The dashboard's buttons for work the API also offers: download an export of the owner's memory
in any of the export formats, and run the lifecycle now. Same serializers and services as
GET /api/v1/export/ and POST /api/v1/lifecycle/run/, behind the browser's session login."""

from django.http import HttpResponse
from rest_framework import status
from rest_framework.response import Response

from dashboard.endpoints.base import DashboardApi
from memories.api.lifecycle import LifecycleRunOutputSerializer
from memories.api.transfer import ExportQuerySerializer, FirstRendererNegotiation
from memories.models import LifecycleRun
from memories.services.lifecycle import LOCK_BUSY_ERROR, lifecycle_run
from memories.services.transfer import EXPORT_CONTENT_TYPES, EXPORT_FILE_NAMES, memory_export
from memory_groups.selectors import group_filter_ids


class ExportDownloadApi(DashboardApi):
    content_negotiation_class = FirstRendererNegotiation

    def get(self, request):
        data = self.query(ExportQuerySerializer)
        owner = self.owner()
        fmt = data["format"]
        group_ids = group_filter_ids(owner=owner, ref=data["group"])
        text = memory_export(owner=owner, fmt=fmt, agent=data["agent"], group_ids=group_ids)
        response = HttpResponse(text, content_type=EXPORT_CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{EXPORT_FILE_NAMES[fmt]}"'
        return response


class LifecycleRunNowApi(DashboardApi):
    def post(self, request):
        run = lifecycle_run(owner=self.owner(), trigger="dashboard")
        busy = run.status == LifecycleRun.RunStatus.FAILED and run.error == LOCK_BUSY_ERROR
        return Response(
            LifecycleRunOutputSerializer(run).data,
            status=status.HTTP_409_CONFLICT if busy else status.HTTP_200_OK,
        )
