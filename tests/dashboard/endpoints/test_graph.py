"""The graph page's endpoints: unlinked memories left out and counted, the entity filter, search,
one memory's neighbourhood, and the entity list; every answer scoped to the owner."""

import uuid

import pytest

from memories.models import Entity, MemoryEntity, MemoryRelation
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _memory_ids(graph) -> set[str]:
    return {n["id"] for n in graph["nodes"] if n["kind"] == "memory"}


def _link(owner, memory, entity):
    MemoryEntity.objects.create(owner=owner, memory=memory, entity=entity)


@pytest.fixture
def web(alice):
    """lisbon <-related- alfama, alfama mentions Lisbon (entity), tram -supports-> alfama,
    ticket -related-> tram (two hops from alfama), two memories with no link at all."""
    m = {
        "alfama": MemoryFactory(owner=alice, content="Lives near the Alfama district", strength=0.9),
        "lisbon": MemoryFactory(owner=alice, content="Moved to Portugal in 2021", strength=0.8),
        "tram": MemoryFactory(owner=alice, content="Takes tram 28 to work", strength=0.7, category="workflow"),
        "ticket": MemoryFactory(owner=alice, content="Has a monthly Navegante pass", strength=0.6),
        "sister": MemoryFactory(owner=alice, content="Sister visits from Lisbon in May", strength=0.5),
        "alone1": MemoryFactory(owner=alice, content="Prefers dark roast", strength=0.4),
        "alone2": MemoryFactory(owner=alice, content="Plays chess on Sundays", strength=0.3),
        "forgotten": MemoryFactory(owner=alice, content="Old phone number", status="forgotten"),
    }
    city = Entity.objects.create(owner=alice, name="Lisbon", normalized_name="lisbon", kind="place")
    tram = Entity.objects.create(owner=alice, name="Tram 28", normalized_name="tram 28", kind="other")
    _link(alice, m["alfama"], city)
    _link(alice, m["sister"], city)
    _link(alice, m["tram"], tram)
    MemoryRelation.objects.create(owner=alice, source=m["alfama"], target=m["lisbon"], type="related")
    MemoryRelation.objects.create(owner=alice, source=m["tram"], target=m["alfama"], type="supports")
    MemoryRelation.objects.create(owner=alice, source=m["ticket"], target=m["tram"], type="related")
    # A relation to a forgotten memory does not make a memory linked.
    MemoryRelation.objects.create(owner=alice, source=m["alone1"], target=m["forgotten"], type="related")
    return {**m, "city": city, "tram_entity": tram}


def _ids(web, *names) -> set[str]:
    return {str(web[name].pk) for name in names}


def test_unlinked_memories_are_left_out_and_counted(alice_client, web):
    graph = alice_client.get("/dashboard/api/graph/").json()
    assert _memory_ids(graph) == _ids(web, "alfama", "lisbon", "tram", "ticket", "sister")
    assert (graph["memory_count"], graph["hidden_unlinked"], graph["truncated"]) == (5, 2, False)
    assert {n["label"] for n in graph["nodes"] if n["kind"] == "entity"} == {"Lisbon", "Tram 28"}

    everything = alice_client.get("/dashboard/api/graph/", {"unlinked": "true"}).json()
    assert _memory_ids(everything) == _ids(web, "alfama", "lisbon", "tram", "ticket", "sister", "alone1", "alone2")
    assert everything["hidden_unlinked"] == 0


def test_the_strongest_are_kept_under_the_limit(alice_client, web):
    graph = alice_client.get("/dashboard/api/graph/", {"limit": "2"}).json()
    assert _memory_ids(graph) == _ids(web, "alfama", "lisbon")
    assert (graph["memory_count"], graph["truncated"]) == (2, True)


def test_the_entity_filter_keeps_the_memories_that_mention_it(alice_client, web):
    graph = alice_client.get("/dashboard/api/graph/", {"entity": str(web["city"].pk)}).json()
    assert _memory_ids(graph) == _ids(web, "alfama", "sister")
    mentions = {(e["source"], e["target"]) for e in graph["edges"] if e["type"] == "mentions"}
    city = f"e{web['city'].pk}"
    assert mentions == {(str(web["alfama"].pk), city), (str(web["sister"].pk), city)}
    # the relation alfama -> lisbon leaves the filter: lisbon is not drawn, so neither is the edge
    assert [e for e in graph["edges"] if e["type"] != "mentions"] == []


