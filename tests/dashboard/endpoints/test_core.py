"""The core memory editor's endpoints: every view with its version, saves, and 409 on a stale one."""

import json

import pytest

from memories.drafts import MemoryDraft
from memories.models import CoreMemory, Memory
from memories.services.memories import memory_create, memory_update
from sessions.models import Scratchpad

pytestmark = pytest.mark.django_db


def put(client, url, body):
    return client.put(url, json.dumps(body), content_type="application/json")


@pytest.fixture
def notes(alice):
    return {
        "tea": memory_create(
            owner=alice, draft=MemoryDraft(content="Likes green tea", category="preference"), actor="t"
        ),
        "rule": memory_create(
            owner=alice, draft=MemoryDraft(content="Never deploy on Fridays", category="rule"), actor="t"
        ),
    }


def test_the_editor_opens_with_every_view_and_its_version(alice, alice_client, notes):
    CoreMemory.objects.create(owner=alice, rolling_summary="We talked about tea.")
    Scratchpad.objects.create(owner=alice, current_focus="Release 2.0", active_projects=["site"])
    data = alice_client.get("/dashboard/api/core/").json()
    assert set(data) == {"agent", "memory_md", "learnings_md", "user_md", "rolling_summary", "scratchpad"}
    assert "Likes green tea" in data["memory_md"]["content"] and "Never deploy" not in data["memory_md"]["content"]
    assert "Never deploy on Fridays" in data["learnings_md"]["content"]
    assert "- Likes green tea" in data["user_md"]["content"]
    assert data["rolling_summary"]["content"] == "We talked about tea."
    pad = data["scratchpad"]
    assert (pad["current_focus"], pad["active_projects"], pad["recent_completions"]) == ("Release 2.0", ["site"], [])
    assert all(len(data[k]["version"]) == 32 for k in ("memory_md", "learnings_md", "user_md", "rolling_summary"))


def test_saving_memory_md_applies_the_edit_as_the_dashboard_user(alice, alice_client, notes):
    view = alice_client.get("/dashboard/api/core/").json()["memory_md"]
    response = put(
        alice_client,
        "/dashboard/api/core/memory-md/",
        {"content": view["content"].replace("Likes green tea", "Likes jasmine tea"), "version": view["version"]},
    )
    assert response.status_code == 200
    tea = Memory.objects.get(pk=notes["tea"].pk)
    assert tea.content == "Likes jasmine tea"
    assert tea.events.order_by("-id").first().actor == "dashboard:alice"
    assert response.json()["changes"]["updated"] == [{"id": str(tea.pk), "fields": ["content"]}]


def test_a_stale_memory_md_is_409_and_nothing_is_saved(alice, alice_client, notes):
    view = alice_client.get("/dashboard/api/core/").json()["memory_md"]
    memory_update(memory=notes["tea"], actor="api", content="Likes oolong tea")
    response = put(
        alice_client,
        "/dashboard/api/core/memory-md/",
        {"content": view["content"].replace("Likes green tea", "Likes jasmine tea"), "version": view["version"]},
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "stale_version" and error["message"].startswith("MEMORY.md changed since you loaded it")
    assert Memory.objects.get(pk=notes["tea"].pk).content == "Likes oolong tea"


def test_rolling_summary_saves_and_refuses_a_stale_version(alice, alice_client):
    first = alice_client.get("/dashboard/api/core/").json()["rolling_summary"]
    saved = put(
        alice_client, "/dashboard/api/core/rolling-summary/", {"content": "Summary one.", "version": first["version"]}
    ).json()
    assert CoreMemory.objects.get(owner=alice, agent="").rolling_summary == "Summary one."
    # a second save from the first version (someone else saved meanwhile) is refused
    response = put(
        alice_client, "/dashboard/api/core/rolling-summary/", {"content": "Mine.", "version": first["version"]}
    )
    assert (response.status_code, response.json()["error"]["code"]) == (409, "stale_version")
    assert CoreMemory.objects.get(owner=alice, agent="").rolling_summary == "Summary one."
    again = put(alice_client, "/dashboard/api/core/rolling-summary/", {"content": "Mine.", "version": saved["version"]})
    assert again.json()["content"] == "Mine."


def test_scratchpad_saves_its_fields_per_agent_and_refuses_a_stale_version(alice, alice_client):
    pad = alice_client.get("/dashboard/api/core/", {"agent": "bot"}).json()["scratchpad"]
    body = {"agent": "bot", "version": pad["version"], "current_focus": "Ship it", "active_projects": ["a", "b"]}
    saved = put(alice_client, "/dashboard/api/core/scratchpad/", body).json()
    stored = Scratchpad.objects.get(owner=alice, agent="bot")
    assert (stored.current_focus, stored.active_projects) == ("Ship it", ["a", "b"])
    assert not Scratchpad.objects.filter(owner=alice, agent="").exists()
    stale = put(alice_client, "/dashboard/api/core/scratchpad/", {**body, "current_focus": "Other"})
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "stale_version")
    assert Scratchpad.objects.get(owner=alice, agent="bot").current_focus == "Ship it"
    assert saved["version"] != pad["version"]


@pytest.mark.parametrize(
    ("url", "body", "status", "code"),
    [
        ("/dashboard/api/core/nope/", {"content": "", "version": "x"}, 404, "not_found"),
        ("/dashboard/api/core/memory-md/", {"content": "", "version": "x", "color": 1}, 400, "invalid"),
        ("/dashboard/api/core/memory-md/", {"content": "a\x00b", "version": "x"}, 400, "invalid"),
        ("/dashboard/api/core/scratchpad/", {"version": "x", "active_projects": "one"}, 400, "invalid"),
    ],
)
def test_bad_saves_are_4xx_with_a_reason_and_change_nothing(alice, alice_client, notes, url, body, status, code):
    before = list(Memory.objects.values_list("id", "content", "status"))
    response = put(alice_client, url, body)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert list(Memory.objects.values_list("id", "content", "status")) == before


def test_another_owner_cannot_read_or_write_alices_core_memory(alice, bob_client, notes):
    data = bob_client.get("/dashboard/api/core/", {"owner": "alice"}).json()
    assert "Likes green tea" not in json.dumps(data)
    view = data["memory_md"]
    put(bob_client, "/dashboard/api/core/memory-md/?owner=alice", {"content": "", "version": view["version"]})
    assert Memory.objects.get(pk=notes["tea"].pk).status == "active"


def test_staff_edit_the_owner_they_look_at(alice, staff_client, notes):
    view = staff_client.get("/dashboard/api/core/", {"owner": "alice"}).json()["memory_md"]
    assert "Likes green tea" in view["content"]
    response = put(
        staff_client,
        "/dashboard/api/core/memory-md/?owner=alice",
        {"content": view["content"].replace("Likes green tea", "Likes black tea"), "version": view["version"]},
    )
    assert response.status_code == 200
    tea = Memory.objects.get(pk=notes["tea"].pk)
    assert (tea.content, tea.events.order_by("-id").first().actor) == ("Likes black tea", "dashboard:root")
