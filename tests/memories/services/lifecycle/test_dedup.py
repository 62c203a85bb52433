"""Semantic dedup: near-duplicates of the same agent and category merge into the stronger one."""

import pytest

from memories.models import MemoryEvent, MemoryRelation, MemorySource
from memories.services.embeddings import embedding_get
from memories.services.lifecycle import ACTOR, lifecycle_run
from tests.factories import ConversationTurnFactory, MemoryFactory


def test_near_duplicates_merge_into_the_stronger_memory(user, now):
    # given two active facts with the same vector (cosine similarity 1), strengths 0.7 and 0.5
    vector = embedding_get(owner=user, text="the user lives in Lisbon")
    strong = MemoryFactory(owner=user, content="Lives in Lisbon", strength=0.7, embedding=vector, observed_at=now)
    weak = MemoryFactory(owner=user, content="Lives in Lisbon.", strength=0.5, embedding=vector, observed_at=now)
    turn = ConversationTurnFactory(session__owner=user, content="I live in Lisbon")
    MemorySource.objects.create(owner=user, memory=weak, turn=turn)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the weaker is forgotten with a merge event, superseded by the stronger, which is reinforced
    weak.refresh_from_db()
    strong.refresh_from_db()
    assert weak.status == "forgotten"
    assert strong.status == "active"
    assert strong.strength == pytest.approx(1 - (1 - 0.7) * 0.8, abs=1e-12)
    assert strong.base_strength == pytest.approx(strong.strength, abs=1e-12)
    assert strong.hit_count == 1
    assert strong.last_reinforced_at == now
    merge = MemoryEvent.objects.get(memory=weak, event_type="merge")
    assert merge.actor == ACTOR
    assert (merge.before["status"], merge.after["status"]) == ("active", "forgotten")
    assert merge.reason.startswith(f"duplicate of {strong.pk}")
    reinforce = MemoryEvent.objects.get(memory=strong, event_type="reinforce")
    assert reinforce.before["strength"] == 0.7
    assert reinforce.after["strength"] == pytest.approx(0.76, abs=1e-12)
    relation = MemoryRelation.objects.get(source=strong, target=weak)
    assert relation.type == "supersedes"
    assert relation.weight == pytest.approx(1.0, abs=1e-6)
    # and the provenance of the forgotten one now also points at the survivor
    assert list(strong.sources.values_list("turn_id", flat=True)) == [turn.pk]
    assert run.counts["dedup"]["merged"] == 1


def test_different_category_agent_or_dissimilar_text_is_not_merged(user, now):
    # given same-vector memories in different categories and agents, and one unrelated memory
    vector = embedding_get(owner=user, text="shared meaning")
    a = MemoryFactory(owner=user, content="A", category="fact", embedding=vector, observed_at=now)
    b = MemoryFactory(owner=user, content="B", category="preference", embedding=vector, observed_at=now)
    c = MemoryFactory(owner=user, content="C", category="fact", agent="bot", embedding=vector, observed_at=now)
    d = MemoryFactory(owner=user, content="Completely unrelated words about gardening", observed_at=now)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then nothing merged
    for memory in (a, b, c, d):
        memory.refresh_from_db()
        assert memory.status == "active"
    assert run.counts["dedup"]["merged"] == 0
    assert not MemoryRelation.objects.exists()


def test_three_copies_collapse_into_one_with_two_hits(user, now):
    # given three copies of one memory
    vector = embedding_get(owner=user, text="likes green tea")
    keep = MemoryFactory(owner=user, content="Likes green tea", strength=0.8, embedding=vector, observed_at=now)
    # (worded apart by punctuation only: copies that differed in a number would be different facts)
    others = [
        MemoryFactory(owner=user, content=f"Likes green tea{end}", strength=0.4, embedding=vector, observed_at=now)
        for end in (".", "!")
    ]

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then the strongest absorbs both: two hits
    keep.refresh_from_db()
    assert keep.status == "active"
    assert keep.hit_count == 2
    assert keep.strength == pytest.approx(1 - (1 - 0.8) * 0.8**2, abs=1e-12)
    for other in others:
        other.refresh_from_db()
        assert other.status == "forgotten"
    assert MemoryRelation.objects.filter(source=keep, type="supersedes").count() == 2


def test_a_pinned_duplicate_is_never_the_one_forgotten(user, now):
    # given a weak pinned memory and a stronger unpinned copy
    vector = embedding_get(owner=user, text="pinned copy")
    pinned = MemoryFactory(owner=user, content="Pinned", strength=0.3, pinned=True, embedding=vector, observed_at=now)
    copy = MemoryFactory(owner=user, content="Copy", strength=0.9, embedding=vector, observed_at=now)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then the pinned one survives and absorbs the copy
    pinned.refresh_from_db()
    copy.refresh_from_db()
    assert pinned.status == "active"
    assert copy.status == "forgotten"


def test_dedup_only_probes_what_changed_since_the_last_run(user, now):
    # given a first run over one memory
    MemoryFactory(owner=user, content="first", observed_at=now)
    first = lifecycle_run(owner=user, now=now)

    # when a second run finds nothing new
    second = lifecycle_run(owner=user, now=now)

    # then it probes nothing
    assert first.counts["dedup"]["probed"] == 1
    assert second.counts["dedup"]["probed"] == 0


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Server db-01 has IP address 10.0.0.11", "Server db-02 has IP address 10.0.0.12"),
        ("User drinks coffee every morning", "User doesn't drink coffee every morning"),
    ],
)
def test_same_vector_memories_with_different_values_or_polarity_are_not_merged(user, now, first, second):
    # given two facts sharing a vector (cosine 1) that differ in their values, or one negating the other
    vector = embedding_get(owner=user, text=first)
    a = MemoryFactory(owner=user, content=first, strength=0.7, embedding=vector, observed_at=now)
    b = MemoryFactory(owner=user, content=second, strength=0.5, embedding=vector, observed_at=now)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then both stay active: neither fact is dropped
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == ("active", "active")
    assert run.counts["dedup"]["merged"] == 0
    assert not MemoryEvent.objects.filter(event_type="merge").exists()
