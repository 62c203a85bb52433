"""One owner never sees or touches another's data, on every endpoint under /api/v1/.

Alice's rows all carry the word "zanzibar"; bob's key must never reveal it, must get 404 (not 403) on
her objects, and must leave every one of her rows exactly as it was.
"""

from datetime import UTC, datetime, timedelta

import pytest

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent, MemorySource
from memories.services.memories import memory_create
from sessions.models import ChatSession, Episode, ExtractionJob, Scratchpad
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory
from tests.support import assert_error, db_snapshot

MARKER = "zanzibar"


@pytest.fixture
def alice_world(user):
    """Alice's session with turns, an ended session with its episode, memories with history, a scratchpad."""
    session = ChatSessionFactory(owner=user, title=f"{MARKER} trip", turn_count=2)
    t1 = ConversationTurnFactory(
        session=session, sequence=1, content=f"I am flying to {MARKER} in May", metadata={"secret": MARKER}
    )
    ConversationTurnFactory(session=session, sequence=2, role="assistant", content=f"Enjoy {MARKER}!")
    ended = ChatSessionFactory(owner=user, status="ended", title=f"{MARKER} done")
    Episode.objects.create(
        owner=user,
        session=ended,
        summary=f"Planned the {MARKER} trip",
        started_at=datetime(2024, 1, 1, tzinfo=UTC),
        ended_at=datetime(2024, 1, 1, 1, tzinfo=UTC),
    )
    memory = memory_create(
        owner=user,
        draft=MemoryDraft(content=f"Alice is travelling to {MARKER} in May"),
        actor="test",
        source_session=session,
    )
    MemorySource.objects.create(owner=user, memory=memory, turn=t1, position=0)
    pinned = MemoryFactory(owner=user, content=f"Alice's favourite island is {MARKER}", strength=0.9, pinned=True)
    Scratchpad.objects.create(owner=user, current_focus=f"Packing for {MARKER}", active_projects=[MARKER])
    return {"session": session, "ended": ended, "memory": memory, "pinned": pinned}


def _detail_requests(world):
    s, m = world["session"].id, world["memory"].id
    return [
        ("get", f"/api/v1/sessions/{s}/", None),
        ("get", f"/api/v1/sessions/{s}/turns/", None),
        ("post", f"/api/v1/sessions/{s}/turns/", {"role": "user", "content": "bob was here"}),
        ("post", f"/api/v1/sessions/{s}/turns/", {"turns": [{"role": "user", "content": "bob was here"}]}),
        ("post", f"/api/v1/sessions/{s}/end/", None),
        ("post", f"/api/v1/sessions/{world['ended'].id}/end/", None),
        ("get", f"/api/v1/memories/{m}/", None),
        ("patch", f"/api/v1/memories/{m}/", {"content": "bob rewrote this"}),
        ("patch", f"/api/v1/memories/{m}/", {"status": "forgotten"}),
        ("delete", f"/api/v1/memories/{m}/", None),
        ("get", f"/api/v1/memories/{m}/history/", None),
        ("get", f"/api/v1/context/?query=trip&session_id={s}", None),
    ]


DETAIL_IDS = [
    "session-detail",
    "turns-list",
    "turn-post",
    "turn-bulk",
    "end-open",
    "end-ended",
    "memory-get",
    "memory-patch",
    "memory-forget-by-patch",
    "memory-delete",
    "memory-history",
    "context-with-session",
]


@pytest.mark.parametrize("index", range(len(DETAIL_IDS)), ids=DETAIL_IDS)
def test_other_owners_object_is_a_404_and_stays_unchanged(alice_world, other_api, user, index):
    # given alice's objects as they are
    method, path, body = _detail_requests(alice_world)[index]
    before = db_snapshot(owner=user)

    # when bob's key reaches one of them
    response = getattr(other_api, method)(path, body, format="json")

    # then it does not exist for him (404, never 403), nothing of hers leaks, and nothing of hers changed
    assert_error(response, 404, "not_found")
    assert MARKER not in response.content.decode()
    assert db_snapshot(owner=user) == before