def test_search_matches_memory_text_and_entity_names_in_any_case(alice_client, web):
    by_text = alice_client.get("/dashboard/api/graph/", {"q": "ALFAMA"}).json()
    assert _memory_ids(by_text) == _ids(web, "alfama")
    by_entity = alice_client.get("/dashboard/api/graph/", {"q": "tram 28"}).json()
    assert _memory_ids(by_entity) == _ids(web, "tram")
    by_both = alice_client.get("/dashboard/api/graph/", {"q": "lisbon"}).json()
    assert _memory_ids(by_both) == _ids(web, "alfama", "sister")
    unlinked = alice_client.get("/dashboard/api/graph/", {"q": "chess"}).json()
    assert (_memory_ids(unlinked), unlinked["hidden_unlinked"]) == (set(), 1)


def test_a_neighbourhood_is_the_memory_and_what_is_a_few_hops_away(alice_client, web):
    one = alice_client.get("/dashboard/api/graph/", {"focus": str(web["alfama"].pk)}).json()
    hops = {n["id"]: n["hop"] for n in one["nodes"] if n["kind"] == "memory"}
    # lisbon and tram by a relation, sister by the shared entity Lisbon
    assert hops == {
        str(web["alfama"].pk): 0,
        str(web["lisbon"].pk): 1,
        str(web["tram"].pk): 1,
        str(web["sister"].pk): 1,
    }
    assert one["focus"] == {"id": str(web["alfama"].pk), "label": "Lives near the Alfama district", "depth": 1}

    two = alice_client.get("/dashboard/api/graph/", {"focus": str(web["alfama"].pk), "depth": "2"}).json()
    hops = {n["id"]: n["hop"] for n in two["nodes"] if n["kind"] == "memory"}
    assert hops[str(web["ticket"].pk)] == 2
    assert set(hops) == _ids(web, "alfama", "lisbon", "tram", "sister", "ticket")


def test_a_neighbourhood_of_a_memory_with_no_link_is_that_memory(alice_client, web):
    graph = alice_client.get("/dashboard/api/graph/", {"focus": str(web["alone2"].pk)}).json()
    assert [(n["id"], n["hop"]) for n in graph["nodes"]] == [(str(web["alone2"].pk), 0)]
    assert graph["edges"] == []


def test_another_owners_or_a_forgotten_memory_has_no_neighbourhood(bob_client, alice_client, web):
    for client, memory in ((bob_client, web["alfama"]), (alice_client, web["forgotten"])):
        response = client.get("/dashboard/api/graph/", {"focus": str(memory.pk)})
        assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
    missing = alice_client.get("/dashboard/api/graph/", {"focus": str(uuid.uuid4())})
    assert missing.status_code == 404


def test_another_owner_sees_none_of_it(bob_client, web):
    graph = bob_client.get("/dashboard/api/graph/", {"unlinked": "true"}).json()
    assert (graph["nodes"], graph["edges"], graph["hidden_unlinked"]) == ([], [], 0)
    assert bob_client.get("/dashboard/api/graph/", {"entity": str(web["city"].pk)}).json()["nodes"] == []
    assert bob_client.get("/dashboard/api/graph/entities/").json() == {"entities": []}


def test_bad_parameters_are_400_with_a_reason(alice_client, web):
    cases = {
        "categories": "fact,nope",
        "limit": "99999",
        "depth": "9",
        "focus": "not-a-uuid",
        "entity": "x",
        "unlinked": "maybe",
    }
    for name, value in cases.items():
        response = alice_client.get("/dashboard/api/graph/", {name: value})
        body = response.json()
        assert (response.status_code, body["error"]["code"]) == (400, "invalid"), (name, body)
        assert name in body["error"]["details"], (name, body)


def test_the_entity_list_counts_mentions_by_memories_the_graph_shows(alice, alice_client, web):
    gone = Entity.objects.create(owner=alice, name="Old Nokia", normalized_name="old nokia", kind="other")
    _link(alice, web["forgotten"], gone)
    assert alice_client.get("/dashboard/api/graph/entities/").json() == {
        "entities": [
            {"id": web["city"].pk, "name": "Lisbon", "kind": "place", "mentions": 2},
            {"id": web["tram_entity"].pk, "name": "Tram 28", "kind": "other", "mentions": 1},
        ]
    }


def test_the_graph_takes_a_fixed_number_of_queries(alice_client, web, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        assert alice_client.get("/dashboard/api/graph/", {"unlinked": "true"}).status_code == 200
