"""The MCP server over streamable HTTP at /mcp/ of the ASGI app (daphne, as `serve` runs it)."""

import json

import anyio
import httpx2
import pytest

from memories.models import Memory
from memories.services.api_keys import api_key_create
from tests.factories import api_key_for
from tests.memories.mcp.support import TOOL_NAMES, http_client_for, payload, start_daphne

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def daphne(django_db_setup, tmp_path_factory):
    # One server for the module: it reads whatever each test committed to the test database.
    proc, base = start_daphne(tmp_path_factory.mktemp("daphne"))
    try:
        yield base
    finally:
        proc.stop()


def test_http_mcp_lists_tools_writes_finds_and_scopes_by_key(user, other_user, daphne):
    alice_key, bob_key = api_key_for(user), api_key_for(other_user)
    seen = {}

    async def scenario():
        with anyio.fail_after(120):
            async with http_client_for(daphne, alice_key) as client:
                seen["tools"] = {t.name for t in (await client.list_tools()).tools}
                seen["write"] = payload(
                    await client.call_tool("memory_write", {"content": "User's sister is called Anna"})
                )
                seen["found"] = payload(await client.call_tool("search_memory", {"query": "sister Anna"}))
            # the REST API's own scheme works too, and so does a 2025-protocol client with a session
            async with http_client_for(daphne, alice_key, scheme="Token", mode="legacy") as client:
                seen["legacy_tools"] = {t.name for t in (await client.list_tools()).tools}
                seen["again"] = payload(await client.call_tool("search_memory", {"query": "sister Anna"}))
            async with http_client_for(daphne, bob_key) as client:
                seen["bob"] = payload(await client.call_tool("search_memory", {"query": "sister Anna"}))
                seen["bob_forget"] = payload(await client.call_tool("memory_forget", {"query": "sister Anna"}))

    anyio.run(scenario)

    assert seen["tools"] == seen["legacy_tools"] == TOOL_NAMES
    memory = Memory.objects.get(pk=seen["write"]["memory"]["id"])
    assert (memory.owner, memory.category, memory.status) == (user, "fact", "active")
    assert [r["id"] for r in seen["found"]["results"]] == [str(memory.pk)]
    assert [r["id"] for r in seen["again"]["results"]] == [str(memory.pk)]
    # bob's key neither finds nor forgets alice's memory
    assert seen["bob"]["results"] == []
    assert seen["bob_forget"] == {"forgotten": None}
    memory.refresh_from_db()
    assert memory.status == "active"


def test_http_mcp_refuses_requests_without_a_valid_key(user, daphne):
    _, revoked = api_key_create(username="carol")
    from memories.models import ApiKey

    ApiKey.objects.filter(owner__username="carol").update(revoked_at="2026-01-01T00:00:00Z")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in (None, "Bearer mem_wrong", f"Bearer {revoked}", "Basic dXNlcjpwdw=="):
        response = httpx2.post(
            f"{daphne}/mcp/", json=initialize, headers={**headers, **({"Authorization": auth} if auth else {})}
        )
        assert response.status_code == 401, (auth, response.text)
        assert response.json()["error"]["code"] == "not_authenticated"
        assert response.headers["www-authenticate"].startswith("Bearer")
    # and with a valid key the same request opens a session
    response = httpx2.post(
        f"{daphne}/mcp/", json=initialize, headers={**headers, "Authorization": f"Bearer {api_key_for(user)}"}
    )
    assert response.status_code == 200, response.text
    # Django still serves everything else
    assert httpx2.get(f"{daphne}/healthz").status_code == 200


def test_a_2025_protocol_client_needs_no_session_so_any_web_worker_answers_it(user, daphne):
    # Given a 2025-protocol client that initialized
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {api_key_for(user)}",
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = httpx2.post(f"{daphne}/mcp/", json=initialize, headers=headers)

    # When its next request comes on a new connection without a session id (as one reaching another
    # worker process would be, where no session of it exists)
    listed = httpx2.post(
        f"{daphne}/mcp/",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={**headers, "MCP-Protocol-Version": "2025-06-18"},
    )

    # Then no session was handed out, and the request is answered all the same
    assert opened.status_code == 200, opened.text
    assert "mcp-session-id" not in opened.headers
    assert listed.status_code == 200, listed.text
    data = next(line for line in listed.text.splitlines() if line.startswith("data:"))[5:]
    assert {tool["name"] for tool in json.loads(data)["result"]["tools"]} == TOOL_NAMES


def test_an_agent_with_a_nul_byte_is_a_400_with_its_reason(user, daphne):
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {api_key_for(user)}",
    }
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_write", "arguments": {}}}

    response = httpx2.post(f"{daphne}/mcp/", json=call, headers=headers, params={"agent": "bot\x00"})

    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"] == "agent: NUL bytes and lone surrogates are not allowed."
    assert Memory.objects.count() == 0
