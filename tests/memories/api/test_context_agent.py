"""GET /api/v1/context/ and POST /api/v1/search/ read `agent` the same way (issue 11): absent means every
agent namespace of the owner, present (the empty string included) means that namespace only."""

import pytest

from tests.factories import MemoryFactory, UserFactory


@pytest.fixture
def namespaces(user):
    """A strong (pinned) memory in the default namespace and in two agents', and another owner's."""
    MemoryFactory(owner=UserFactory(username="bob"), content="Bob keeps his boat in Kiel", strength=0.99)
    return {
        "": MemoryFactory(owner=user, agent="", content="Alice keeps her boat in Lisbon", strength=0.9),
        "helper": MemoryFactory(owner=user, agent="helper", content="Alice's boat is named Biscuit", strength=0.8),
        "planner": MemoryFactory(owner=user, agent="planner", content="Alice sails her boat on Sundays", strength=0.7),
    }


def _context_ids(api, query: str = "") -> list[str]:
    response = api.get(f"/api/v1/context/{query}")
    assert response.status_code == 200, response.content
    return [m["id"] for m in response.json()["memories"]]


def _search_ids(api, **body) -> set[str]:
    response = api.post("/api/v1/search/", {"query": "boat", "top_k": 50, **body}, format="json")
    assert response.status_code == 200, response.content
    return {r["id"] for r in response.json()["results"]}


def test_context_without_agent_pins_every_agents_memories_as_search_finds_them(api, namespaces):
    # when alice asks for her context and searches, neither naming an agent
    pinned = _context_ids(api)
    found = _search_ids(api)

    # then the context pins the memories of all three of her namespaces, strongest first, and search
    # finds exactly the same ones (never bob's)
    expected = [str(namespaces[name].id) for name in ("", "helper", "planner")]
    assert pinned == expected
    assert found == set(expected)


@pytest.mark.parametrize("agent", ["helper", "planner", ""])
def test_context_with_an_agent_holds_that_namespace_only_as_search_does(api, namespaces, agent):
    # when alice asks for one namespace's context and searches that namespace
    pinned = _context_ids(api, f"?agent={agent}")
    found = _search_ids(api, agent=agent)

    # then both hold that namespace's memory only
    assert pinned == [str(namespaces[agent].id)]
    assert found == {str(namespaces[agent].id)}


def test_context_recall_without_agent_searches_every_namespace(api, user):
    # given weak (unpinned) memories about the dentist under two agents, and unrelated ones
    helper = MemoryFactory(owner=user, agent="helper", content="Dentist appointment on Friday", strength=0.3)
    default = MemoryFactory(owner=user, agent="", content="The dentist is on Rua Augusta", strength=0.3)
    MemoryFactory(owner=user, agent="planner", content="Owns a red bicycle", strength=0.3)
    MemoryFactory(owner=user, agent="helper", content="Plays chess on Tuesdays", strength=0.3)

    # when alice asks for context about the dentist without naming an agent
    response = api.get("/api/v1/context/?query=dentist")

    # then the two best recalled memories are the dentist ones of both namespaces
    assert response.status_code == 200
    recalled = [m["id"] for m in response.json()["memories"] if m["kind"] == "recalled"]
    assert set(recalled[:2]) == {str(helper.id), str(default.id)}
    # and helper's context recalls from its own namespace only, the dentist memory first
    response = api.get("/api/v1/context/?query=dentist&agent=helper")
    recalled = [m["id"] for m in response.json()["memories"] if m["kind"] == "recalled"]
    assert recalled[0] == str(helper.id)
    assert str(default.id) not in recalled
