"""POST /api/v1/memories/ and imports through the merge decision: nothing accepted is dropped, and
the response says which memory took the text in (issue 11)."""

import json

import pytest

from memories.models import Memory, MemoryEvent

# The merge decision is about meaning: the real local model, not the hashing embedder.
pytestmark = pytest.mark.slow


def post(api, content, **extra):
    response = api.post("/api/v1/memories/", {"content": content, **extra}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.status_code, response.json()


@pytest.mark.django_db
def test_db_02_is_stored_beside_db_01_not_absorbed(api, user, local_embedder):
    # given db-01's address
    _, first = post(api, "Server db-01 has IP address 10.0.0.11")

    # when db-02's address is posted
    code, second = post(api, "Server db-02 has IP address 10.0.0.12")

    # then it is created as a memory of its own, and nothing absorbed it
    assert (code, second["action"], second["absorbed_by"], second["superseded_ids"]) == (201, "add", None, [])
    assert second["id"] != first["id"]
    assert sorted(Memory.objects.filter(owner=user, status="active").values_list("content", flat=True)) == [
        "Server db-01 has IP address 10.0.0.11",
        "Server db-02 has IP address 10.0.0.12",
    ]


@pytest.mark.django_db
def test_a_new_locker_code_is_a_value_change_not_a_drop(api, user, local_embedder):
    # given the old code
    _, old = post(api, "My locker code at the gym is 4471")

    # when the new code is posted
    code, new = post(api, "My locker code at the gym is 9902")

    # then the new code is the active memory and the response names what it superseded
    assert (code, new["action"], new["content"], new["status"]) == (
        201,
        "delete",
        "My locker code at the gym is 9902",
        "active",
    )
    assert (new["superseded_ids"], new["previous_id"], new["absorbed_by"]) == ([old["id"]], old["id"], None)
    assert Memory.objects.get(pk=old["id"]).status == "archived"
    # and the context pins the new code only
    context = api.get("/api/v1/context/").json()
    assert [m["content"] for m in context["memories"]] == ["My locker code at the gym is 9902"]


@pytest.mark.django_db
def test_a_restated_fact_answers_which_memory_absorbed_it(api, user, local_embedder):
    # given a fact
    _, first = post(api, "User is allergic to penicillin")

    # when it is said again
    code, again = post(api, "The user is allergic to penicillin")

    # then the response is a noop naming the memory that absorbed the text, and its history keeps the text
    assert (code, again["action"], again["absorbed_by"], again["id"]) == (200, "noop", first["id"], first["id"])
    assert Memory.objects.filter(owner=user).count() == 1
    history = api.get(f"/api/v1/memories/{first['id']}/history/").json()
    rows = history["results"] if isinstance(history, dict) else history
    assert [(r["event_type"], (r["after"] or {}).get("incoming")) for r in rows] == [
        ("add", None),
        ("reinforce", "The user is allergic to penicillin"),
    ]


def _distinct_facts(n: int) -> list[str]:
    """n facts that differ in identifiers and numbers, phrased four ways (what a CMDB or a notebook
    export looks like: near-identical sentences, each about a different thing)."""
    templates = [
        "Server web-{i:04d} has IP address 10.{a}.{b}.{c}",
        "Employee E{i:04d} sits at desk {d} on floor {f}",
        "Invoice INV-{i:05d} was paid on 2024-{m:02d}-{day:02d} for {amount} EUR",
        "Ticket OPS-{i} is assigned to queue {q} with priority P{p}",
    ]
    return [
        templates[i % 4].format(
            i=i,
            a=i // 256,
            b=i % 256,
            c=i % 7 + 1,
            d=100 + i,
            f=i % 12,
            m=i % 12 + 1,
            day=i % 28 + 1,
            amount=50 + i,
            q=i % 9,
            p=i % 4,
        )
        for i in range(n)
    ]


@pytest.mark.django_db
def test_importing_a_thousand_distinct_jsonl_facts_gives_a_thousand_memories(api, user, local_embedder, settings):
    # given 1,000 distinct facts as JSONL, imported in one request
    settings.MEMORY_IMPORT_SYNC_MAX_BYTES = 10_000_000
    facts = _distinct_facts(1000)
    assert len(set(facts)) == 1000
    text = "\n".join(json.dumps({"content": fact, "category": "fact"}) for fact in facts)

    # when they are imported
    response = api.post("/api/v1/import/", {"content": text, "name": "facts.jsonl"}, format="json")

    # then every fact is an active memory of its own
    assert response.status_code in (200, 201), response.content
    assert Memory.objects.filter(owner=user).count() == 1000
    assert set(Memory.objects.filter(owner=user, status="active").values_list("content", flat=True)) == set(facts)
    assert not MemoryEvent.objects.filter(owner=user, event_type__in=["reinforce", "merge", "supersede"]).exists()
