"""The hot-memory cache (seed 000 §6.2): GET /context/ served from it, every change visible at once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hotcache import services
from memories.models import Memory
from memory_project.background import background_drain
from tests.factories import MemoryFactory

QUERY = {"query": "what do I drink in the morning"}


def _context(api, params=QUERY) -> dict:
    response = api.get("/api/v1/context/", params)
    assert response.status_code == 200, response.content
    return response.json()


def _texts(body: dict) -> list[str]:
    return sorted(m["content"] for m in body["memories"])


def _scene(user) -> dict[str, Memory]:
    return {
        "tea": MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9),
        "bike": MemoryFactory(owner=user, content="Rides a red bike to work", strength=0.9),
    }


# Each write path that emits memory.changed: (change, what the next context must show instead).
def _add(api, user, scene):
    created = api.post("/api/v1/memories/", {"content": "Drinks oat milk in the morning"}, format="json")
    assert created.status_code == 201, created.content
    return "Drinks oat milk in the morning", True


def _update(api, user, scene):
    patched = api.patch(
        f"/api/v1/memories/{scene['tea'].pk}/", {"content": "Drinks black tea every morning"}, format="json"
    )
    assert patched.status_code == 200, patched.content
    return "Drinks green tea every morning", False


def _forget(api, user, scene):
    assert api.delete(f"/api/v1/memories/{scene['tea'].pk}/").status_code == 204
    return "Drinks green tea every morning", False


def _purge(api, user, scene):
    assert api.delete(f"/api/v1/memories/{scene['tea'].pk}/?purge=true").status_code == 204
    return "Drinks green tea every morning", False


def _tool_forget(api, user, scene):
    done = api.post("/api/v1/tools/memory_forget/", {"query": "red bike to work"}, format="json")
    assert done.status_code == 200, done.content
    return "Rides a red bike to work", False


def _tool_write(api, user, scene):
    done = api.post("/api/v1/tools/memory_write/", {"content": "Drinks coffee on Mondays"}, format="json")
    assert done.status_code == 200, done.content
    return "Drinks coffee on Mondays", True


def _memory_md_edit(api, user, scene):
    view = api.get("/api/v1/memory-md/").json()
    edited = view["content"] + "\n### preference\nDrinks mint tea in the morning\n"
    applied = api.put("/api/v1/memory-md/", {"content": edited, "version": view["version"]}, format="json")
    assert applied.status_code == 200, applied.content
    return "Drinks mint tea in the morning", True


def _import(api, user, scene):
    heading = "### [a1b2c3] preference | 0.80 | 2026-01-10 | 2"
    content = f"# Agent Memory\n\n## Active Memories\n\n{heading}\nDrinks jasmine tea in the morning\n"
    imported = api.post("/api/v1/import/", {"content": content, "format": "memory-md"}, format="json")
    assert imported.status_code in (200, 201), imported.content
    return "Drinks jasmine tea in the morning", True


WRITE_PATHS = [_add, _update, _forget, _purge, _tool_forget, _tool_write, _memory_md_edit, _import]


@pytest.mark.parametrize("write", WRITE_PATHS, ids=[w.__name__.strip("_") for w in WRITE_PATHS])
def test_a_change_is_visible_in_the_next_context_call(api, user, write):
    # given a context served from the hot cache
    scene = _scene(user)
    first = _context(api)
    second = _context(api)
    assert (first["cached"], second["cached"]) == (False, True)
    assert second["system_prompt"] == first["system_prompt"]

    # when the owner's memories change through this write path
    text, present = write(api, user, scene)

    # then the next context call is built anew and shows the change
    after = _context(api)
    assert after["cached"] is False
    assert (text in after["system_prompt"]) is present
    # and the call after it is served from the cache again, identical
    again = _context(api)
    assert again["cached"] is True
    assert again["system_prompt"] == after["system_prompt"]


@pytest.mark.django_db(transaction=True)
def test_memories_extracted_at_a_session_end_are_in_the_next_context_call(api, user):
    # given a cached context and a session in which the user asks to be remembered something
    _scene(user)
    assert _context(api, {})["cached"] is False
    assert _context(api, {})["cached"] is True
    session = api.post("/api/v1/sessions/", {"title": "chat"}, format="json").json()["id"]
    turn = {"role": "user", "content": "Remember that my sister Ana lives in Porto."}
    assert api.post(f"/api/v1/sessions/{session}/turns/", turn, format="json").status_code == 201

    # when the session ends (the extraction writes its memories)
    assert api.post(f"/api/v1/sessions/{session}/end/").status_code == 202

    # then the next context call is built anew with the extracted memory
    extracted = list(Memory.objects.filter(owner=user, status="active").values_list("content", flat=True))
    assert any("Porto" in text for text in extracted), extracted
    after = _context(api, {"query": "where does my sister live"})
    assert after["cached"] is False
    assert any("Porto" in m["content"] for m in after["memories"])


def test_a_lifecycle_run_that_fades_a_pinned_memory_drops_it_from_the_next_context_call(api, user):
    # given a pinned memory not reinforced for two years, its context cached
    old = timezone.now() - timedelta(days=730)
    faded = MemoryFactory(
        owner=user,
        content="Liked a band in school",
        strength=0.9,
        importance=0.1,
        observed_at=old,
        last_reinforced_at=old,
    )
    assert str(faded.pk) in [m["id"] for m in _context(api, {})["memories"]]
    assert _context(api, {})["cached"] is True

    # when the lifecycle decays it
    assert api.post("/api/v1/lifecycle/run/", {}, format="json").status_code in (200, 201, 202)

    # then the next context call no longer pins it
    faded.refresh_from_db()
    assert faded.strength < 0.5
    after = _context(api, {})
    assert after["cached"] is False
    assert str(faded.pk) not in [m["id"] for m in after["memories"]]


def test_a_cached_block_ends_when_one_of_its_memories_expires(api, user):
    # given a pinned memory that expires in a minute, its context cached
    expiring = MemoryFactory(
        owner=user, content="Parked on level 3", strength=0.9, expires_at=timezone.now() + timedelta(minutes=1)
    )
    assert _context(api, {})["memories"][0]["id"] == str(expiring.pk)

    # when it has expired (no write, no event)
    Memory.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    # (the cached entry's end was taken when it was stored: move it into the past as time would)
    with services._lock:
        for key, (deadline, value) in list(services._entries.items()):
            services._entries[key] = (deadline, {**value, "valid_until": value["valid_until"] - 61})

    # then the next context call is built anew without it
    after = _context(api, {})
    assert after["cached"] is False
    assert after["memories"] == []


@pytest.mark.django_db(transaction=True)
def test_a_hit_still_counts_the_recalled_memories_as_used(api, user):
    # given a weak memory recalled by a query
    weak = MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.3)

    # when the same context is asked for twice (the second from the cache)
    assert _context(api)["cached"] is False
    assert _context(api)["cached"] is True
    background_drain()

    # then both calls counted it as used, as two searches would have
    weak.refresh_from_db()
    assert weak.access_count == 2


def test_another_owner_never_reads_an_owners_entry(api, other_api, user, other_user):
    # given Alice's context for a query, cached
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)
    assert _context(api)["cached"] is False

    # when Bob asks for the same query
    bob = _context(other_api)

    # then his block is built from his (empty) memories, not served from Alice's entry
    assert (bob["cached"], bob["memories"]) == (False, [])


def test_hit_rate_in_metrics_is_per_owner_and_exact(api, other_api, user, other_user):
    # given Alice asking for the same context three times, then after a change once more
    _scene(user)
    for _ in range(3):
        _context(api)
    api.post("/api/v1/memories/", {"content": "Drinks oat milk in the morning"}, format="json")
    _context(api)
    # and Bob asking once
    _context(other_api, {})

    # when each reads their metrics
    alice = api.get("/api/v1/metrics/").json()["context_cache"]
    bob = other_api.get("/api/v1/metrics/").json()["context_cache"]

    # then Alice's are two hits in four lookups, Bob's one miss: none of Alice's use is in his
    assert alice == {"store": "process", "hits": 2, "misses": 2, "hit_rate": 0.5}
    assert bob == {"store": "process", "hits": 0, "misses": 1, "hit_rate": 0.0}


def test_the_cache_can_be_turned_off(api, user, settings):
    # given the cache turned off
    settings.HOT_CACHE_ENABLED = False
    _scene(user)

    # when the context is asked for twice
    first, second = _context(api), _context(api)

    # then both are built from the tables and nothing is counted
    assert (first["cached"], second["cached"]) == (False, False)
    assert api.get("/api/v1/metrics/").json()["context_cache"]["hits"] == 0


def test_erasing_an_agent_drops_its_memories_from_the_next_context_call(api, user):
    # given a cached context over every namespace, with a memory of the coach agent
    MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.9)
    MemoryFactory(owner=user, content="Runs 10 km every Sunday", strength=0.9, agent="coach")
    assert len(_context(api, {})["memories"]) == 2
    assert _context(api, {})["cached"] is True

    # when the coach's namespace is erased (no memory.changed: an erasure of its own)
    assert api.delete(f"/api/v1/data/?confirm={user.username}&agent=coach").status_code == 200

    # then the next context call is built anew without the coach's memory
    after = _context(api, {})
    assert after["cached"] is False
    assert _texts(after) == ["Drinks green tea every morning"]
