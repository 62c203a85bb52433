"""Daily digests (seed 004 §4.6): built per day, summarised and promoted after 30 days, purged after 60."""

from datetime import timedelta

from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import DailyDigest, MemoryEvent
from memories.services.lifecycle import ACTOR, lifecycle_run
from memories.services.memories import memory_create
from tests.factories import ChatSessionFactory


def test_a_day_is_digested_then_summarised_and_promoted_after_30_days(user, fake_llm):
    # given a day with an important memory, an ordinary one, and a session
    day = timezone.localdate()
    important = memory_create(
        owner=user, draft=MemoryDraft(content="User is allergic to peanuts", importance=0.9), actor="test"
    )
    memory_create(owner=user, draft=MemoryDraft(content="User watched a film", importance=0.4), actor="test")
    session = ChatSessionFactory(owner=user, title="Dinner plans")
    later = timezone.now() + timedelta(days=31)

    # when the lifecycle runs 31 days later
    run = lifecycle_run(owner=user, now=later)

    # then that day's digest lists what happened, with stats first
    digest = DailyDigest.objects.get(owner=user, agent="", day=day)
    kinds = [e["type"] for e in digest.entries]
    assert kinds[0] == "stats"
    assert digest.entries[0]["counts"]["add"] == 2
    assert sorted(kinds[1:]) == ["memory.add", "memory.add", "session"]
    added = {e["content"]: e for e in digest.entries if e["type"] == "memory.add"}
    assert added["User is allergic to peanuts"]["importance"] == 0.9
    assert added["User is allergic to peanuts"]["memory_id"] == str(important.pk)
    assert next(e for e in digest.entries if e["type"] == "session")["session_id"] == str(session.pk)
    # and, being over 30 days old, it is summarised
    assert digest.summary == "Day summary (3 lines)"
    assert digest.summarized_at == later
    assert digest.entries_purged_at is None
    # and its important memory was promoted through the merge decision (a reinforcement here)
    assert run.counts["digests"]["promoted"] == 1
    important.refresh_from_db()
    assert important.hit_count == 1
    assert MemoryEvent.objects.filter(memory=important, event_type="reinforce", actor=ACTOR).count() == 1


def test_raw_entries_are_dropped_after_60_days_and_the_summary_kept(user):
    # given a digested and summarised day
    memory_create(owner=user, draft=MemoryDraft(content="User moved to Porto", importance=0.6), actor="test")
    lifecycle_run(owner=user, now=timezone.now() + timedelta(days=31))
    digest = DailyDigest.objects.get(owner=user)
    summary = digest.summary

    # when the lifecycle runs 61 days after that day
    purge_at = timezone.now() + timedelta(days=61)
    run = lifecycle_run(owner=user, now=purge_at)

    # then the entries are gone and the summary stays
    digest.refresh_from_db()
    assert digest.entries == []
    assert digest.entries_purged_at == purge_at
    assert digest.summary == summary
    assert run.counts["digests"]["purged"] == 1


def test_recent_digests_are_neither_summarised_nor_purged(user, now):
    # given digests 10 and 45 days old
    today = timezone.localdate(now)
    recent = DailyDigest.objects.create(
        owner=user, day=today - timedelta(days=10), entries=[{"type": "memory.add", "content": "x"}]
    )
    older = DailyDigest.objects.create(
        owner=user, day=today - timedelta(days=45), entries=[{"type": "memory.add", "content": "y", "time": "10:00:00"}]
    )

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then only the 45-day-old digest is summarised; neither is purged
    recent.refresh_from_db()
    older.refresh_from_db()
    assert recent.summarized_at is None
    assert older.summarized_at == now
    assert older.summary == "Day summary (1 lines)"
    assert recent.entries and older.entries
    assert run.counts["digests"]["summarized"] == 1
    assert run.counts["digests"]["purged"] == 0


def test_a_digest_is_only_purged_once_summarised(user, now, fake_llm, monkeypatch):
    # given a 70-day-old digest whose summary fails
    old = DailyDigest.objects.create(
        owner=user, day=timezone.localdate(now) - timedelta(days=70), entries=[{"type": "memory.add", "content": "z"}]
    )

    def broken(**kwargs):
        raise RuntimeError("LLM down")

    monkeypatch.setattr(fake_llm, "summarize", broken)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then its entries are kept for the next night
    old.refresh_from_db()
    assert old.entries == [{"type": "memory.add", "content": "z"}]
    assert old.entries_purged_at is None
    assert run.counts["digests"]["failed"] == 1


def test_lifecycle_moves_are_counted_but_not_listed(user, now):
    # given a memory added today and decayed by the lifecycle
    memory = memory_create(
        owner=user,
        draft=MemoryDraft(content="User likes chess", observed_at=now - timedelta(days=30), importance=0.6),
        actor="test",
    )

    # when the lifecycle runs twice (the second run rebuilds today's digest with the first one's moves)
    lifecycle_run(owner=user, now=now)
    lifecycle_run(owner=user, now=now + timedelta(seconds=1))

    # then today's digest lists the add, and only counts the decay
    digest = DailyDigest.objects.get(owner=user, day=timezone.localdate())
    assert [e["type"] for e in digest.entries[1:]] == ["memory.add"]
    assert digest.entries[1]["memory_id"] == str(memory.pk)
    assert digest.entries[0]["counts"]["decay"] == 1