@pytest.mark.parametrize("index", range(len(DETAIL_IDS)), ids=DETAIL_IDS)
def test_non_staff_owner_parameter_does_not_open_another_owners_object(alice_world, other_api, user, index):
    # given alice's objects as they are
    method, path, body = _detail_requests(alice_world)[index]
    separator = "&" if "?" in path else "?"
    before = db_snapshot(owner=user)

    # when bob (not staff) adds ?owner=alice
    response = getattr(other_api, method)(f"{path}{separator}owner=alice", body, format="json")

    # then the parameter is ignored: still a 404 and nothing changed
    assert_error(response, 404, "not_found")
    assert db_snapshot(owner=user) == before


LIST_REQUESTS = [
    ("get", "/api/v1/sessions/", None),
    ("get", "/api/v1/sessions/?status=ended", None),
    ("get", "/api/v1/memories/", None),
    ("get", "/api/v1/memories/?q=zanzibar", None),
    ("get", "/api/v1/memories/?status=active", None),
    ("get", "/api/v1/episodes/", None),
    ("get", "/api/v1/scratchpad/", None),
    ("get", "/api/v1/metrics/", None),
    ("get", "/api/v1/context/?query=zanzibar trip", None),
    ("get", "/api/v1/tools/", None),
    ("post", "/api/v1/search/", {"query": "zanzibar trip May", "scope": "memories"}),
    ("post", "/api/v1/search/", {"query": "zanzibar trip May", "scope": "turns"}),
    ("post", "/api/v1/search/", {"query": "zanzibar trip May", "scope": "all", "top_k": 100}),
    ("post", "/api/v1/tools/search_memory/", {"query": "zanzibar"}),
    ("post", "/api/v1/tools/search_conversation_traces/", {"query": "zanzibar flying"}),
    ("post", "/api/v1/tools/memory_forget/", {"query": "Alice is travelling to zanzibar in May"}),
]
LIST_IDS = [
    "sessions",
    "sessions-ended",
    "memories",
    "memories-q",
    "memories-active",
    "episodes",
    "scratchpad",
    "metrics",
    "context",
    "tools",
    "search-memories",
    "search-turns",
    "search-all",
    "tool-search_memory",
    "tool-search_conversation_traces",
    "tool-memory_forget",
]


@pytest.mark.parametrize("method, path, body", LIST_REQUESTS, ids=LIST_IDS)
@pytest.mark.parametrize("owner_param", ["", "owner=alice"], ids=["plain", "non-staff-owner-param"])
def test_lists_and_searches_never_contain_another_owners_data(
    alice_world, other_api, user, method, path, body, owner_param
):
    # given alice's data as it is
    before = db_snapshot(owner=user)
    if owner_param:
        path = f"{path}{'&' if '?' in path else '?'}{owner_param}"

    # when bob lists, searches or runs a read tool (with or without ?owner=alice)
    response = getattr(other_api, method)(path, body, format="json")

    # then he sees none of her data and none of her rows changed
    assert response.status_code == 200, response.content
    assert MARKER not in response.content.decode().lower()
    assert db_snapshot(owner=user) == before


def test_non_staff_owner_parameter_shows_the_callers_own_data(alice_world, other_api, other_user):
    # given bob's own memory and session
    mine = MemoryFactory(owner=other_user, content="Bob's bicycle is green")
    session = ChatSessionFactory(owner=other_user, title="bob's session")

    # when bob lists with ?owner=alice
    memories = other_api.get("/api/v1/memories/?owner=alice").json()
    sessions = other_api.get("/api/v1/sessions/?owner=alice").json()
    search = other_api.post("/api/v1/search/?owner=alice", {"query": "bicycle green"}, format="json").json()

    # then he sees exactly his own data
    assert [m["id"] for m in memories["results"]] == [str(mine.id)]
    assert [s["id"] for s in sessions["results"]] == [str(session.id)]
    assert [r["id"] for r in search["results"]] == [str(mine.id)]


