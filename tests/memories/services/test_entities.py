"""Entity linking (`memories.services.entities`): every write path links a memory to the entities
its text names, so the graph links imported, edited and agent-written memories too (issue 14)."""

import pytest

from memories.drafts import MemoryDraft
from memories.models import Entity, Memory, MemoryEntity
from memories.services.decisions import memory_write
from memories.services.entities import entities_detect, memory_entities_link
from memories.services.memories import memory_create, memory_update
from memories.services.memory_md_edit import memory_md_apply, memory_md_get
from memories.services.tools import tool_execute
from memories.services.transfer import memory_import_text
from tests.engine import conversation, end_and_consolidate
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LISBON = "Lives near the Alfama district in Lisbon"


def links(memory) -> list[tuple[str, str]]:
    return sorted(
        MemoryEntity.objects.filter(memory=memory, owner_id=memory.owner_id).values_list("entity__name", "entity__kind")
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (LISBON, [("Alfama", "place"), ("Lisbon", "place")]),
        (
            "Melanie lives in Lisbon and works at Google",
            [("Melanie", "other"), ("Lisbon", "place"), ("Google", "organization")],
        ),
        ("Prefers dark mode in VS Code", [("VS Code", "tool")]),
        ("User builds the Acme project with Django", [("Django", "tool"), ("Acme", "project")]),
        ("Melanie's dog is called Rex", [("Melanie", "other"), ("Rex", "other")]),
        ("The user moved to New York in March", [("New York", "place")]),
        ("Caroline went to the LGBTQ support group", [("Caroline", "other"), ("LGBTQ", "other")]),
        ("我住在上海，在字节跳动公司工作", [("字节跳动公司", "organization"), ("上海", "place")]),
        ("喜欢看《三体》", [("三体", "other")]),
        ("Prefers green tea in the morning", []),
    ],
)
def test_entities_detect_finds_the_names_a_text_mentions(text, expected):
    assert entities_detect(text=text) == expected


def test_rest_create_links_the_entities_of_the_content(api, user):
    # when a memory is written through REST
    response = api.post("/api/v1/memories/", {"content": LISBON}, format="json")

    # then it is linked to Alfama and Lisbon, both places of its owner
    assert response.status_code == 201, response.content
    memory = Memory.objects.get(pk=response.json()["id"])
    assert links(memory) == [("Alfama", "place"), ("Lisbon", "place")]
    assert sorted(Entity.objects.filter(owner=user).values_list("name", flat=True)) == ["Alfama", "Lisbon"]


def test_rest_patch_relinks_to_the_new_content(api, user):
    # given a memory linked to Lisbon
    memory = memory_create(owner=user, draft=MemoryDraft(content="Lives in Lisbon"), actor="seed")
    assert links(memory) == [("Lisbon", "place")]

    # when its content is edited through PATCH
    response = api.patch(f"/api/v1/memories/{memory.pk}/", {"content": "Lives in Porto now"}, format="json")

    # then it is linked to Porto and no longer to Lisbon (the entity itself stays)
    assert response.status_code == 200, response.content
    assert links(memory) == [("Porto", "place")]
    assert sorted(Entity.objects.filter(owner=user).values_list("name", flat=True)) == ["Lisbon", "Porto"]


def test_an_update_that_keeps_the_text_keeps_the_links(user):
    memory = memory_create(owner=user, draft=MemoryDraft(content=LISBON), actor="seed")
    ids = sorted(MemoryEntity.objects.filter(memory=memory).values_list("pk", flat=True))

    memory_update(memory=memory, actor="test", importance=0.9)

    assert sorted(MemoryEntity.objects.filter(memory=memory).values_list("pk", flat=True)) == ids


def test_the_same_name_is_one_entity_per_owner_and_never_shared(user):
    # given two memories of alice naming Lisbon and one of bob
    bob = UserFactory()
    first = memory_create(owner=user, draft=MemoryDraft(content="Lives in Lisbon"), actor="seed")
    second = memory_create(owner=user, draft=MemoryDraft(content="Loves the pastries of Lisbon"), actor="seed")
    theirs = memory_create(owner=bob, draft=MemoryDraft(content="Moved to Lisbon"), actor="seed")

    # then alice has one Lisbon linked to both, bob his own
    alice_lisbon = Entity.objects.get(owner=user, normalized_name="lisbon")
    assert sorted(alice_lisbon.memories.values_list("pk", flat=True)) == sorted([first.pk, second.pk])
    bob_lisbon = Entity.objects.get(owner=bob, normalized_name="lisbon")
    assert list(bob_lisbon.memories.values_list("pk", flat=True)) == [theirs.pk]
    assert MemoryEntity.objects.get(memory=theirs).owner_id == bob.pk


