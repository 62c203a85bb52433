"""The dashboard's buttons for work the API also offers: download an export of the owner's memory
in any of the export formats, and run the lifecycle now. Same serializers and services as
GET /api/v1/export/ and POST /api/v1/lifecycle/run/, behind the browser's session login."""

from rest_framework import status
from rest_framework.response import Response

from dashboard.endpoints.base import DashboardApi
from memories.api.lifecycle import LifecycleRunOutputSerializer
from memories.api.transfer import ExportQuerySerializer, FirstRendererNegotiation, export_download
from memories.models import LifecycleRun
from memories.services.lifecycle import LOCK_BUSY_ERROR, lifecycle_run


class ExportDownloadApi(DashboardApi):
    content_negotiation_class = FirstRendererNegotiation

    def get(self, request):
        return export_download(owner=self.owner(), query=self.query(ExportQuerySerializer))


class LifecycleRunNowApi(DashboardApi):
    def post(self, request):
        run = lifecycle_run(owner=self.owner(), trigger="dashboard")
        busy = run.status == LifecycleRun.RunStatus.FAILED and run.error == LOCK_BUSY_ERROR
        return Response(
            LifecycleRunOutputSerializer(run).data,
            status=status.HTTP_409_CONFLICT if busy else status.HTTP_200_OK,
        )
