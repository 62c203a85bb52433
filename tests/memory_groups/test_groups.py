"""Memory groups (seed 002 phase 3): named groups with a hierarchy, filled by rules on every write
and by hand, re-applied when a rule changes; filters in search, context, the memory list and export."""

import json

import pytest

from memory_groups.models import MemoryGroup, MemoryGroupMember

pytestmark = pytest.mark.django_db(transaction=True)


def _memory(api, content: str, **fields) -> str:
    response = api.post("/api/v1/memories/", {"content": content, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _group(api, name: str, **fields) -> dict:
    response = api.post("/api/v1/groups/", {"name": name, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _members(group_id) -> set[str]:
    return {str(m) for m in MemoryGroupMember.objects.filter(group_id=group_id).values_list("memory_id", flat=True)}


@pytest.fixture
def scene(api, user):
    """work (projects and decisions) > clients (anything naming Acme Corp); life (the coach agent)."""
    work = _group(api, "work", rules={"categories": ["project", "decision"]})
    clients = _group(api, "clients", parent=work["id"], rules={"entities": ["Acme Corp"]})
    life = _group(api, "life", rules={"agents": ["coach"]})
    ids = {
        "launch": _memory(api, "Draft the launch plan for Project Falcon before the board meeting", category="project"),
        "acme": _memory(api, "Prepare the quarterly contract review with Acme Corp", category="fact"),
        "postgres": _memory(api, "We decided to keep PostgreSQL as the only database", category="decision"),
        "run": _memory(api, "I run 10 km every Sunday morning", category="fact", agent="coach"),
        "tea": _memory(api, "I prefer green tea over coffee in the morning", category="preference"),
    }
    return {"work": work, "clients": clients, "life": life, "ids": ids}


def test_rules_place_each_memory_when_it_is_written(scene):
    ids = scene["ids"]
    # then each group holds exactly what its rule matches, as rule memberships
    assert _members(scene["work"]["id"]) == {ids["launch"], ids["postgres"]}
    assert _members(scene["clients"]["id"]) == {ids["acme"]}
    assert _members(scene["life"]["id"]) == {ids["run"]}
    assert set(MemoryGroupMember.objects.values_list("source", flat=True)) == {"rule"}


def test_groups_list_with_their_path_rules_and_counts(api, scene):
    response = api.get("/api/v1/groups/")

    assert response.status_code == 200
    listed = {g["name"]: g for g in response.json()["results"]}
    assert [g["name"] for g in response.json()["results"]] == ["clients", "life", "work"]
    assert listed["clients"]["path"] == "work/clients"
    assert listed["clients"]["parent_id"] == scene["work"]["id"]
    assert listed["clients"]["rules"] == {"categories": [], "agents": [], "entities": ["acme corp"]}
    assert {name: g["memory_count"] for name, g in listed.items()} == {"clients": 1, "life": 1, "work": 2}


def test_search_within_a_group_includes_the_groups_below_it(api, scene):
    ids = scene["ids"]

    def found(group: str | None) -> set[str]:
        body = {"query": "the plan the review the database the morning", "top_k": 20}
        if group is not None:
            body["group"] = group
        response = api.post("/api/v1/search/", body, format="json")
        assert response.status_code == 200, response.content
        return {r["id"] for r in response.json()["results"]}

    # then a group's search finds exactly its memories and those of its subgroups
    assert found("work") == {ids["launch"], ids["postgres"], ids["acme"]}
    assert found("clients") == {ids["acme"]}
    assert found(scene["life"]["id"]) == {ids["run"]}
    assert found(None) >= set(ids.values()) - {ids["run"]}


def test_context_within_a_group_pins_and_recalls_only_its_memories(api, scene):
    ids = scene["ids"]

    work = api.get("/api/v1/context/", {"group": "work", "query": "morning plan"})
    life = api.get("/api/v1/context/", {"group": "life"})

    assert work.status_code == 200 and life.status_code == 200
    assert {m["id"] for m in work.json()["memories"]} == {ids["launch"], ids["postgres"], ids["acme"]}
    assert [m["id"] for m in life.json()["memories"]] == [ids["run"]]
    assert "green tea" not in work.json()["system_prompt"]


def test_memory_list_and_export_filter_by_group(api, scene):
    ids = scene["ids"]

    listed = api.get("/api/v1/memories/", {"group": "clients"})
    exported = api.get("/api/v1/export/", {"group": "work", "format": "jsonl"})

    assert [m["id"] for m in listed.json()["results"]] == [ids["acme"]]
    assert exported.status_code == 200
    rows = [json.loads(line) for line in exported.content.decode().splitlines()]
    assert {r["id"] for r in rows} == {ids["launch"], ids["postgres"], ids["acme"]}


def test_a_changed_rule_is_applied_again_and_manual_memberships_stay(api, scene):
    ids, work = scene["ids"], scene["work"]
    # given the tea memory put in "work" by hand
    assigned = api.post(f"/api/v1/groups/{work['id']}/assign/", {"memory_ids": [ids["tea"]]}, format="json")
    assert assigned.status_code == 200 and assigned.json()["memory_count"] == 3

    # when the rule of "work" changes to decisions only
    changed = api.patch(f"/api/v1/groups/{work['id']}/", {"rules": {"categories": ["decision"]}}, format="json")

    # then the project memory leaves (it was there by rule), the hand-placed one stays
    assert changed.status_code == 200
    assert changed.json()["rules"]["categories"] == ["decision"]
    assert _members(work["id"]) == {ids["postgres"], ids["tea"]}
    assert MemoryGroupMember.objects.get(group_id=work["id"], memory_id=ids["tea"]).source == "manual"

    # when a memory's category changes to one the rule matches, it joins on that write
    api.patch(f"/api/v1/memories/{ids['launch']}/", {"category": "decision"}, format="json")
    assert _members(work["id"]) == {ids["postgres"], ids["tea"], ids["launch"]}


def test_unassigning_keeps_what_the_rule_matches(api, scene):
    ids, work = scene["ids"], scene["work"]
    api.post(f"/api/v1/groups/{work['id']}/assign/", {"memory_ids": [ids["tea"]]}, format="json")

    response = api.post(
        f"/api/v1/groups/{work['id']}/unassign/", {"memory_ids": [ids["tea"], ids["postgres"]]}, format="json"
    )

    assert response.status_code == 200
    assert response.json() == {"removed": 1, "kept_by_rule": [ids["postgres"]]}
    assert _members(work["id"]) == {ids["launch"], ids["postgres"]}


def test_bad_group_requests_are_clear_4xx_and_change_nothing(api, other_api, scene):
    work, clients = scene["work"], scene["clients"]
    before = sorted(MemoryGroupMember.objects.values_list("group_id", "memory_id", "source"))
    other_memory = _memory(other_api, "Bob keeps bees on his roof", category="fact")

    duplicate = api.post("/api/v1/groups/", {"name": "work"}, format="json")
    cycle = api.patch(f"/api/v1/groups/{work['id']}/", {"parent": clients["id"]}, format="json")
    unknown = api.post("/api/v1/search/", {"query": "plan", "group": "hobbies"}, format="json")
    foreign = api.post(f"/api/v1/groups/{work['id']}/assign/", {"memory_ids": [other_memory]}, format="json")
    hidden = other_api.get(f"/api/v1/groups/{work['id']}/")
    bad_category = api.post("/api/v1/groups/", {"name": "x", "rules": {"categories": ["nope"]}}, format="json")

    assert (duplicate.status_code, duplicate.json()["error"]["code"]) == (409, "group_exists")
    assert (cycle.status_code, cycle.json()["error"]["code"]) == (400, "group_cycle")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "unknown_group")
    assert (foreign.status_code, foreign.json()["error"]["details"]) == (400, {"memory_ids": [other_memory]})
    assert hidden.status_code == 404
    assert bad_category.status_code == 400
    assert sorted(MemoryGroupMember.objects.values_list("group_id", "memory_id", "source")) == before
    assert MemoryGroup.objects.get(pk=work["id"]).parent_id is None
    assert MemoryGroup.objects.count() == 3


def test_deleting_a_group_deletes_the_groups_below_it_never_memories(api, scene):
    response = api.delete(f"/api/v1/groups/{scene['work']['id']}/")

    assert response.status_code == 204
    assert list(MemoryGroup.objects.values_list("name", flat=True)) == ["life"]
    assert api.get("/api/v1/memories/").json()["count"] == 5