def test_a_name_without_a_kind_joins_the_known_entity_of_that_name(user):
    # given Lisbon known as a place
    memory_create(owner=user, draft=MemoryDraft(content="Lives in Lisbon"), actor="seed")

    # when a memory names it where its kind cannot be told
    memory = memory_create(owner=user, draft=MemoryDraft(content="Lisbon has steep hills"), actor="seed")

    # then it is linked to the same place, not to a second Lisbon
    assert links(memory) == [("Lisbon", "place")]
    assert Entity.objects.filter(owner=user, normalized_name="lisbon").count() == 1


def test_extractor_hints_add_to_the_names_in_the_text(user):
    memory = memory_create(owner=user, draft=MemoryDraft(content="Lives in Lisbon"), actor="seed")

    memory_entities_link(memory=memory, hints=[("Melanie", "person"), ("lisbon", "place")])

    assert links(memory) == [("Lisbon", "place"), ("Melanie", "person")]


def test_a_name_first_seen_without_a_kind_takes_the_kind_given_later(user):
    # given Melanie linked without a kind (her name starts the sentence)
    memory = memory_create(owner=user, draft=MemoryDraft(content="Melanie lives in Lisbon"), actor="seed")
    assert links(memory) == [("Lisbon", "place"), ("Melanie", "other")]

    # when an extractor names her as a person
    memory_entities_link(memory=memory, hints=[("Melanie", "person")])

    # then the same entity is now a person: one Melanie, still linked
    assert links(memory) == [("Lisbon", "place"), ("Melanie", "person")]
    assert Entity.objects.filter(owner=user, normalized_name="melanie").count() == 1


def test_import_links_every_imported_memory(user):
    # when a JSONL file is imported
    text = '{"content": "Lives near the Alfama district in Lisbon"}\n{"content": "Works at Google"}\n'
    report = memory_import_text(owner=user, text=text, fmt="jsonl", name="m.jsonl", actor="test")

    # then both memories are linked to what they name
    assert report.added == 2
    by_content = {m.content: m for m in Memory.objects.filter(owner=user)}
    assert links(by_content[LISBON]) == [("Alfama", "place"), ("Lisbon", "place")]
    assert links(by_content["Works at Google"]) == [("Google", "organization")]


def test_memory_md_edit_links_added_and_edited_entries(user):
    # given MEMORY.md with one memory about Lisbon
    kept = memory_write(
        owner=user, draft=MemoryDraft(content="User lives in Lisbon", importance=0.8), actor="seed"
    ).memory
    state = memory_md_get(owner=user)
    assert "User lives in Lisbon" in state["content"]

    # when the entry is edited to Porto and a new entry naming Berlin is added
    edited = state["content"].replace("User lives in Lisbon", "User lives in Porto")
    edited += "\n### [new] fact | 0.70 | 2026-01-01 | 0\nUser's sister lives in Berlin\n"
    result = memory_md_apply(owner=user, content=edited, version=state["version"], actor="test")

    # then the edited memory is linked to Porto only and the added one to Berlin
    assert result["changes"]["updated"] == [{"id": str(kept.pk), "fields": ["content"]}]
    assert links(kept) == [("Porto", "place")]
    added = Memory.objects.get(pk=result["changes"]["added"][0]["id"])
    assert links(added) == [("Berlin", "place")]


def test_mcp_and_rest_tools_link_entities(user):
    result = tool_execute(owner=user, name="memory_write", arguments={"content": LISBON}, actor="mcp:test")

    assert links(Memory.objects.get(pk=result["memory"]["id"])) == [("Alfama", "place"), ("Lisbon", "place")]


def test_extraction_links_both_the_text_names_and_the_extractor_entities(user):
    # given a conversation naming a city
    session = conversation(user, "user: I live in Berlin.", "assistant: Nice.", "user: I use Neovim every day.")

    # when it is consolidated
    end_and_consolidate(session)

    # then each memory is linked to what it names
    memories = {m.content: m for m in Memory.objects.filter(owner=user)}
    assert links(memories["User lives in Berlin"]) == [("Berlin", "place")]
    assert links(memories["User uses Neovim every day"]) == [("Neovim", "tool")]
