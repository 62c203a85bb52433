"""MEMORY.md and learnings.md as editable views: GET {content, version}, PUT the edited text back."""

import re

import pytest

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent
from memories.services.decisions import memory_write
from memories.services.memories import memory_update
from tests.support import assert_error, db_snapshot

pytestmark = pytest.mark.django_db

CONTENTS = {
    "keep": ("User prefers concise code reviews", "preference", 0.8),
    "change": ("User's main language is Python", "fact", 0.7),
    "remove": ("User once tried Vue for a side project", "fact", 0.5),
    "lesson": ("pip fails behind the office proxy without --proxy", "error", 0.6),
}


@pytest.fixture
def memories(user):
    return {
        key: memory_write(
            owner=user, draft=MemoryDraft(content=content, category=category, importance=importance), actor="seed"
        ).memory
        for key, (content, category, importance) in CONTENTS.items()
    }


def short(memory) -> str:
    return memory.pk.hex[:8]


def block(text: str, memory) -> str:
    """The entry of `memory` in MEMORY.md text: its heading and content lines."""
    match = re.search(rf"^### \[{short(memory)}\][^\n]*\n(?:(?!###|## ).*\n?)*", text, re.MULTILINE)
    assert match, f"no entry for {short(memory)} in:\n{text}"
    return match.group(0)


def test_get_shows_the_semantic_memories_in_the_seed_002_format_with_a_version(api, memories):
    response = api.get("/api/v1/memory-md/")

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"view", "file", "agent", "content", "version", "entries", "hidden"}
    assert body["entries"] == 3 and body["hidden"] == 0
    content = body["content"]
    assert content.startswith("# Agent Memory\n")
    assert f"### [{short(memories['keep'])}] preference | 0.80 | " in content
    # the procedural layer is learnings.md's, not MEMORY.md's
    assert "pip fails" not in content
    learnings = api.get("/api/v1/learnings-md/").json()
    assert learnings["content"].startswith("# Agent Learnings\n") and "pip fails" in learnings["content"]
    # the version only changes when what is shown changes
    assert api.get("/api/v1/memory-md/").json()["version"] == body["version"]


def test_put_applies_one_change_one_removal_and_one_addition_as_the_editor(api, user, memories):
    # given MEMORY.md as loaded
    loaded = api.get("/api/v1/memory-md/").json()
    text = loaded["content"]
    events_before = {m.pk: MemoryEvent.objects.filter(memory=m).count() for m in memories.values()}

    # when one entry's content is edited, one entry is deleted and one is added
    text = text.replace("User's main language is Python", "User's main language is Rust")
    text = text.replace(block(text, memories["remove"]), "")
    text += "\n### [new] preference | 0.60 | 2026-11-01 | 0\nUser likes mechanical keyboards\n"
    response = api.put("/api/v1/memory-md/", {"content": text, "version": loaded["version"]}, format="json")

    # then exactly those three changes are applied
    assert response.status_code == 200, response.content
    body = response.json()
    added = Memory.objects.get(owner=user, content="User likes mechanical keyboards")
    assert body["changes"] == {
        "updated": [{"id": str(memories["change"].pk), "fields": ["content"]}],
        "forgotten": [str(memories["remove"].pk)],
        "added": [{"id": str(added.pk), "action": "add", "entry": "new"}],
    }
    changed, removed = (Memory.objects.get(pk=memories[k].pk) for k in ("change", "remove"))
    assert changed.content == "User's main language is Rust" and changed.status == "active"
    assert removed.status == "forgotten"
    assert (added.category, added.importance, added.source) == ("preference", pytest.approx(0.6), "user_explicit")

    # and each is in its memory's history with the editor as actor
    def new_events(memory):
        return [
            (e.event_type, e.actor, e.reason)
            for e in MemoryEvent.objects.filter(memory=memory).order_by("created_at", "id")[
                events_before.get(memory.pk, 0) :
            ]
        ]

    assert new_events(changed) == [("update", "user:alice", "edited in MEMORY.md")]
    assert new_events(removed) == [("forget", "user:alice", "removed from MEMORY.md")]
    assert new_events(added) == [("add", "user:alice", "")]
    assert MemoryEvent.objects.get(memory=changed, event_type="update").before["content"] == (
        "User's main language is Python"
    )
    # the untouched memories have no new history
    for key in ("keep", "lesson"):
        assert MemoryEvent.objects.filter(memory=memories[key]).count() == events_before[memories[key].pk]
    # and the response is the new view, ready for the next edit
    assert body["version"] == api.get("/api/v1/memory-md/").json()["version"] != loaded["version"]
    assert "User likes mechanical keyboards" in body["content"] and "Vue" not in body["content"]


