"""The memory tools as an MCP server (official `mcp` SDK, MCPServer — FastMCP in SDK 1.x).

search_memory, search_conversation_traces, memory_write and memory_forget run through
`memories.services.tools.tool_execute`, exactly as `POST /api/v1/tools/{name}/` runs them (same
validation, scoping by owner and agent, merge decision); get_context is `GET /api/v1/context/`.

Who the caller is comes from an API key: over stdio the key in MEMORY_API_KEY (checked again on
every call, so revoking it stops the server's access), over HTTP the key of each request (see
`memories.mcp.http`). Django's ORM is synchronous, so every call runs in `sync_to_async`.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field
from rest_framework.exceptions import ValidationError as DrfValidationError

from memories.selectors.api_keys import api_key_get_active
from memories.services.api_keys import api_key_hash
from memories.services.search import context_deliver
from memories.services.tools import tool_execute
from memories.tools import TOOL_SCHEMAS, TOOLS_DESCRIPTION
from memory_project.exceptions import ServiceError

SERVER_NAME = "agent-memory"
PRINCIPAL_SCOPE_KEY = "memory.principal"
CategoryName = Literal["preference", "fact", "project", "decision", "workflow", "skill", "error", "rule", "todo"]
_DESCRIPTIONS = {t["function"]["name"]: t["function"]["description"] for t in TOOL_SCHEMAS}


@dataclass(frozen=True)
class Principal:
    """Who a call acts for: the key's owner, in one agent namespace."""

    owner_id: int
    username: str
    key_prefix: str
    agent: str = ""

    @property
    def actor(self) -> str:
        return f"mcp:{self.username}:{self.key_prefix}"


class InvalidKey(Exception):
    pass


def principal_for_key(raw_key: str, *, agent: str = "") -> Principal:
    """The principal of a raw API key (synchronous: it reads the database); InvalidKey if unusable."""
    if not raw_key or "\x00" in raw_key:
        raise InvalidKey("no API key given")
    api_key = api_key_get_active(key_hash=api_key_hash(raw_key.strip()))
    if api_key is None:
        raise InvalidKey("unknown or revoked API key")
    if not api_key.owner.is_active:
        raise InvalidKey("the key's owner is inactive")
    return Principal(
        owner_id=api_key.owner_id, username=api_key.owner.get_username(), key_prefix=api_key.prefix, agent=agent
    )


def _message(detail) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_message(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return "; ".join(_message(item) for item in detail)
    return str(detail)


def _run(principal: Principal, name: str, arguments: dict) -> dict:
    """One tool call in a worker thread, with Django's per-request connection hygiene around it."""
    close_old_connections()
    try:
        owner = get_user_model().objects.filter(pk=principal.owner_id, is_active=True).first()
        if owner is None:
            raise ToolError("the API key's owner no longer exists or is inactive")
        if name == "get_context":
            result = context_deliver(owner=owner, agent=principal.agent, served_as="context", **arguments)
        else:
            result = tool_execute(
                owner=owner, name=name, arguments=arguments, actor=principal.actor, agent=principal.agent
            )
        # Timestamps and UUIDs as JSON text, as the REST API returns them.
        return json.loads(json.dumps(result, cls=DjangoJSONEncoder))
    except DrfValidationError as exc:
        raise ToolError(f"invalid arguments: {_message(exc.detail)}") from None
    except ServiceError as exc:
        raise ToolError(exc.message) from None
    finally:
        close_old_connections()


def build_server(*, stdio_principal: Callable[[], Principal] | None = None) -> MCPServer:
    """The MCP server. `stdio_principal` resolves the caller when a call carries no HTTP request."""
    server = MCPServer(SERVER_NAME, instructions=TOOLS_DESCRIPTION, log_level="WARNING")

    async def principal_of(ctx: Context) -> Principal:
        request = ctx.request_context.request
        scope = getattr(request, "scope", None) or {}
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        if principal is not None:
            return principal
        if stdio_principal is None:
            raise ToolError("not authenticated: send 'Authorization: Bearer <API key>'")
        try:
            return await sync_to_async(stdio_principal)()
        except InvalidKey as exc:
            raise ToolError(f"MEMORY_API_KEY is not usable: {exc}") from None

    async def call(ctx: Context, name: str, arguments: dict) -> dict[str, Any]:
        principal = await principal_of(ctx)
        return await sync_to_async(_run)(principal, name, {k: v for k, v in arguments.items() if v is not None})

    @server.tool(description=_DESCRIPTIONS["search_memory"])
    async def search_memory(
        query: Annotated[str, Field(description="What to look for, in natural language.")],
        ctx: Context,
        top_k: Annotated[int, Field(ge=1, le=50)] = 5,
        categories: list[CategoryName] | None = None,
    ) -> dict[str, Any]:
        return await call(ctx, "search_memory", {"query": query, "top_k": top_k, "categories": categories})

    @server.tool(description=_DESCRIPTIONS["search_conversation_traces"])
    async def search_conversation_traces(
        query: str,
        ctx: Context,
        top_k: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> dict[str, Any]:
        return await call(ctx, "search_conversation_traces", {"query": query, "top_k": top_k})

    @server.tool(description=_DESCRIPTIONS["memory_write"])
    async def memory_write(
        content: str,
        ctx: Context,
        category: CategoryName = "fact",
        importance: Annotated[float | None, Field(ge=0, le=1)] = None,
    ) -> dict[str, Any]:
        return await call(ctx, "memory_write", {"content": content, "category": category, "importance": importance})

    @server.tool(description=_DESCRIPTIONS["memory_forget"])
    async def memory_forget(query: str, ctx: Context) -> dict[str, Any]:
        return await call(ctx, "memory_forget", {"query": query})

    @server.tool(
        description="The memory block for a system prompt: how to use the memory tools, the scratchpad, the "
        "pinned core memories and (for a first message) the memories most relevant to `query`, within a "
        "token budget. Same as GET /api/v1/context/."
    )
    async def get_context(
        ctx: Context,
        query: Annotated[str, Field(max_length=4000)] = "",
        max_tokens: Annotated[int | None, Field(ge=100, le=200_000)] = None,
    ) -> dict[str, Any]:
        if "\x00" in query:
            raise ToolError("invalid arguments: query: NUL bytes are not allowed in text.")
        return await call(ctx, "get_context", {"query": query, "max_tokens": max_tokens})

    return server
