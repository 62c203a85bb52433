"""One exception handler: every API error has the shape {"error": {"code", "message", "details"}}."""

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from memory_project.text import has_surrogate

logger = logging.getLogger(__name__)


class ServiceError(Exception):
    """A business rule refused the request; maps to a 4xx with a reason."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, status_code: int | None = None, details=None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        if status_code:
            self.status_code = status_code
        self.details = details


class Conflict(ServiceError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


def _first_message(details) -> str:
    if isinstance(details, dict):
        for key, value in details.items():
            inner = _first_message(value)
            return inner if key in ("non_field_errors", "detail") else f"{key}: {inner}"
    if isinstance(details, list) and details:
        return _first_message(details[0])
    return str(details)


def api_exception_handler(exc, context):
    response = _api_error(exc, context)
    if response is not None:
        response.data = _renderable(response.data)
    return response


def _renderable(value):
    """`value` with each lone surrogate written as its escape: an error message quotes what the
    client sent (an unknown field's name, a value that is not a choice), and a JSON "\\ud800" in
    it could not be encoded as UTF-8, so the 400 became a 500 while rendering."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") if has_surrogate(value) else value
    if isinstance(value, dict):
        return {_renderable(key): _renderable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_renderable(item) for item in value]
    return value


def _api_error(exc, context):
    if isinstance(exc, ServiceError):
        return _error(exc.status_code, exc.code, exc.message, exc.details)
    if isinstance(exc, OperationalError):
        # The database is down or out of connections: a retryable condition, not a bug.
        logger.warning("database unavailable: %s", exc)
        response = _error(503, "unavailable", "The database is unavailable; retry shortly.")
        response["Retry-After"] = "5"
        return response
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        return _error(413, "too_large", "Request body exceeds the size limit.")
    elif isinstance(exc, RecursionError):
        # Python's JSON parser recurses once per nesting level: a body like [[[[…]]]] a few
        # thousand deep overflows it before any serializer runs. That is bad input, not a crash.
        logger.info("request refused: JSON nested too deeply")
        return _error(400, "parse_error", "JSON parse error - the body is nested too deeply.")

    response = exception_handler(exc, context)
    if response is None:
        return None
    details = response.data
    if isinstance(exc, exceptions.ValidationError):
        code, message = "invalid", _first_message(details)
    else:
        code = getattr(exc, "default_code", "error")
        message = str(details.get("detail", details)) if isinstance(details, dict) else str(details)
        details = None
    response.data = {"error": {"code": code, "message": message, "details": details}}
    return response


def _error(status_code, code, message, details=None):
    return Response({"error": {"code": code, "message": message, "details": details}}, status=status_code)
