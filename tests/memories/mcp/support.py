"""Child processes for the MCP tests: `manage.py mcp` over stdio and daphne serving /mcp/, both on the
pytest test database (so the tests that use them need `django_db(transaction=True)`)."""

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.harness import ROOT, Proc, start_web
from tests.integration.harness import child_env as harness_child_env

PYTHON = Path(sys.executable)
TOOL_NAMES = {"search_memory", "search_conversation_traces", "memory_write", "memory_forget", "get_context"}


def child_env(**extra) -> dict[str, str]:
    # No broker (REDIS_URL) and no key but the one a test passes.
    return harness_child_env(
        drop=("OPENAI_", "LLM_", "REDIS_URL", "DATABASE_URL", "EMBEDDED_PG", "MEMORY_API_KEY"),
        log_level="WARNING",
        **extra,
    )


def start_daphne(log_dir: Path) -> tuple[Proc, str]:
    # The integration harness's web server on this module's child environment (no broker), with the 90 s
    # to answer /healthz that these tests have always allowed.
    return start_web(child_env(), log_dir, timeout=90)


def stdio_client_for(key: str, errlog, **env):
    params = StdioServerParameters(
        command=str(PYTHON), args=["manage.py", "mcp"], env=child_env(MEMORY_API_KEY=key, **env), cwd=str(ROOT)
    )
    return Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60)


@asynccontextmanager
async def http_client_for(base: str, key: str | None, scheme: str = "Bearer", mode: str = "auto"):
    """`mode="legacy"` uses the initialize handshake and a stateful session (clients of 2025's protocol)."""
    headers = {"Authorization": f"{scheme} {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        transport = streamable_http_client(f"{base}/mcp/", http_client=http)
        async with Client(transport, read_timeout_seconds=60, mode=mode) as client:
            yield client


def payload(result) -> dict:
    """A tool call's result as the JSON object it returned."""
    assert not result.is_error, result.content
    if isinstance(result.structured_content, dict):
        return result.structured_content
    return json.loads(result.content[0].text)
