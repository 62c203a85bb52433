"""Every change to a memory leaves a MemoryEvent, readable in order through /history/."""

from memories.models import ApiKey, Memory, MemoryEvent
from tests.support import assert_error, db_snapshot


def _history(api, memory_id) -> list[dict]:
    response = api.get(f"/api/v1/memories/{memory_id}/history/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == len(body["results"])
    return body["results"]


def _actor(user) -> str:
    key = ApiKey.objects.get(owner=user)
    return f"api:{user.username}:{key.prefix}"


def test_create_records_one_add_event(api, user):
    # when alice creates a memory through the API
    response = api.post("/api/v1/memories/", {"content": "Allergic to peanuts", "category": "fact"}, format="json")

    # then exactly one "add" event holds its initial state and who wrote it
    memory_id = response.json()["id"]
    events = _history(api, memory_id)
    assert [e["event_type"] for e in events] == ["add"]
    add = events[0]
    assert set(add) == {
        "id",
        "memory_id",
        "event_type",
        "before",
        "after",
        "actor",
        "reason",
        "session_id",
        "created_at",
    }
    assert add["memory_id"] == memory_id
    assert add["before"] is None
    assert add["after"]["content"] == "Allergic to peanuts"
    assert add["after"]["category"] == "fact"
    assert add["after"]["status"] == "active"
    assert add["actor"] == _actor(user)
    assert MemoryEvent.objects.filter(memory_id=memory_id).count() == 1


def test_patch_records_an_update_with_before_and_after(api, user):
    # given a memory created through the API
    memory_id = api.post("/api/v1/memories/", {"content": "Lives in Porto"}, format="json").json()["id"]

    # when alice changes its content and category
    api.patch(f"/api/v1/memories/{memory_id}/", {"content": "Lives in Lisbon", "category": "project"}, format="json")

    # then an "update" event records both states
    events = _history(api, memory_id)
    assert [e["event_type"] for e in events] == ["add", "update"]
    update = events[1]
    assert (update["before"]["content"], update["after"]["content"]) == ("Lives in Porto", "Lives in Lisbon")
    assert (update["before"]["category"], update["after"]["category"]) == ("fact", "project")
    assert update["actor"] == _actor(user)


def test_patch_that_changes_nothing_records_nothing(api, user):
    # given a memory created through the API
    memory_id = api.post("/api/v1/memories/", {"content": "Plays the cello"}, format="json").json()["id"]
    before = db_snapshot()

    # when alice "changes" its category to the value it already has
    response = api.patch(f"/api/v1/memories/{memory_id}/", {"category": "fact"}, format="json")

    # then the answer is the memory as it is, and no event or version bump is written
    assert response.status_code == 200
    assert response.json()["version"] == 1
    assert [e["event_type"] for e in _history(api, memory_id)] == ["add"]
    assert db_snapshot() == before


def test_delete_records_a_forget_event(api, user):
    # given a memory created through the API
    memory_id = api.post("/api/v1/memories/", {"content": "Works at Acme"}, format="json").json()["id"]

    # when alice deletes it
    api.delete(f"/api/v1/memories/{memory_id}/")

    # then a "forget" event records the status change
    events = _history(api, memory_id)
    assert [e["event_type"] for e in events] == ["add", "forget"]
    assert (events[1]["before"]["status"], events[1]["after"]["status"]) == ("active", "forgotten")
    assert events[1]["reason"] == "deleted through the API"


def test_deleting_twice_records_one_forget(api, user):
    # given a memory deleted once
    memory_id = api.post("/api/v1/memories/", {"content": "Has a blue car"}, format="json").json()["id"]
    api.delete(f"/api/v1/memories/{memory_id}/")
    before = db_snapshot()

    # when it is deleted again
    response = api.delete(f"/api/v1/memories/{memory_id}/")

    # then the answer is the same and nothing more is recorded
    assert response.status_code == 204
    assert db_snapshot() == before
    assert [e["event_type"] for e in _history(api, memory_id)] == ["add", "forget"]


def test_duplicate_create_reinforces_and_answers_noop(api, user):
    # given a memory created through the API
    first = api.post("/api/v1/memories/", {"content": "Prefers window seats"}, format="json")
    memory_id = first.json()["id"]

    # when the same memory is posted again
    second = api.post("/api/v1/memories/", {"content": "Prefers window seats"}, format="json")

    # then it is not duplicated: the existing memory is reinforced (200, action "noop")
    assert second.status_code == 200
    assert second.json()["action"] == "noop"
    assert second.json()["id"] == memory_id
    assert Memory.objects.filter(owner=user).count() == 1
    events = _history(api, memory_id)
    assert [e["event_type"] for e in events] == ["add", "reinforce"]
    reinforce = events[1]
    assert reinforce["before"]["strength"] == 0.6
    assert reinforce["after"]["strength"] == 0.6 + (1 - 0.6) * 0.2
    assert second.json()["strength"] == 0.6 + (1 - 0.6) * 0.2
    assert second.json()["hit_count"] == 1


def test_full_lifecycle_event_sequence(api, user):
    # given a memory taken through create, duplicate, two patches and a delete
    memory_id = api.post("/api/v1/memories/", {"content": "Runs on Sundays"}, format="json").json()["id"]
    api.post("/api/v1/memories/", {"content": "Runs on Sundays"}, format="json")
    api.patch(f"/api/v1/memories/{memory_id}/", {"importance": "low"}, format="json")
    api.patch(f"/api/v1/memories/{memory_id}/", {"pinned": True}, format="json")
    api.delete(f"/api/v1/memories/{memory_id}/")

    # when alice reads its history
    events = _history(api, memory_id)

    # then every change is there, oldest first, and the database agrees
    assert [e["event_type"] for e in events] == ["add", "reinforce", "update", "pin", "forget"]
    assert list(
        MemoryEvent.objects.filter(memory_id=memory_id).order_by("created_at", "id").values_list("event_type")
    ) == [("add",), ("reinforce",), ("update",), ("pin",), ("forget",)]
    assert events[2]["after"]["importance"] == 0.4
    assert (events[3]["before"]["pinned"], events[3]["after"]["pinned"]) == (False, True)
    assert (events[4]["before"]["pinned"], events[4]["after"]["pinned"]) == (True, False)
    assert Memory.objects.get(pk=memory_id).version == 4


def test_refused_patch_records_nothing(api, user):
    # given a memory created through the API
    memory_id = api.post("/api/v1/memories/", {"content": "Speaks Portuguese"}, format="json").json()["id"]
    before = db_snapshot()

    # when a bad patch is sent
    response = api.patch(f"/api/v1/memories/{memory_id}/", {"importance": 7}, format="json")

    # then it is refused and the history is unchanged
    assert_error(response, 400, "invalid", "importance: importance must be between 0 and 1")
    assert db_snapshot() == before
    assert [e["event_type"] for e in _history(api, memory_id)] == ["add"]