def test_put_of_an_unchanged_file_changes_nothing(api, user, memories):
    loaded = api.get("/api/v1/memory-md/").json()
    before = db_snapshot(user)

    response = api.put(
        "/api/v1/memory-md/", {"content": loaded["content"], "version": loaded["version"]}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["changes"] == {"updated": [], "forgotten": [], "added": []}
    assert db_snapshot(user) == before


def test_score_category_and_section_edits_are_applied(api, user, memories):
    loaded = api.get("/api/v1/memory-md/").json()
    keep = memories["keep"]
    text = loaded["content"].replace(
        f"### [{short(keep)}] preference | 0.80 |", f"### [{short(keep)}] workflow | 0.10 |"
    )

    response = api.put("/api/v1/memory-md/", {"content": text, "version": loaded["version"]}, format="json")

    assert response.status_code == 200, response.content
    keep.refresh_from_db()
    # a score below the archive threshold puts it in the Archived section, as the file shows it
    assert (keep.category, keep.strength, keep.status) == ("workflow", pytest.approx(0.1), "archived")
    event = MemoryEvent.objects.filter(memory=keep).latest("created_at")
    assert (event.event_type, event.actor) == ("update", "user:alice")


def test_a_stale_edit_is_refused_with_409_and_nothing_changes(api, user, memories):
    # given MEMORY.md loaded, then a memory changed by someone else
    loaded = api.get("/api/v1/memory-md/").json()
    memory_update(memory=memories["keep"], actor="api:other", content="User prefers thorough code reviews")
    before = db_snapshot(user)

    # when the edit made from the old version is saved
    text = loaded["content"].replace("User's main language is Python", "User's main language is Go")
    response = api.put("/api/v1/memory-md/", {"content": text, "version": loaded["version"]}, format="json")

    # then it is refused with a clear reason and nothing is applied
    error = assert_error(response, 409, "stale_version", "changed since you loaded it", "Nothing was applied")
    assert error["details"]["your_version"] == loaded["version"]
    assert error["details"]["current_version"] == api.get("/api/v1/memory-md/").json()["version"]
    assert db_snapshot(user) == before


def test_an_entry_the_parser_cannot_read_is_refused_instead_of_forgetting_it(api, user, memories):
    loaded = api.get("/api/v1/memory-md/").json()
    before = db_snapshot(user)
    # a typo in a heading would make the entry "disappear" from the file
    broken = loaded["content"].replace(
        f"[{short(memories['keep'])}] preference | 0.80", f"[{short(memories['keep'])}] preference 0.80"
    )

    response = api.put("/api/v1/memory-md/", {"content": broken, "version": loaded["version"]}, format="json")

    error = assert_error(response, 400, "unreadable_entries", "nothing was applied")
    assert error["details"]["warnings"][0]["line"] > 0
    assert db_snapshot(user) == before


def test_learnings_md_edits_apply_to_the_procedural_layer(api, user, memories):
    loaded = api.get("/api/v1/learnings-md/").json()
    text = loaded["content"].replace("without --proxy", "without --proxy or HTTPS_PROXY")
    text += "\n### [x] rule | 0.90 | 2026-11-01 | 0\nNever force-push to main\n"

    response = api.put("/api/v1/learnings-md/", {"content": text, "version": loaded["version"]}, format="json")

    assert response.status_code == 200, response.content
    lesson = Memory.objects.get(pk=memories["lesson"].pk)
    assert lesson.content == "pip fails behind the office proxy without --proxy or HTTPS_PROXY"
    rule = Memory.objects.get(owner=user, content="Never force-push to main")
    assert rule.category == "rule"
    assert [e.event_type for e in MemoryEvent.objects.filter(memory=rule)] == ["add"]
    # MEMORY.md's memories are not part of learnings.md, so saving it forgot none of them
    assert Memory.objects.filter(owner=user, status="forgotten").count() == 0


def test_each_owner_sees_and_edits_only_their_own_file(api, other_api, user, other_user, memories):
    bob = other_api.get("/api/v1/memory-md/").json()
    assert bob["entries"] == 0 and "Python" not in bob["content"]

    # bob pasting alice's entries into his file adds his own memories, alice's are untouched
    alice_text = api.get("/api/v1/memory-md/").json()["content"]
    before = db_snapshot(user)
    response = other_api.put("/api/v1/memory-md/", {"content": alice_text, "version": bob["version"]}, format="json")

    assert response.status_code == 200
    assert {a["action"] for a in response.json()["changes"]["added"]} == {"add"}
    assert Memory.objects.filter(owner=other_user).count() == 3
    assert db_snapshot(user) == before


@pytest.mark.parametrize(
    "body",
    [
        {"content": "# Agent Memory\n"},
        {"version": "x"},
        {"content": 5, "version": "x"},
        {"content": "a", "version": "x", "extra": 1},
    ],
)
def test_bad_put_bodies_are_400(api, memories, body):
    response = api.put("/api/v1/memory-md/", body, format="json")
    assert_error(response, 400, "invalid")


def test_staff_edit_another_owners_file_as_themselves(staff_api, user, memories):
    loaded = staff_api.get("/api/v1/memory-md/?owner=alice").json()
    text = loaded["content"].replace("User's main language is Python", "User's main language is Kotlin")

    response = staff_api.put(
        "/api/v1/memory-md/?owner=alice", {"content": text, "version": loaded["version"]}, format="json"
    )

    assert response.status_code == 200
    event = MemoryEvent.objects.filter(memory=memories["change"]).latest("created_at")
    assert (event.event_type, event.actor) == ("update", "user:root")


def test_a_new_entry_needs_no_id_score_or_date(api, user, memories):
    loaded = api.get("/api/v1/memory-md/").json()
    text = loaded["content"] + "\n### preference\nUser likes night trains\n\n### [] fact | 0.9\nUser has two cats\n"

    response = api.put("/api/v1/memory-md/", {"content": text, "version": loaded["version"]}, format="json")

    assert response.status_code == 200, response.content
    assert [a["entry"] for a in response.json()["changes"]["added"]] == ["new-1", "new-2"]
    trains = Memory.objects.get(owner=user, content="User likes night trains")
    cats = Memory.objects.get(owner=user, content="User has two cats")
    assert (trains.category, trains.importance) == ("preference", pytest.approx(0.6))
    assert (cats.category, cats.importance) == ("fact", pytest.approx(0.9))
