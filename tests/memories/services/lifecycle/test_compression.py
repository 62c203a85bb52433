"""Compression (seed 000): old rarely used memories of one agent and category → 1–3 summaries."""

from datetime import timedelta

from django.utils import timezone

from memories.models import DailyDigest, Memory, MemoryEvent, MemoryRelation
from memories.services.lifecycle import ACTOR, common, lifecycle_run
from tests.factories import ConversationTurnFactory
from tests.memories.services.lifecycle.conftest import REAL_LLM, memory_at


def _old_group(user, now, n=4, category="preference"):
    memories = []
    for i in range(n):
        memory = memory_at(user, now=now, days=100 + i, strength=0.9, category=category, content=f"old {category} {i}")
        turn = ConversationTurnFactory(session__owner=user, content=f"turn for {category} {i}")
        memory.sources.create(owner=user, turn=turn)
        memories.append(memory)
    return memories


def test_an_old_group_is_compressed_into_summaries_and_archived(user, now, fake_llm):
    # given four old, rarely used preferences (each from its own turn)
    originals = _old_group(user, now)
    # and memories that do not qualify: often used, recent, pinned, and a lone old fact
    used = memory_at(user, now=now, days=120, strength=0.9, category="preference", access_count=5)
    recent = memory_at(user, now=now, days=10, strength=0.9, category="preference")
    pinned = memory_at(user, now=now, days=150, strength=0.9, category="preference", pinned=True)
    lone = memory_at(user, now=now, days=150, strength=0.9, category="fact")
    fake_llm.compress_result = ["The user's old preferences, in short", "A second key point"]

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the LLM saw the four contents, oldest first
    assert fake_llm.compress_calls == [[m.content for m in reversed(originals)]]
    # and two summary memories exist, from consolidation, with the originals' provenance
    summaries = list(Memory.objects.filter(owner=user, source="consolidation").order_by("content"))
    assert [s.content for s in summaries] == ["A second key point", "The user's old preferences, in short"]
    turn_ids = {t for m in originals for t in m.sources.values_list("turn_id", flat=True)}
    for summary in summaries:
        assert (summary.category, summary.status, summary.agent) == ("preference", "active", "")
        assert summary.importance == 0.9
        assert summary.observed_at == now
        assert set(summary.sources.values_list("turn_id", flat=True)) == turn_ids
        refined = set(MemoryRelation.objects.filter(source=summary, type="refines").values_list("target", flat=True))
        assert refined == {m.pk for m in originals}
    # and the originals are archived with history
    for memory in originals:
        memory.refresh_from_db()
        assert memory.status == "archived"
        event = MemoryEvent.objects.get(memory=memory, event_type="archive")
        assert event.actor == ACTOR
        assert event.reason.startswith("compressed into ")
        assert (event.before["status"], event.after["status"]) == ("active", "archived")
    # and nothing else moved
    for memory in (used, recent, pinned, lone):
        memory.refresh_from_db()
        assert memory.status == "active"
    assert run.counts["compress"] == {"groups": 1, "compressed": 4, "summaries": 2, "failed": 0}


def test_two_old_memories_are_not_enough(user, now, fake_llm):
    # given only two old memories in the group
    pair = _old_group(user, now, n=2)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then nothing is compressed
    assert fake_llm.compress_calls == []
    assert all(Memory.objects.get(pk=m.pk).status == "active" for m in pair)
    assert run.counts["compress"]["groups"] == 0


def test_compression_runs_once(user, now, fake_llm):
    # given a compressed group
    _old_group(user, now, n=3)
    lifecycle_run(owner=user, now=now)

    # when the lifecycle runs again the next day
    run = lifecycle_run(owner=user, now=now + timedelta(days=1))

    # then nothing is compressed twice (the summary is new, the originals archived)
    assert len(fake_llm.compress_calls) == 1
    assert run.counts["compress"]["groups"] == 0
    assert Memory.objects.filter(owner=user, source="consolidation").count() == 1


def test_an_empty_llm_answer_leaves_the_group_active(user, now, fake_llm):
    # given a group and an LLM that returns nothing usable
    group = _old_group(user, now, n=3)
    fake_llm.compress_result = ["", "   "]

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the originals stay active (to be retried), and the failure is counted
    assert all(Memory.objects.get(pk=m.pk).status == "active" for m in group)
    assert run.counts["compress"] == {"groups": 1, "compressed": 0, "summaries": 0, "failed": 1}
    assert run.status == "completed"


def test_at_most_three_summaries_are_kept(user, now, fake_llm):
    # given an LLM answering with five summaries (two identical)
    _old_group(user, now, n=5)
    fake_llm.compress_result = ["one", "two", "two", "three", "four"]

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then the first three distinct ones are written
    contents = sorted(Memory.objects.filter(owner=user, source="consolidation").values_list("content", flat=True))
    assert contents == ["one", "three", "two"]


def test_compression_and_digests_with_the_offline_provider(user, now, monkeypatch):
    # given the real offline provider, an old group of related preferences, and a 45-day-old digest
    monkeypatch.setattr(common, "lifecycle_llm", REAL_LLM)
    contents = [
        "User likes green tea",
        "User likes green tea in the morning",
        "User likes jasmine tea",
        "User likes oolong tea",
    ]
    originals = [
        memory_at(user, now=now, days=120, strength=0.9, category="preference", content=text) for text in contents
    ]
    digest = DailyDigest.objects.create(
        owner=user,
        day=timezone.localdate(now) - timedelta(days=45),
        entries=[{"time": "09:00:00", "type": "memory.add", "category": "fact", "content": "User moved to Porto."}],
    )

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then 1–3 summaries replace the group, and the digest got a non-empty summary
    summaries = Memory.objects.filter(owner=user, source="consolidation")
    assert 1 <= summaries.count() <= 3
    assert all(s.content.strip() for s in summaries)
    assert all(Memory.objects.get(pk=m.pk).status == "archived" for m in originals)
    assert run.counts["compress"]["compressed"] == 4
    digest.refresh_from_db()
    assert "Porto" in digest.summary
    assert run.status == "completed"
