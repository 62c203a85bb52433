"""Live events over WebSocket (/ws/events/): authenticate, join the owner's group, relay.

Owners join only their own group; staff join the staff group, which receives every owner's events
(with the owner's id), and not their own owner group as well, so nothing arrives twice.
"""

from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.security.websocket import OriginValidator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from memories.models import ApiKey
from memories.selectors.api_keys import api_key_get_active
from memories.services.api_keys import api_key_hash
from memory_project.events import STAFF_GROUP, api_key_group, owner_group

CLOSE_UNAUTHENTICATED = 4401


@database_sync_to_async
def _user_for_key(raw_key: str):
    """(owner, key id) for a valid key, (AnonymousUser, None) otherwise."""
    api_key = api_key_get_active(key_hash=api_key_hash(raw_key))
    if api_key is None or not api_key.owner.is_active:
        return AnonymousUser(), None
    return api_key.owner, api_key.pk


@database_sync_to_async
def _key_still_valid(key_id) -> bool:
    return ApiKey.objects.filter(pk=key_id, revoked_at__isnull=True, owner__is_active=True).exists()


def _token_from_scope(scope) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin1"), keep_blank_values=True).get("token")
    if values is not None:
        return values[0]
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, key = value.decode("latin1").partition(" ")
            if scheme.lower() == "token" and key.strip():
                return key.strip()
    return None


class ApiKeyAuthMiddleware:
    """`?token=<api key>` (or an `Authorization: Token` header) for API clients. A token given
    decides alone: a bad one is anonymous even if a dashboard session cookie came with it."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        token = _token_from_scope(scope)
        if token is not None:
            user, key_id = await _user_for_key(token)
            scope = dict(scope, user=user, api_key_id=key_id)
        return await self.app(scope, receive, send)


class BrowserOriginValidator(OriginValidator):
    """AllowedHostsOriginValidator, except that a handshake without an Origin header is let through.

    Browsers always send Origin on a WebSocket handshake, and that is the case cross-site
    hijacking needs checked; API clients (with `?token=`) usually send none.
    """

    def valid_origin(self, parsed_origin):
        return parsed_origin is None or super().valid_origin(parsed_origin)


def origin_validated(app):
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = ["localhost", "127.0.0.1", "[::1]"]
    return BrowserOriginValidator(app, allowed_hosts)


class EventConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # Accept first: a close before the handshake completes reaches the client as a bare 403,
            # without the 4401 code that tells it to log in.
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.event_groups = [STAFF_GROUP] if user.is_staff else [owner_group(user.pk)]
        key_id = self.scope.get("api_key_id")
        if key_id is not None:
            # Revoking the key closes this socket (memories/signals.py sends to this group).
            self.event_groups.append(api_key_group(key_id))
        for group in self.event_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        if key_id is not None and not await _key_still_valid(key_id):
            # Revoked between the lookup and joining its group: that revocation's message was missed.
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.accept()

    async def disconnect(self, code):
        for group in getattr(self, "event_groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        """The feed is one-way; anything a client sends is ignored, undecoded: a frame that is not
        JSON (or binary, or nested past the parser's recursion) closed the socket with an error."""

    async def api_key_revoked(self, message):
        await self.close(code=CLOSE_UNAUTHENTICATED)

    async def event_message(self, message):
        event = dict(message["event"])
        if "owner_id" in message:
            event["owner_id"] = message["owner_id"]
        await self.send_json(event)


async def websocket_not_found(scope, receive, send):
    """Every WebSocket path but /ws/events/: the handshake is refused (403). Without a route the
    router raised, and the handshake was a 500. (A 404 through ASGI's websocket.http.response
    extension reached clients, but uvicorn then logged each one as an error.)"""
    await receive()  # websocket.connect
    await send({"type": "websocket.close"})
