"""`manage.py mcp`: the memory tools over MCP stdio, driven by the SDK's client."""

import subprocess
import time

import anyio
import pytest

from accesslog.models import QueryLog
from memories.models import Memory, MemoryEvent
from tests.factories import MemoryFactory, api_key_for
from tests.memories.mcp.support import PYTHON, ROOT, TOOL_NAMES, child_env, payload, stdio_client_for

pytestmark = pytest.mark.slow


@pytest.mark.django_db(transaction=True)
def test_stdio_server_lists_tools_writes_finds_and_scopes_by_key(user, other_user, tmp_path):
    alice_key, bob_key = api_key_for(user), api_key_for(other_user)
    seen = {}

    async def scenario():
        with anyio.fail_after(240):
            await alice_session()
            await bob_session()

    async def alice_session():
        with (tmp_path / "alice.log").open("w") as errlog:
            async with stdio_client_for(alice_key, errlog) as client:
                seen["tools"] = {t.name for t in (await client.list_tools()).tools}
                seen["write"] = payload(
                    await client.call_tool(
                        "memory_write", {"content": "User prefers oolong tea", "category": "preference"}
                    )
                )
                seen["found"] = payload(await client.call_tool("search_memory", {"query": "oolong tea"}))
                seen["context"] = payload(await client.call_tool("get_context", {"query": "what tea?"}))
                seen["bad"] = await client.call_tool("memory_write", {"content": "x", "category": "nonsense"})

    async def bob_session():
        with (tmp_path / "bob.log").open("w") as errlog:
            async with stdio_client_for(bob_key, errlog) as client:
                seen["bob"] = payload(await client.call_tool("search_memory", {"query": "oolong tea"}))

    anyio.run(scenario)

    # the five tools are offered
    assert seen["tools"] == TOOL_NAMES
    # a write goes through the merge decision as alice, by this key
    assert seen["write"]["action"] == "add"
    memory = Memory.objects.get(pk=seen["write"]["memory"]["id"])
    assert (memory.owner, memory.content, memory.category, memory.source) == (
        user,
        "User prefers oolong tea",
        "preference",
        "agent_write",
    )
    assert MemoryEvent.objects.get(memory=memory).actor.startswith("mcp:alice:mem_")
    # alice finds it, and her context offers it
    assert [r["id"] for r in seen["found"]["results"]] == [str(memory.pk)]
    assert "User prefers oolong tea" in seen["context"]["system_prompt"]
    # invalid arguments are a tool error the model can read, not a crash
    assert seen["bad"].is_error
    # bob's key finds nothing of alice's
    assert seen["bob"]["results"] == []


@pytest.mark.django_db(transaction=True)
def test_stdio_server_writes_what_its_searches_left_buffered_when_the_client_goes(user, tmp_path):
    # given a memory, and a server whose searches' access counts and log wait an hour for company
    tea = MemoryFactory(owner=user, content="User prefers oolong tea")
    key, found = api_key_for(user), {}
    batches_wait = {"ACCESS_COUNT_FLUSH_SECONDS": "3600", "ACCESS_LOG_FLUSH_SECONDS": "3600"}

    async def session():
        with anyio.fail_after(240), (tmp_path / "server.log").open("w") as errlog:
            async with stdio_client_for(key, errlog, **batches_wait) as c:
                found["search"] = payload(await c.call_tool("search_memory", {"query": "oolong tea"}))

    # when one search finds it and the client then closes the server's stdin
    anyio.run(session)
    deadline = time.monotonic() + 30
    while Memory.objects.get(pk=tea.pk).access_count == 0 and time.monotonic() < deadline:
        time.sleep(0.1)

    # then the server wrote the search's use of it and its log line before exiting
    assert [r["id"] for r in found["search"]["results"]] == [str(tea.pk)]
    assert Memory.objects.get(pk=tea.pk).access_count == 1
    assert list(QueryLog.objects.values_list("owner_id", "kind", "query")) == [(user.pk, "tool", "oolong tea")]


@pytest.mark.parametrize(
    ("key", "message"),
    [("", "MEMORY_API_KEY is not set"), ("mem_not-a-real-key", "MEMORY_API_KEY is not a valid API key")],
)
def test_stdio_server_refuses_to_start_without_a_valid_key(key, message, db):
    done = subprocess.run(
        [str(PYTHON), "manage.py", "mcp"],
        cwd=ROOT,
        env=child_env(MEMORY_API_KEY=key),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert message in done.stderr
    assert done.stdout == ""
