"""JSON endpoints for the dashboard's scripts (/dashboard/api/...).

Session-authenticated with Django's CSRF protection, scoped to the owner from owner_for (another
owner's object is a 404), and errors in the API's shape {"error": {"code", "message", "details"}}.
"""

import json
import uuid
from functools import wraps

from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from django.http import Http404, JsonResponse

from dashboard import chat, selectors, services
from dashboard.owners import owner_for
from memories.models import Memory
from memories.selectors.memories import memory_get
from memory_project.exceptions import ServiceError


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "details": None}}, status=status)


def endpoint(*methods):
    """Authentication, allowed methods, the owner, and errors turned into 4xx JSON with a reason."""

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return _error(401, "not_authenticated", "Log in to use the dashboard.")
            if request.method not in methods:
                return _error(405, "method_not_allowed", f"Use {' or '.join(methods)}.")
            try:
                owner = owner_for(request)
                return JsonResponse(view(request, owner, *args, **kwargs))
            except Http404:
                return _error(404, "not_found", "Not found.")
            except ServiceError as error:
                return _error(error.status_code, error.code, error.message)
            except RequestDataTooBig:
                return _error(413, "too_large", "Request body exceeds the size limit.")

        return wrapper

    return decorate


def _body(request) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, RecursionError):
        raise ServiceError("The body must be a JSON object.", code="parse_error") from None
    if not isinstance(data, dict):
        raise ServiceError("The body must be a JSON object.", code="parse_error")
    return data


def _actor(request) -> str:
    return f"dashboard:{request.user.get_username()}"


def _memory_out(memory: Memory) -> dict:
    return {
        "id": str(memory.pk),
        "content": memory.content,
        "category": memory.category,
        "status": memory.status,
        "agent": memory.agent,
        "source": memory.source,
        "importance": memory.importance,
        "strength": round(memory.strength, 4),
        "confidence": memory.confidence,
        "pinned": memory.pinned,
        "retention": memory.retention,
        "review_reason": memory.review_reason,
        "observed_at": memory.observed_at,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "version": memory.version,
        # As in the list's rows, so a row replaced after an action or a live event keeps its chip.
        "conflict": selectors.memory_conflicts(owner=memory.owner_id, ids=[memory.pk]).get(str(memory.pk)),
    }


@endpoint("GET")
def overview(request, owner):
    return {"metrics": selectors.overview_metrics(owner=owner), "activity": selectors.memory_activity(owner=owner)}


@endpoint("GET")
def memories(request, owner):
    try:
        query = selectors.browse_query_parse(request.GET)
    except ValueError as error:
        raise ServiceError(str(error)) from None
    return selectors.memory_browse(owner=owner, query=query)


@endpoint("GET", "PATCH")
def memory(request, owner, memory_id):
    found = memory_get(owner=owner, memory_id=memory_id)
    if request.method == "PATCH":
        changes = services.memory_edit_changes(_body(request))
        found = services.memory_edit(
            memory=found, actor=_actor(request), changes=changes, moderator=request.user.is_staff
        )
    return {"memory": _memory_out(found)}


@endpoint("POST")
def memory_action(request, owner, memory_id):
    found = memory_get(owner=owner, memory_id=memory_id)
    body = _body(request)
    with transaction.atomic():  # "edit and approve" is one change: a refused approval keeps the edit out too
        return _memory_action(request, found, body)


def _memory_action(request, found, body) -> dict:
    if "changes" in body:  # moderation's "edit and approve" in one request
        found = services.memory_edit(
            memory=found,
            actor=_actor(request),
            changes=services.memory_edit_changes(body["changes"]),
            moderator=request.user.is_staff,
        )
    found = services.memory_action(
        memory=found, action=body.get("action", ""), actor=_actor(request), moderator=request.user.is_staff
    )
    return {"memory": _memory_out(found)}


@endpoint("POST")
def memory_revert(request, owner, memory_id):
    found = memory_get(owner=owner, memory_id=memory_id)
    event_id = _body(request).get("event")
    if isinstance(event_id, bool) or not isinstance(event_id, int):
        raise ServiceError("event must be the id of a history entry.")
    reverted = services.memory_revert(
        memory=found, event_id=event_id, actor=_actor(request), moderator=request.user.is_staff
    )
    return {"memory": _memory_out(reverted)}


@endpoint("POST")
def memory_bulk(request, owner):
    body = _body(request)
    return services.memory_bulk_action(
        owner=owner,
        ids=body.get("ids"),
        action=body.get("action", ""),
        actor=_actor(request),
        moderator=request.user.is_staff,
    )


@endpoint("GET")
def strength_distribution(request, owner):
    return selectors.strength_distribution(owner=owner)


@endpoint("POST")
def chat_send(request, owner):
    body = _body(request)
    message = chat.chat_message_clean(body.get("message"))
    session_id = body.get("session_id") or None
    if session_id is not None and not isinstance(session_id, str):
        raise ServiceError("session_id must be a session id.")
    return chat.chat_send(owner=owner, session_id=_uuid_or_404(session_id), message=message, actor=_actor(request))


@endpoint("POST")
def chat_end(request, owner):
    session_id = _body(request).get("session_id")
    if not isinstance(session_id, str):
        raise ServiceError("session_id must be a session id.")
    return chat.chat_end(owner=owner, session_id=_uuid_or_404(session_id))


@endpoint("GET")
def chat_extracted(request, owner, session_id):
    return chat.chat_extracted(owner=owner, session_id=session_id)


def _uuid_or_404(value):
    if value is None:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Http404 from None
