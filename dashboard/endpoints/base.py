"""The base of the dashboard's DRF endpoints (/dashboard/api/...): the browser's session login with
CSRF checks, the project's one exception handler and error shape, and the owner the page looks at
(dashboard.owners.owner_for). They are the dashboard's own, not the public API, so they stay out of
the OpenAPI schema."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from dashboard.owners import owner_for


class DashboardSessionAuthentication(SessionAuthentication):
    """Session login; a request without one is a 401 (DRF turns it into a 403 without a challenge)."""

    def authenticate_header(self, request):
        return 'Session realm="dashboard"'


@extend_schema(exclude=True)
class DashboardApi(APIView):
    authentication_classes = [DashboardSessionAuthentication]
    permission_classes = [IsAuthenticated]

    def owner(self):
        return owner_for(self.request)

    def actor(self) -> str:
        return f"dashboard:{self.request.user.get_username()}"

    def query(self, serializer_class: type[serializers.Serializer]) -> dict:
        """Validated query parameters (`owner` is the page's, read by owner_for, not a filter)."""
        params = {k: v for k, v in self.request.query_params.items() if k != "owner"}
        serializer = serializer_class(data=params)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def body(self, serializer_class: type[serializers.Serializer]) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
