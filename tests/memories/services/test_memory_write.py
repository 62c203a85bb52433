"""The merge decision (`memory_write`): ADD, UPDATE (merge), DELETE (supersede) and NOOP (reinforce).

Seed 002 §7.3: initial strength by importance, reinforcement s + (1 − s) × 0.2 with hit count and
time, convergence below 1.0; DESIGN §4: a contradiction supersedes the old memory and halves it.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent, MemoryRelation, MemorySource
from memories.selectors.context import context_build
from memories.services.decisions import memory_write
from tests.engine import capture_events, event_types, of_type
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory, UserFactory
from tests.support import db_snapshot

ACTOR = "test"


def write(owner, content, *, source_session=None, source_turns=(), **fields):
    draft = MemoryDraft(content=content, **fields)
    return memory_write(owner=owner, draft=draft, actor=ACTOR, source_session=source_session, source_turns=source_turns)


def tea(owner, **kwargs):
    return write(
        owner,
        "User prefers tea in the morning",
        category="preference",
        subject="drink preference",
        predicate="prefers",
        structured_data={"value": "tea in the morning"},
        **kwargs,
    )


def coffee(owner, **kwargs):
    return write(
        owner,
        "User prefers coffee in the morning",
        category="preference",
        subject="drink preference",
        predicate="prefers",
        structured_data={"value": "coffee in the morning"},
        **kwargs,
    )


# --- ADD ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("importance", "strength"),
    [("high", 0.8), ("medium", 0.6), ("low", 0.4), (None, 0.6), (0.9, 0.9), (0.0, 0.0)],
)
def test_a_new_memory_starts_at_its_importance(user, importance, strength):
    # given no memories

    # when one is written with that importance
    result = write(user, "User's favourite band is Radiohead", category="preference", importance=importance)

    # then it is added, active, with strength = importance and a single add event
    memory = Memory.objects.get()
    assert result.action == "add"
    assert result.memory.pk == memory.pk
    assert (memory.strength, memory.base_strength, memory.importance) == (strength, strength, strength)
    assert (memory.status, memory.hit_count, memory.category, memory.source) == (
        "active",
        0,
        "preference",
        "agent_write",
    )
    assert memory.last_reinforced_at == memory.observed_at
    assert event_types(memory) == ["add"]
    event = MemoryEvent.objects.get(memory=memory)
    assert (event.actor, event.before, event.after["strength"]) == (ACTOR, None, strength)


def test_a_new_memory_records_its_source_turns_in_order(user):
    # given a session with three turns
    session = ChatSessionFactory(owner=user)
    first, second, third = (ConversationTurnFactory(session=session, sequence=i) for i in (1, 2, 3))

    # when a memory is written from the third and first turns
    result = write(user, "User has a cat named Miso", source_session=session, source_turns=[third, first])

    # then its provenance is those two turns, most relevant first, and the session
    links = list(MemorySource.objects.filter(memory=result.memory).values_list("turn_id", "position"))
    assert links == [(third.pk, 0), (first.pk, 1)]
    assert result.memory.source_session_id == session.pk
    assert second.pk not in {turn for turn, _ in links}


def test_an_unrelated_memory_is_added_without_relations(user):
    # given a memory about something else
    existing = MemoryFactory(owner=user, content="User works as a nurse in Lisbon")

    # when a memory about a different topic is written
    result = write(user, "Favourite programming language is Haskell")

    # then it is a second memory, linked to nothing, and the first is untouched
    assert result.action == "add"
    assert Memory.objects.filter(owner=user).count() == 2
    assert MemoryRelation.objects.count() == 0
    existing.refresh_from_db()
    assert (existing.strength, existing.hit_count, existing.status) == (0.6, 0, "active")


def test_a_close_memory_of_another_category_is_added_and_linked_as_related(user):
    # given a fact about tennis
    existing = write(user, "User plays tennis on Mondays", category="fact").memory

    # when a close statement arrives as a todo (similar, but not the same kind of memory)
    result = write(user, "User plays tennis on Mondays and Fridays", category="todo")

    # then it is added, not merged, with one `related` relation to the fact (weight 0.5)
    assert result.action == "add"
    assert result.related == [existing]
    relation = MemoryRelation.objects.get()
    assert (relation.source_id, relation.target_id, relation.type, relation.weight) == (
        result.memory.pk,
        existing.pk,
        "related",
        0.5,
    )
    existing.refresh_from_db()
    assert (existing.content, existing.strength, existing.version) == ("User plays tennis on Mondays", 0.6, 1)


def test_the_same_content_of_another_owner_or_agent_is_a_separate_memory(user):
    # given alice's memory
    bob = UserFactory(username="bob")
    alices = write(user, "Allergic to peanuts", importance="high").memory

    # when bob writes the same sentence, and alice's "helper" agent does too
    bobs = write(bob, "Allergic to peanuts", importance="high")
    helpers = write(user, "Allergic to peanuts", importance="high", agent="helper")

    # then both are new memories and alice's own is not reinforced
    assert (bobs.action, helpers.action) == ("add", "add")
    assert (bobs.memory.owner, helpers.memory.agent) == (bob, "helper")
    alices.refresh_from_db()
    assert (alices.strength, alices.hit_count) == (0.8, 0)
    assert event_types(alices) == ["add"]


def test_a_forgotten_memory_said_again_is_added_anew(user):
    # given a memory the user had forgotten
    forgotten = MemoryFactory(owner=user, content="Lives in Madrid", status="forgotten", strength=0.6)

    # when the same sentence is written again
    result = write(user, "Lives in Madrid")

    # then a new active memory is added and the forgotten one stays forgotten and unchanged
    assert result.action == "add"
    assert result.memory.pk != forgotten.pk
    assert result.memory.status == "active"
    forgotten.refresh_from_db()
    assert (forgotten.status, forgotten.strength, forgotten.hit_count) == ("forgotten", 0.6, 0)


# --- NOOP (reinforce) ---------------------------------------------------------------------------


def test_saying_it_again_reinforces_0_6_to_0_68(user):
    # given a medium memory last reinforced two days ago
    two_days_ago = timezone.now() - timedelta(days=2)
    memory = write(user, "User prefers green tea", category="preference", observed_at=two_days_ago).memory
    assert memory.last_reinforced_at == two_days_ago

    # when the same memory is written again
    before = timezone.now()
    result = write(user, "User prefers green tea", category="preference")

    # then it is a NOOP on the same row: 0.6 + (1 − 0.6) × 0.2 = 0.68, one more hit, reinforced now
    assert result.action == "noop"
    assert result.memory.pk == memory.pk
    memory.refresh_from_db()
    assert memory.strength == pytest.approx(0.68, abs=1e-12)
    assert memory.base_strength == pytest.approx(0.68, abs=1e-12)
    assert memory.hit_count == 1
    assert memory.last_reinforced_at >= before
    assert Memory.objects.filter(owner=user).count() == 1
    assert event_types(memory) == ["add", "reinforce"]
    reinforce = MemoryEvent.objects.get(memory=memory, event_type="reinforce")
    assert reinforce.before["strength"] == 0.6
    assert reinforce.after["strength"] == pytest.approx(0.68, abs=1e-12)
    assert reinforce.reason == "same content"


def test_repeated_hits_converge_towards_one_without_reaching_it(user):
    # given a medium memory
    memory = write(user, "Runs 5 km every morning").memory

    # when it is said again 20 times
    strengths = []
    for _ in range(20):
        write(user, "Runs 5 km every morning")
        memory.refresh_from_db()
        strengths.append(memory.strength)

    # then each hit follows s + (1 − s) × 0.2 (0.68, 0.744, …), rising ever more slowly, never to 1
    expected, s = [], 0.6
    for _ in range(20):
        s = s + (1 - s) * 0.2
        expected.append(s)
    assert strengths == pytest.approx(expected, abs=1e-12)
    assert strengths[:2] == pytest.approx([0.68, 0.744], abs=1e-12)
    gains = [b - a for a, b in zip(strengths, strengths[1:])]
    assert all(later < earlier for earlier, later in zip(gains, gains[1:]))
    assert strengths[-1] < 1.0
    assert strengths[-1] > 0.99
    assert memory.hit_count == 20
    assert MemoryEvent.objects.filter(memory=memory, event_type="reinforce").count() == 20


def test_re_reading_the_same_turns_does_not_reinforce(user):
    # given a memory written from turn 1
    session = ChatSessionFactory(owner=user)
    turn1 = ConversationTurnFactory(session=session, sequence=1, content="I love hiking in the Alps")
    memory = write(user, "User loves hiking in the Alps", source_session=session, source_turns=[turn1]).memory

    # when the same extraction over turn 1 runs again
    result = write(user, "User loves hiking in the Alps", source_session=session, source_turns=[turn1])

    # then it is a NOOP that changes nothing
    assert result.action == "noop"
    memory.refresh_from_db()
    assert (memory.strength, memory.hit_count, memory.version) == (0.6, 0, 1)
    assert event_types(memory) == ["add"]
    assert list(memory.sources.values_list("turn_id", flat=True)) == [turn1.pk]


def test_saying_it_again_in_a_new_turn_reinforces_and_adds_provenance(user):
    # given a memory written from turn 1
    session = ChatSessionFactory(owner=user)
    turn1 = ConversationTurnFactory(session=session, sequence=1, content="I love hiking in the Alps")
    turn2 = ConversationTurnFactory(session=session, sequence=2, content="Did I say I love hiking in the Alps?")
    memory = write(user, "User loves hiking in the Alps", source_session=session, source_turns=[turn1]).memory

    # when turn 2 says it again
    result = write(user, "User loves hiking in the Alps", source_session=session, source_turns=[turn2])

    # then it is reinforced once and turn 2 joins its sources after turn 1
    assert result.action == "noop"
    memory.refresh_from_db()
    assert (memory.strength, memory.hit_count) == (pytest.approx(0.68, abs=1e-12), 1)
    assert list(memory.sources.values_list("turn_id", "position")) == [(turn1.pk, 0), (turn2.pk, 1)]
    assert MemoryEvent.objects.get(memory=memory, event_type="reinforce").session_id == session.pk


def test_a_near_duplicate_reinforces_the_existing_memory_and_keeps_its_text(user):
    # given a memory
    memory = write(user, "User plays tennis every Monday evening at the club").memory

    # when a near-identical sentence (cosine ≥ 0.92) is written
    result = write(user, "User plays tennis every Monday evening at the club nearby")

    # then the existing memory is reinforced, not duplicated, and its text is unchanged
    assert result.action == "noop"
    assert result.memory.pk == memory.pk
    memory.refresh_from_db()
    assert (memory.content, memory.hit_count) == ("User plays tennis every Monday evening at the club", 1)
    assert memory.strength == pytest.approx(0.68, abs=1e-12)
    reinforce = MemoryEvent.objects.get(memory=memory, event_type="reinforce")
    assert reinforce.reason == "near duplicate"
    assert Memory.objects.filter(owner=user).count() == 1


def test_an_archived_memory_said_again_comes_back_active(user):
    # given an archived memory (strength 0.15)
    memory = MemoryFactory(owner=user, content="Keeps bees in the garden", status="archived", strength=0.15)

    # when it is said again
    result = write(user, "Keeps bees in the garden")

    # then it is reinforced (0.15 + 0.85 × 0.2 = 0.32) and active again
    assert result.action == "noop"
    memory.refresh_from_db()
    assert memory.strength == pytest.approx(0.32, abs=1e-12)
    assert (memory.status, memory.hit_count) == ("active", 1)


# --- UPDATE (merge) -----------------------------------------------------------------------------


def test_a_closer_statement_of_the_same_category_updates_the_memory(user):
    # given a fact from turn 1
    session = ChatSessionFactory(owner=user)
    turn1 = ConversationTurnFactory(session=session, sequence=1)
    turn2 = ConversationTurnFactory(session=session, sequence=2)
    memory = write(user, "User plays tennis on Mondays", importance=0.6, source_turns=[turn1]).memory

    # when a longer, close statement (0.82 ≤ cosine < 0.92) of the same category comes from turn 2
    result = write(user, "User plays tennis on Mondays and Fridays", importance=0.7, source_turns=[turn2])

    # then the one memory takes the longer text, the higher importance and one reinforcement step
    assert result.action == "update"
    assert result.memory.pk == memory.pk
    assert Memory.objects.filter(owner=user).count() == 1
    memory.refresh_from_db()
    assert memory.content == "User plays tennis on Mondays and Fridays"
    assert memory.importance == 0.7
    assert memory.strength == pytest.approx(0.68, abs=1e-12)
    assert memory.version == 2
    assert event_types(memory) == ["add", "merge"]
    merge = MemoryEvent.objects.get(memory=memory, event_type="merge")
    assert merge.before["content"] == "User plays tennis on Mondays"
    assert merge.after["content"] == "User plays tennis on Mondays and Fridays"
    assert list(memory.sources.values_list("turn_id", flat=True)) == [turn1.pk, turn2.pk]
    assert MemoryRelation.objects.count() == 0


def test_a_shorter_close_statement_keeps_the_longer_text(user):
    # given the longer statement
    memory = write(user, "User plays tennis on Mondays and Fridays").memory

    # when the shorter one is written
    result = write(user, "User plays tennis on Mondays")

    # then the memory is updated but keeps its longer text
    assert result.action == "update"
    memory.refresh_from_db()
    assert memory.content == "User plays tennis on Mondays and Fridays"
    assert memory.strength == pytest.approx(0.68, abs=1e-12)


def test_re_reading_the_turn_of_an_update_does_not_update_again(user):
    # given a memory updated from turn 2 (keeping its longer text)
    session = ChatSessionFactory(owner=user)
    turn1 = ConversationTurnFactory(session=session, sequence=1)
    turn2 = ConversationTurnFactory(session=session, sequence=2)
    memory = write(user, "User plays tennis on Mondays and Fridays", source_turns=[turn1]).memory
    assert write(user, "User plays tennis on Mondays", source_turns=[turn2]).action == "update"
    memory.refresh_from_db()
    strength, version = memory.strength, memory.version

    # when the extraction over turn 2 runs again
    result = write(user, "User plays tennis on Mondays", source_turns=[turn2])

    # then nothing changes: same strength, version and history
    assert result.action == "noop"
    memory.refresh_from_db()
    assert (memory.strength, memory.version, memory.hit_count) == (strength, version, 0)
    assert event_types(memory) == ["add", "merge"]


# --- DELETE (supersede) -------------------------------------------------------------------------


def test_a_changed_value_supersedes_the_old_memory(user, monkeypatch):
    # given the preference "tea in the morning" (strength 0.6)
    events = capture_events(monkeypatch)
    old = tea(user).memory

    # when the user now prefers coffee
    result = coffee(user, importance="high")

    # then the coffee memory is new (0.8) and the tea memory is halved to exactly 0.3 and archived: it
    # leaves the prompt and implicit recall at once

    assert result.action == "delete"
    assert result.previous.pk == old.pk
    new = result.memory
    assert (new.content, new.strength, new.status) == ("User prefers coffee in the morning", 0.8, "active")
    old.refresh_from_db()
    assert old.strength == 0.3
    assert (old.status, old.pinned, old.hit_count) == ("archived", False, 0)
    assert event_types(old) == ["add", "supersede"]
    # and both history rows say why
    supersede = MemoryEvent.objects.get(memory=old, event_type="supersede")
    assert (supersede.before["strength"], supersede.after["strength"]) == (0.6, 0.3)
    assert supersede.reason == f"superseded by {new.pk}: contradicted: drink preference prefers changed"
    assert (supersede.after["superseded_by"], supersede.after["incoming"]) == (str(new.pk), new.content)
    assert event_types(new) == ["add"]
    assert (
        MemoryEvent.objects.get(memory=new).reason
        == f"supersedes {old.pk}: contradicted: drink preference prefers changed"
    )
    # and the new memory supersedes and contradicts the old one
    relations = set(MemoryRelation.objects.values_list("source_id", "target_id", "type"))
    assert relations == {(new.pk, old.pk, "supersedes"), (new.pk, old.pk, "contradicts")}
    # and one memory.contradiction event names both
    assert of_type(events, "memory.contradiction") == [
        {
            "new": {"id": str(new.pk), "content": "User prefers coffee in the morning"},
            "old": {"id": str(old.pk), "content": "User prefers tea in the morning"},
        }
    ]


@pytest.mark.parametrize(
    ("strength", "retention", "status"),
    [
        (0.8, "long", "archived"),  # 0.4: above the archive threshold, archived all the same (superseded)
        (0.4, "long", "archived"),  # 0.2
        (0.3, "long", "archived"),  # 0.15 < 0.2
        (0.08, "long", "forgotten"),  # 0.04 < 0.05
        (0.08, "permanent", "archived"),  # permanent memories are never forgotten automatically
    ],
)
def test_the_superseded_memory_status_follows_the_thresholds(user, strength, retention, status):
    # given the tea preference at that strength and retention
    old = tea(user, retention=retention).memory
    Memory.objects.filter(pk=old.pk).update(strength=strength, base_strength=strength)

    # when it is contradicted
    result = coffee(user)

    # then its strength is halved exactly and its status follows the thresholds
    assert result.action == "delete"
    old.refresh_from_db()
    assert old.strength == strength * 0.5
    assert old.status == status


def test_a_pinned_memory_is_not_overridden_the_contradiction_waits_for_review(user, monkeypatch):
    # given the tea preference, pinned by a person
    events = capture_events(monkeypatch)
    old = tea(user, pinned=True).memory
    assert old.pinned is True

    # when coffee is written
    result = coffee(user)

    # then coffee is added for review, linked as contradicting the pinned memory
    new = result.memory
    assert result.action == "add"
    assert result.related == [old]
    new.refresh_from_db()
    assert (new.status, new.pinned) == ("pending_review", False)
    assert new.review_reason == f"contradicts pinned memory {old.pk}"
    assert list(MemoryRelation.objects.values_list("source_id", "target_id", "type")) == [
        (new.pk, old.pk, "contradicts")
    ]
    # and the pinned memory keeps its strength, status and pin
    old.refresh_from_db()
    assert (old.strength, old.status, old.pinned) == (0.6, "active", True)
    assert event_types(old) == ["add"]
    assert of_type(events, "memory.contradiction") == []


def test_a_negation_flip_supersedes(user):
    # given "User likes jazz" with its slot
    old = write(user, "User likes jazz", category="preference", subject="jazz", predicate="opinion").memory

    # when the user now dislikes it (same slot, the value flips)
    result = write(
        user,
        "User doesn't like jazz",
        category="preference",
        subject="jazz",
        predicate="opinion",
        structured_data={"value": "dislikes"},
    )

    # then the dislike supersedes the like
    assert result.action == "delete"
    assert result.previous.pk == old.pk
    old.refresh_from_db()
    assert (old.strength, old.status) == (0.3, "archived")


def test_a_multi_valued_slot_keeps_both_values(user):
    # given "has a dog"
    dog = write(user, "User has a dog", subject="pet", predicate="has", structured_data={"value": "dog"}).memory

    # when "has a cat" is written in the same slot
    result = write(user, "User has a cat", subject="pet", predicate="has", structured_data={"value": "cat"})

    # then both are kept: no supersede, the dog is untouched
    assert result.action == "add"
    dog.refresh_from_db()
    assert (dog.strength, dog.status) == (0.6, "active")
    assert not MemoryRelation.objects.filter(type__in=["supersedes", "contradicts"]).exists()


def test_explicit_replaces_supersedes_a_dissimilar_memory(user):
    # given a memory that shares few words with its correction
    old = write(user, "User's car is a red Volvo").memory

    # when an extractor says the new memory replaces it
    result = write(user, "Drives a blue Tesla now", replaces="User's car is a red Volvo")

    # then it is superseded all the same
    assert result.action == "delete"
    assert result.previous.pk == old.pk
    old.refresh_from_db()
    assert old.strength == 0.3
    assert set(MemoryRelation.objects.values_list("type", flat=True)) == {"supersedes", "contradicts"}


def test_replaces_naming_no_memory_is_an_ordinary_add(user):
    # given one unrelated memory
    other = MemoryFactory(owner=user, content="Owns a sailing boat")

    # when the extractor names a memory that does not exist
    result = write(user, "Drives a blue Tesla now", replaces="User's car is a red Volvo")

    # then the memory is simply added and nothing else changes
    assert result.action == "add"
    other.refresh_from_db()
    assert (other.strength, other.status) == (0.6, "active")
    assert MemoryRelation.objects.count() == 0


def test_replaces_never_touches_another_owners_memory(user):
    # given bob's memory with the named text
    bob = UserFactory(username="bob")
    bobs = write(bob, "User's car is a red Volvo").memory

    # when alice's write names it
    result = write(user, "Drives a blue Tesla now", replaces="User's car is a red Volvo")

    # then alice gets a plain add and bob's memory is untouched
    assert result.action == "add"
    bobs.refresh_from_db()
    assert (bobs.strength, bobs.status) == (0.6, "active")
    assert event_types(bobs) == ["add"]


# --- a superseded memory said again -------------------------------------------------------------


def test_going_back_to_a_superseded_value_makes_it_current_again(user):
    # given tea superseded by coffee
    old_tea = tea(user).memory
    coffee_memory = coffee(user).memory

    # when the user says tea again
    result = tea(user)

    # then tea is written anew and supersedes coffee in turn; the old tea stays as history
    new_tea = result.memory
    assert result.action == "delete"
    assert result.previous.pk == coffee_memory.pk
    assert new_tea.pk != old_tea.pk
    assert (new_tea.content, new_tea.strength, new_tea.status) == ("User prefers tea in the morning", 0.6, "active")
    coffee_memory.refresh_from_db()
    old_tea.refresh_from_db()
    assert (coffee_memory.strength, coffee_memory.status) == (0.3, "archived")
    assert (old_tea.strength, old_tea.hit_count, event_types(old_tea)) == (0.3, 0, ["add", "supersede"])
    assert set(MemoryRelation.objects.filter(type="supersedes").values_list("source_id", "target_id")) == {
        (coffee_memory.pk, old_tea.pk),
        (new_tea.pk, coffee_memory.pk),
    }
    # and the prompt pins the new tea only
    prompt = context_build(owner=user)["system_prompt"]
    assert "- User prefers tea in the morning" in prompt
    assert "coffee" not in prompt

    # and saying it once more reinforces the current tea instead of writing another
    again = tea(user)
    assert (again.action, again.memory.pk) == ("noop", new_tea.pk)
    assert Memory.objects.filter(content="User prefers tea in the morning").count() == 2


def test_re_reading_the_turn_of_a_superseded_memory_does_not_bring_it_back(user):
    # given tea said in turn 1, then superseded by coffee
    session = ChatSessionFactory(owner=user)
    turn1 = ConversationTurnFactory(session=session, sequence=1)
    old_tea = tea(user, source_turns=[turn1]).memory
    coffee(user)
    before = db_snapshot(user)

    # when turn 1 is extracted again
    result = tea(user, source_turns=[turn1])

    # then nothing changes: coffee stays current
    assert (result.action, result.changed, result.memory.pk) == ("noop", False, old_tea.pk)
    assert db_snapshot(user) == before


def test_going_back_against_a_pinned_replacement_waits_for_review(user):
    # given tea superseded by coffee, which a person then pinned
    tea(user)
    coffee_memory = coffee(user).memory
    Memory.objects.filter(pk=coffee_memory.pk).update(pinned=True)

    # when the user says tea again
    result = tea(user)

    # then the new tea waits for review and coffee keeps its place
    assert result.action == "add"
    assert (result.memory.status, result.memory.review_reason) == (
        "pending_review",
        f"contradicts pinned memory {coffee_memory.pk}",
    )
    coffee_memory.refresh_from_db()
    assert (coffee_memory.strength, coffee_memory.pinned, coffee_memory.status) == (0.6, True, "active")
