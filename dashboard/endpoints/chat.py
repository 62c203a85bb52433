"""The web chat's JSON: send a message (the answer comes back), start a new chat (which consolidates
the last one), and what the consolidation left (dashboard.chat)."""

import uuid

from django.http import Http404
from rest_framework.response import Response

from dashboard import chat
from dashboard.endpoints.base import DashboardApi
from memory_project.exceptions import ServiceError


def _session_id(value) -> uuid.UUID:
    if not isinstance(value, str):
        raise ServiceError("session_id must be a session id.")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Http404 from None  # not an id of any session, so not one of the owner's


class ChatSendApi(DashboardApi):
    def post(self, request):
        body = self.json_object()
        message = chat.chat_message_clean(body.get("message"))
        session_id = body.get("session_id") or None
        return Response(
            chat.chat_send(
                owner=self.owner(),
                session_id=None if session_id is None else _session_id(session_id),
                message=message,
                actor=self.actor(),
            )
        )


class ChatEndApi(DashboardApi):
    def post(self, request):
        session_id = _session_id(self.json_object().get("session_id"))
        return Response(chat.chat_end(owner=self.owner(), session_id=session_id))


class ChatExtractedApi(DashboardApi):
    def get(self, request, session_id):
        return Response(chat.chat_extracted(owner=self.owner(), session_id=session_id))
