"""Counts each REST API request for the analytics (analytics.services.request_record): its kind,
owner, agent and latency. Only a dict update happens on the request path."""

import json
import logging
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import Resolver404, resolve

from analytics.models import RequestKind
from analytics.services import request_record

logger = logging.getLogger(__name__)

API_PREFIX = "/api/v1/"
# (url name, method) → kind; tools are told apart by name below.
KINDS = {
    ("memory-list", "POST"): RequestKind.ADD,
    ("search", "POST"): RequestKind.SEARCH,
    ("compat-search", "GET"): RequestKind.SEARCH,
    ("compat-search", "POST"): RequestKind.SEARCH,
    ("context", "GET"): RequestKind.CONTEXT,
    ("session-turns", "POST"): RequestKind.TURNS,
    ("import", "POST"): RequestKind.IMPORT,
}
# An erasure is recorded by its receipt; counting it would leave a row of the owner it erased.
NOT_COUNTED = {"owner-data"}
TOOL_KINDS = {"memory_write": RequestKind.ADD, "search_memory": RequestKind.SEARCH}
# The agent is read from a JSON body only when it is small (it is parsed again by the view).
MAX_BODY_FOR_AGENT = 256 * 1024


def _kind(match, method: str) -> str:
    if match.url_name == "tool-execute":
        return TOOL_KINDS.get(match.kwargs.get("name", ""), RequestKind.OTHER)
    return KINDS.get((match.url_name, method), RequestKind.OTHER)


def _agent(request) -> str:
    agent = request.GET.get("agent", "")
    if agent or request.method not in ("POST", "PUT", "PATCH"):
        return agent
    if not request.content_type == "application/json":
        return ""
    try:
        if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY_FOR_AGENT:
            return ""
        body = json.loads(request.body or b"{}")
    except Exception:  # a body the view will refuse with its own reason; nothing to count here
        return ""
    value = body.get("agent") if isinstance(body, dict) else None
    return value if isinstance(value, str) else ""


def _owner_id(request) -> int | None:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    name = request.GET.get("owner")
    if name and user.is_staff and name != user.get_username():
        if "\x00" in name or len(name) > 150:
            return None  # no such user; the view answered 404
        return get_user_model().objects.filter(username=name).values_list("pk", flat=True).first()
    return user.pk


class RequestAnalyticsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not settings.REQUEST_ANALYTICS or not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return self.get_response(request)
        if match.url_name in NOT_COUNTED:
            return self.get_response(request)
        kind = _kind(match, request.method)
        agent = _agent(request) if kind != RequestKind.OTHER else ""
        started = time.perf_counter()
        response = self.get_response(request)
        ms = (time.perf_counter() - started) * 1000
        try:
            # DRF authenticates inside the view and sets the user on the Django request.
            owner_id = _owner_id(request)
            if owner_id is not None:
                request_record(owner_id=owner_id, agent=agent, kind=kind, ms=ms, error=response.status_code >= 400)
        except Exception:  # counting must never fail the request it counts
            logger.warning("request analytics: could not count %s %s", request.method, request.path, exc_info=True)
        return response