def test_bobs_empty_views_show_zero_counts(alice_world, other_api):
    # when bob reads his lists and metrics
    sessions = other_api.get("/api/v1/sessions/").json()
    memories = other_api.get("/api/v1/memories/").json()
    episodes = other_api.get("/api/v1/episodes/").json()
    metrics = other_api.get("/api/v1/metrics/").json()
    search = other_api.post("/api/v1/search/", {"query": "zanzibar", "scope": "all"}, format="json").json()
    forget = other_api.post("/api/v1/tools/memory_forget/", {"query": "zanzibar"}, format="json").json()

    # then all of them are empty for him
    assert (sessions["count"], memories["count"], episodes["count"]) == (0, 0, 0)
    assert metrics["memories"]["total"] == 0
    assert metrics["sessions"] == {"total": 0, "open": 0}
    assert metrics["turns"] == 0
    assert search["results"] == []
    assert forget == {"forgotten": None}


@pytest.mark.parametrize("query", ["", "?owner=alice"], ids=["plain", "non-staff-owner-param"])
def test_bobs_writes_land_in_his_own_data(alice_world, other_api, user, other_user, query):
    # given alice's data as it is
    before = db_snapshot(owner=user)

    # when bob writes a memory, a memory through the tool, a session and his scratchpad
    memory_body = {"content": "Alice is travelling to zanzibar in May"}
    wrote = other_api.post(f"/api/v1/memories/{query}", memory_body, format="json")
    tool = other_api.post(f"/api/v1/tools/memory_write/{query}", {"content": "Bob likes zanzibar too"}, format="json")
    session = other_api.post(f"/api/v1/sessions/{query}", {"title": "bob's"}, format="json")
    pad = other_api.put(f"/api/v1/scratchpad/{query}", {"current_focus": "bob's focus"}, format="json")

    # then everything is his (the same content as alice's memory is a new memory of his, not a reinforce)
    assert wrote.status_code == 201
    assert wrote.json()["action"] == "add"
    assert Memory.objects.get(pk=wrote.json()["id"]).owner == other_user
    assert tool.status_code == 200
    assert tool.json()["action"] == "add"
    assert Memory.objects.get(pk=tool.json()["memory"]["id"]).owner == other_user
    assert ChatSession.objects.get(pk=session.json()["id"]).owner == other_user
    assert pad.status_code == 200
    assert Scratchpad.objects.get(owner=other_user).current_focus == "bob's focus"
    assert db_snapshot(owner=user) == before


def test_alice_data_is_complete_after_bobs_attempts(alice_world, other_api, api, user):
    # given bob has tried every write on alice's objects
    for method, path, body in _detail_requests(alice_world):
        getattr(other_api, method)(path, body, format="json")

    # when alice reads her data
    memory = api.get(f"/api/v1/memories/{alice_world['memory'].id}/").json()
    turns = api.get(f"/api/v1/sessions/{alice_world['session'].id}/turns/").json()
    history = api.get(f"/api/v1/memories/{alice_world['memory'].id}/history/").json()

    # then it is exactly as she left it
    assert memory["content"] == f"Alice is travelling to {MARKER} in May"
    assert memory["status"] == "active"
    assert turns["count"] == 2
    assert [e["event_type"] for e in history["results"]] == ["add"]
    assert ChatSession.objects.get(pk=alice_world["session"].pk).status == "open"
    assert ExtractionJob.objects.filter(owner=user).count() == 0
    assert MemoryEvent.objects.filter(owner=user).count() == 1


# --- staff -------------------------------------------------------------------------------------


def test_staff_with_owner_parameter_sees_that_owners_data(alice_world, staff_api, user):
    # given alice's data
    s, m = alice_world["session"].id, alice_world["memory"].id

    # when staff reads each endpoint with ?owner=alice
    sessions = staff_api.get("/api/v1/sessions/?owner=alice")
    session = staff_api.get(f"/api/v1/sessions/{s}/?owner=alice")
    turns = staff_api.get(f"/api/v1/sessions/{s}/turns/?owner=alice")
    memories = staff_api.get("/api/v1/memories/?owner=alice")
    memory = staff_api.get(f"/api/v1/memories/{m}/?owner=alice")
    history = staff_api.get(f"/api/v1/memories/{m}/history/?owner=alice")
    episodes = staff_api.get("/api/v1/episodes/?owner=alice")
    pad = staff_api.get("/api/v1/scratchpad/?owner=alice")
    metrics = staff_api.get("/api/v1/metrics/?owner=alice")
    context = staff_api.get(f"/api/v1/context/?owner=alice&query=trip&session_id={s}")
    search = staff_api.post("/api/v1/search/?owner=alice", {"query": "zanzibar May", "scope": "all"}, format="json")
    tool = staff_api.post("/api/v1/tools/search_memory/?owner=alice", {"query": "zanzibar"}, format="json")

    # then each shows alice's data
    assert {x["id"] for x in sessions.json()["results"]} == {str(s), str(alice_world["ended"].id)}
    assert session.json()["id"] == str(s)
    assert turns.json()["count"] == 2
    assert memories.json()["count"] == 2
    assert memory.json()["id"] == str(m)
    assert [e["event_type"] for e in history.json()["results"]] == ["add"]
    assert episodes.json()["count"] == 1
    assert pad.json()["current_focus"] == f"Packing for {MARKER}"
    assert metrics.json()["memories"]["total"] == 2
    assert metrics.json()["turns"] == 2
    assert MARKER in context.json()["system_prompt"]
    assert str(m) in {r["id"] for r in search.json()["results"]}
    assert str(m) in {r["id"] for r in tool.json()["results"]}


