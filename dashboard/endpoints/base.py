"""The base of the dashboard's DRF endpoints (/dashboard/api/...): the browser's session login with
CSRF checks, the project's one exception handler and error shape, and the owner the page looks at
(dashboard.owners.owner_for). They are the dashboard's own, not the public API, so they stay out of
the OpenAPI schema."""

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from dashboard.owners import owner_for
from memory_project.api.fields import validated
from memory_project.exceptions import ServiceError


class CsrfFailed(exceptions.PermissionDenied):
    default_code = "csrf_failed"


class DashboardSessionAuthentication(SessionAuthentication):
    """Session login; a request without one is a 401 (DRF turns it into a 403 without a challenge)."""

    def authenticate_header(self, request):
        return 'Session realm="dashboard"'

    def enforce_csrf(self, request):
        # Worded and coded as Django's own CSRF failure on these paths (memory_project.health), so
        # the scripts see one error whichever check refused them.
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as error:
            reason = str(error.detail).removeprefix("CSRF Failed: ")
            raise CsrfFailed(f"CSRF verification failed: {reason}") from None


@extend_schema(exclude=True)
class DashboardApi(APIView):
    authentication_classes = [DashboardSessionAuthentication]
    permission_classes = [IsAuthenticated]

    def owner(self):
        return owner_for(self.request)

    def actor(self) -> str:
        return f"dashboard:{self.request.user.get_username()}"

    def moderator(self) -> bool:
        """Staff moderate: they alone move a memory held for review into the live ones."""
        return self.request.user.is_staff

    def query(self, serializer_class: type[serializers.Serializer]) -> dict:
        """Validated query parameters (`owner` is the page's, read by owner_for, not a filter)."""
        return validated(serializer_class, {k: v for k, v in self.request.query_params.items() if k != "owner"})

    def json_object(self) -> dict:
        """The body as a JSON object (empty when there is none); anything else is a 400."""
        data = self.request.data
        if not isinstance(data, dict):
            raise ServiceError("The body must be a JSON object.", code="parse_error")
        return data

    def body(self, serializer_class: type[serializers.Serializer]) -> dict:
        return validated(serializer_class, self.request.data)
