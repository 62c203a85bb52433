"""The OpenAPI schema as generated clients need it: every error status an operation can answer,
each with the one error shape of `memory_project.exceptions`, added to every operation here instead
of being repeated on each view (issue 14). Views declare their own success and business statuses
(a 409 of a busy lifecycle run, a 202 of a background import) with `extend_schema` as before."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from memory_project.api.create import OwnerCreateApi
from memory_project.api.lists import OwnerListApi


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable reason, e.g. `invalid`, `not_found`, `conflict`")
    message = serializers.CharField(help_text="what was wrong, for a person")
    details = serializers.JSONField(allow_null=True, help_text="per-field reasons of a validation error, or null")


class ErrorSerializer(serializers.Serializer):
    """Every error the API answers: {"error": {"code", "message", "details"}}."""

    error = ErrorBodySerializer()


# Statuses any operation may answer, whatever it does.
ALWAYS = {
    400: "Bad input (a parameter, the body or its JSON); `details` names the fields.",
    404: "Not found: an id of another owner or none, a page past the end, or an unknown `owner` (staff).",
    414: "The URL (its query string) is longer than the limit.",
    429: "Rate limited; retry after the time in the Retry-After header.",
    503: "The database is unavailable; retry shortly.",
}
AUTHENTICATED = {
    401: "No or an invalid API key (Authorization: Token …).",
    403: "Not allowed: staff-only parameters or actions, or CSRF for a session login.",
}
WITH_BODY = {
    413: "The request body exceeds the size limit.",
    415: "Unsupported Content-Type for the body.",
}
JSON = ["application/json"]


class ServiceAutoSchema(AutoSchema):
    def _error_statuses(self) -> dict[int, str]:
        statuses = dict(ALWAYS)
        if not all(isinstance(p, AllowAny) for p in self.view.get_permissions()):
            statuses.update(AUTHENTICATED)
        if self.method in ("POST", "PUT", "PATCH"):
            statuses.update(WITH_BODY)
        return statuses

    def _creates(self) -> bool:
        return self.method == "POST" and isinstance(self.view, OwnerCreateApi)

    def get_request_serializer(self):
        if self._creates():
            return self.view.input_serializer
        return super().get_request_serializer()

    def get_response_serializers(self):
        # An `OwnerListApi` (a page of rows), `OwnerDetailApi` (one row) or `OwnerCreateApi` (the new
        # row) names its serializers once, for the view and for this schema.
        if self._creates():
            return {201: self.view.shown_on_create()}
        shown = getattr(self.view, "output_serializer", None)
        if self.method == "GET" and shown is not None:
            return shown(many=isinstance(self.view, OwnerListApi))
        return super().get_response_serializers()

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, description in sorted(self._error_statuses().items()):
            responses.setdefault(
                str(code),
                self._get_response_for_code(OpenApiResponse(ErrorSerializer, description=description), str(code), JSON),
            )
        return responses