def test_staff_writes_with_owner_parameter_act_for_that_owner(alice_world, staff_api, staff_user, user):
    # given alice's open session
    s = alice_world["session"].id

    # when staff posts a turn, a memory and a patch with ?owner=alice
    turn = staff_api.post(
        f"/api/v1/sessions/{s}/turns/?owner=alice", {"role": "system", "content": "note"}, format="json"
    )
    memory = staff_api.post("/api/v1/memories/?owner=alice", {"content": "Staff-added fact"}, format="json")
    patch = staff_api.patch(
        f"/api/v1/memories/{alice_world['memory'].id}/?owner=alice", {"importance": 0.9}, format="json"
    )

    # then they are alice's rows
    assert turn.status_code == 201
    assert turn.json()["sequence"] == 3
    assert memory.status_code == 201
    assert Memory.objects.get(pk=memory.json()["id"]).owner == user
    assert patch.status_code == 200
    assert Memory.objects.get(pk=alice_world["memory"].pk).importance == 0.9
    assert Memory.objects.filter(owner=staff_user).count() == 0


def test_staff_without_owner_parameter_sees_only_their_own_data(alice_world, staff_api, user):
    # when staff reads without ?owner
    memories = staff_api.get("/api/v1/memories/")
    detail = staff_api.get(f"/api/v1/memories/{alice_world['memory'].id}/")
    search = staff_api.post("/api/v1/search/", {"query": "zanzibar", "scope": "all"}, format="json")

    # then only their own (empty) data shows, and alice's memory is a 404
    assert memories.json()["count"] == 0
    assert_error(detail, 404, "not_found")
    assert search.json()["results"] == []


@pytest.mark.parametrize("owner", ["nobody", "%00", "a" * 200])
def test_staff_with_an_unknown_owner_is_a_404(alice_world, staff_api, owner):
    # given the database as it is
    before = db_snapshot()

    # when staff names an owner that does not exist
    listing = staff_api.get(f"/api/v1/memories/?owner={owner}")
    write = staff_api.post(f"/api/v1/memories/?owner={owner}", {"content": "x"}, format="json")

    # then both are 404 and nothing is written
    assert_error(listing, 404, "not_found")
    assert_error(write, 404, "not_found")
    assert db_snapshot() == before


def test_context_for_another_owners_session_has_none_of_her_data(alice_world, other_api):
    # when bob asks for context about alice's topic without a session
    response = other_api.get("/api/v1/context/?query=zanzibar")

    # then his context block has nothing of hers
    assert response.status_code == 200
    body = response.json()
    assert body["memories"] == []
    assert MARKER not in body["system_prompt"]


def test_old_turns_of_another_owner_are_not_found(alice_world, other_api):
    # given an extra turn in alice's session dated long ago, with the factory's generic wording
    ConversationTurnFactory(
        session=alice_world["session"], sequence=3, created_at=datetime.now(UTC) - timedelta(days=400)
    )

    # when bob searches turns for those words
    response = other_api.post("/api/v1/search/", {"query": "turn number", "scope": "turns"}, format="json")

    # then nothing of hers is found
    assert response.status_code == 200
    assert response.json()["results"] == []
