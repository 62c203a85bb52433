"""MCP over streamable HTTP at `/mcp/`, mounted in the ASGI app in front of Django.

Every request must carry an API key (`Authorization: Bearer <key>` or `Token <key>`), else 401;
the key's owner is the owner of the tool calls the request makes. No session is kept between
requests (the SDK's stateless mode), so each request is authenticated and served on its own by
whichever web worker takes it.

The SDK's session manager runs a task group for its requests' servers and expects an ASGI
lifespan to start it. uvicorn sends one (handled here); daphne does not, so the first request
starts it in a background task of the running loop, where it lives until the process ends.
"""

import asyncio
import json
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from memories.mcp.server import PRINCIPAL_SCOPE_KEY, InvalidKey, build_server, principal_for_key
from memory_project.text import storable

logger = logging.getLogger(__name__)

AGENT_HEADER = b"x-memory-agent"


def _transport_security() -> TransportSecuritySettings:
    """Host checks from Django's ALLOWED_HOSTS (DNS-rebinding protection); none when it allows any host."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = []
    for host in hosts:
        host = host.lstrip(".")
        allowed += [host, f"{host}:*"]
    origins = [f"{scheme}://{host}" for host in allowed for scheme in ("http", "https")]
    origins += list(getattr(settings, "CSRF_TRUSTED_ORIGINS", []))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def _key_from(scope) -> str:
    value = _header(scope, b"authorization").strip()
    scheme, _, key = value.partition(" ")
    return key.strip() if scheme.lower() in ("bearer", "token") else ""


def _agent_from(scope) -> str:
    agent = _header(scope, AGENT_HEADER).strip()
    if not agent:
        from urllib.parse import parse_qs

        agent = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("agent") or [""])[0]
    return agent[:100]


async def _send_json(send, status: int, body: dict, headers=()) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class McpHttpApp:
    def __init__(self):
        self.server = build_server()
        self.manager: StreamableHTTPSessionManager | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task | None = None
        self._running = False

    def _new_manager(self) -> StreamableHTTPSessionManager:
        # Building the Starlette app is how the SDK makes a session manager; only the manager is used.
        self.server.streamable_http_app(
            # No sessions kept in the process: a server runs several web workers and a client's next
            # connection may reach another one, where a 2025-protocol session id was unknown (404).
            # The tools need no server-to-client requests, which is all a session would add.
            stateless_http=True,
            transport_security=_transport_security(),
        )
        return self.server.session_manager

    async def _run_manager(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        try:
            async with self.manager.run():
                self._running = True
                ready.set()
                await stop.wait()
        except Exception:
            logger.exception("MCP session manager stopped")
        finally:
            self._running = False
            # A manager runs once; the next request builds and starts a new one.
            self._ready = None
            ready.set()

    async def start(self) -> None:
        if self._ready is None:
            self.manager = self._new_manager()
            self._ready = asyncio.Event()
            self._stop = asyncio.Event()
            self._runner = asyncio.get_running_loop().create_task(self._run_manager(self._ready, self._stop))
        await self._ready.wait()
        if not self._running:
            raise RuntimeError("the MCP session manager could not start (see the log)")

    async def stop(self) -> None:
        runner = self._runner
        if runner is not None and self._stop is not None:
            self._stop.set()
            await runner
        self._runner = None

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        key, agent = _key_from(scope), _agent_from(scope)
        if not storable(agent):
            # Refused here with its reason, as the REST API refuses it: a tool call would fail on it
            # with a bare "Error executing tool".
            error = {"code": "invalid", "message": "agent: NUL bytes and lone surrogates are not allowed."}
            await _send_json(send, 400, {"error": {**error, "details": None}})
            return
        try:
            principal = await sync_to_async(principal_for_key)(key, agent=agent) if key else None
        except InvalidKey:
            principal = None
        if principal is None:
            await _send_json(
                send,
                401,
                {
                    "error": {
                        "code": "not_authenticated",
                        "message": "An API key is required: 'Authorization: Bearer <key>' (or 'Token <key>').",
                        "details": None,
                    }
                },
                headers=[(b"www-authenticate", b'Bearer realm="mcp"')],
            )
            return
        token = AccessToken(token=key, client_id=f"owner:{principal.owner_id}", scopes=[], subject=principal.key_prefix)
        scope = {**scope, "user": AuthenticatedUser(token), PRINCIPAL_SCOPE_KEY: principal}
        await self.start()
        await self.manager.handle_request(scope, receive, send)


def mcp_path(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")
