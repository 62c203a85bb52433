"""Knowledge updates in the merge decision (issue 11): a statement that something changed supersedes
every memory stating the old state, and values decide what a near duplicate is."""

import pytest

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent, MemoryRelation
from memories.selectors.context import context_build
from memories.selectors.retrieval import memory_search
from memories.services.decisions import memory_write
from tests.engine import event_types
from tests.factories import ChatSessionFactory, ConversationTurnFactory
from tests.memories.knowledge_cases import KEPT, UPDATES

ACTOR = "test"

# The merge decision is about meaning: the real local model, not the hashing embedder.
pytestmark = pytest.mark.slow


def write(owner, content, *, source_session=None, source_turns=(), **fields):
    draft = MemoryDraft(content=content, **fields)
    return memory_write(owner=owner, draft=draft, actor=ACTOR, source_session=source_session, source_turns=source_turns)


def statuses(owner):
    return dict(Memory.objects.filter(owner=owner).values_list("content", "status"))


def pinned_texts(owner):
    return [m["content"] for m in context_build(owner=owner)["memories"] if m["kind"] == "pinned"]


# --- the measured failure: coffee, then "quit coffee" ------------------------------------------------


@pytest.mark.django_db
def test_quitting_coffee_supersedes_every_coffee_memory_and_the_prompt_keeps_the_new_state(user, local_embedder):
    # given session 1's two coffee memories
    loves = write(user, "User loves coffee", category="preference").memory
    espresso = write(user, "User drinks a big cup of espresso every single morning", category="workflow").memory

    # when session 2 says the user does not drink coffee anymore, and drinks green tea these days
    quit = write(user, "User doesn't drink coffee anymore")
    tea = write(user, "User only drinks green tea in the morning these days", category="workflow")

    # then both coffee memories are superseded by the first statement, archived at half strength
    assert quit.action == "delete"
    assert {m.pk for m in quit.superseded} == {loves.pk, espresso.pk}
    assert statuses(user) == {
        "User loves coffee": "archived",
        "User drinks a big cup of espresso every single morning": "archived",
        "User doesn't drink coffee anymore": "active",
        "User only drinks green tea in the morning these days": "active",
    }
    assert tea.action == "add"
    loves.refresh_from_db()
    espresso.refresh_from_db()
    assert (loves.strength, espresso.strength, loves.pinned) == (0.3, 0.3, False)
    # and each carries a supersedes relation from the new memory and a history row with the reason
    assert set(MemoryRelation.objects.filter(type="supersedes").values_list("source_id", "target_id")) == {
        (quit.memory.pk, loves.pk),
        (quit.memory.pk, espresso.pk),
    }
    row = MemoryEvent.objects.get(memory=loves, event_type="supersede")
    assert row.reason == f'superseded by {quit.memory.pk}: knowledge update: "drink coffee" no longer holds'
    assert MemoryEvent.objects.get(memory=quit.memory).reason.startswith("supersedes ")
    # and the prompt pins only the current state
    assert sorted(pinned_texts(user)) == [
        "User doesn't drink coffee anymore",
        "User only drinks green tea in the morning these days",
    ]
    # and search ranks the current value above the stale one
    found = memory_search(owner=user, query="what does the user drink in the morning")
    order = [r["content"] for r in found["results"]]
    assert order.index("User only drinks green tea in the morning these days") < order.index(
        "User drinks a big cup of espresso every single morning"
    )


@pytest.mark.django_db
def test_switching_names_the_old_value_and_supersedes_it(user, local_embedder):
    # given a coffee preference
    old = write(user, "User loves coffee", category="preference").memory

    # when the user switched to green tea instead of coffee
    result = write(user, "User switched to green tea instead of coffee", category="preference")

    # then the preference is superseded
    assert (result.action, [m.pk for m in result.superseded]) == ("delete", [old.pk])
    old.refresh_from_db()
    assert old.status == "archived"


@pytest.mark.parametrize(("old", "new"), UPDATES)
@pytest.mark.django_db
def test_update_phrases_supersede_the_old_state(user, local_embedder, old, new):
    # given the old state
    before = write(user, old).memory

    # when the update is written
    result = write(user, new)

    # then the old state is superseded and archived; the new one is active
    assert result.action == "delete", (old, new)
    assert [m.pk for m in result.superseded] == [before.pk]
    assert statuses(user) == {old: "archived", new: "active"}


@pytest.mark.parametrize(("first", "second"), KEPT)
@pytest.mark.django_db
def test_unrelated_or_accumulating_statements_keep_both(user, local_embedder, first, second):
    # given a memory
    write(user, first)

    # when something that does not replace it is written
    result = write(user, second)

    # then both stay active
    assert result.action == "add"
    assert statuses(user) == {first: "active", second: "active"}
    assert not MemoryRelation.objects.filter(type="supersedes").exists()


# --- values decide what a duplicate is ---------------------------------------------------------------


@pytest.mark.django_db
def test_two_servers_that_differ_only_in_identifiers_are_two_memories(user, local_embedder):
    # given db-01's address
    first = write(user, "Server db-01 has IP address 10.0.0.11").memory

    # when db-02's address is written (cosine 0.93 to the first)
    result = write(user, "Server db-02 has IP address 10.0.0.12")

    # then it is a new memory and the first is untouched
    assert result.action == "add"
    assert result.memory.pk != first.pk
    first.refresh_from_db()
    assert (first.status, first.strength, first.hit_count) == ("active", 0.6, 0)
    assert statuses(user) == {
        "Server db-01 has IP address 10.0.0.11": "active",
        "Server db-02 has IP address 10.0.0.12": "active",
    }


@pytest.mark.django_db
def test_a_new_locker_code_supersedes_the_old_code(user, local_embedder):
    # given the old code
    old = write(user, "My locker code at the gym is 4471").memory

    # when the new code is written
    result = write(user, "My locker code at the gym is 9902")

    # then the new code is a memory of its own and the old one is superseded, not the other way round
    assert result.action == "delete"
    assert result.memory.content == "My locker code at the gym is 9902"
    assert [m.pk for m in result.superseded] == [old.pk]
    assert statuses(user) == {
        "My locker code at the gym is 4471": "archived",
        "My locker code at the gym is 9902": "active",
    }
    assert MemoryEvent.objects.get(memory=old, event_type="supersede").reason == (
        f"superseded by {result.memory.pk}: knowledge update: new value for the same thing"
    )


@pytest.mark.django_db
def test_restating_a_fact_reinforces_it_and_the_history_keeps_the_text(user, local_embedder):
    # given a fact
    memory = write(user, "User is allergic to penicillin").memory

    # when it is restated in other words (a near duplicate with the same values)
    result = write(user, "User is allergic to penicillin.")
    again = write(user, "The user is allergic to penicillin")

    # then one memory is reinforced, and every absorbed text is in its history
    assert (result.action, again.action) == ("noop", "noop")
    assert result.absorbed_by.pk == again.absorbed_by.pk == memory.pk
    assert Memory.objects.filter(owner=user).count() == 1
    assert event_types(memory) == ["add", "reinforce", "reinforce"]
    incoming = [e.after["incoming"] for e in MemoryEvent.objects.filter(memory=memory, event_type="reinforce")]
    assert incoming == ["User is allergic to penicillin.", "The user is allergic to penicillin"]


@pytest.mark.django_db
def test_a_merge_records_the_incoming_text(user, local_embedder):
    # given a habit
    memory = write(user, "User plays tennis on Mondays").memory

    # when a closer statement that carries every value of it arrives
    result = write(user, "User plays tennis on Mondays and Fridays")

    # then the memory takes the longer text and the merge row keeps what was said
    assert (result.action, result.absorbed_by.pk) == ("update", memory.pk)
    merge = MemoryEvent.objects.get(memory=memory, event_type="merge")
    assert (merge.after["content"], merge.after["incoming"]) == (
        "User plays tennis on Mondays and Fridays",
        "User plays tennis on Mondays and Fridays",
    )


@pytest.mark.django_db
def test_a_near_duplicate_of_a_superseded_statement_makes_it_current_again(user, local_embedder):
    # given coffee superseded by "quit coffee"
    write(user, "User loves coffee")
    quit = write(user, "User quit coffee").memory

    # when the user loves coffee again, in nearly the same words
    result = write(user, "User loves coffee!")

    # then the archived copy is not revived: a new memory supersedes the quit
    assert result.action == "delete"
    assert [m.pk for m in result.superseded] == [quit.pk]
    assert statuses(user) == {
        "User loves coffee": "archived",
        "User quit coffee": "archived",
        "User loves coffee!": "active",
    }


@pytest.mark.django_db
def test_a_second_statement_of_the_same_turn_is_recorded_and_a_replay_changes_nothing(user, local_embedder):
    # given a memory extracted from one turn
    session = ChatSessionFactory(owner=user)
    turn = ConversationTurnFactory(session=session, sequence=1)
    memory = write(user, "User is allergic to penicillin", source_turns=[turn]).memory

    # when the same turn also yields a near duplicate in other words
    again = write(user, "The user is allergic to penicillin", source_turns=[turn])

    # then it is absorbed with its text in the history, not skipped
    assert (again.action, again.changed, again.absorbed_by.pk) == ("noop", True, memory.pk)
    assert event_types(memory) == ["add", "reinforce"]
    # and when the extraction runs again over that turn, nothing changes
    replay = write(user, "The user is allergic to penicillin", source_turns=[turn])
    assert (replay.action, replay.changed) == ("noop", False)
    assert event_types(memory) == ["add", "reinforce"]
