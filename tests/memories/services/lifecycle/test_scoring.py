"""Seed 002 §3.4 numbers through the set-based lifecycle: grace, decay, archive, forget, demote."""

from datetime import timedelta

import pytest

from memories.models import MemoryEvent
from memories.services.lifecycle import ACTOR, common, lifecycle_run
from tests.memories.services.lifecycle.conftest import memory_at


def _reload(memory):
    memory.refresh_from_db()
    return memory


def test_no_decay_within_the_seven_day_grace_period(user, now):
    # given memories reinforced 0 and 7 days ago
    fresh = memory_at(user, now=now, days=0, strength=0.6)
    week = memory_at(user, now=now, days=7, strength=0.6)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then nothing decayed and no decay history was written
    assert run.status == "completed"
    assert _reload(fresh).strength == 0.6
    assert _reload(week).strength == 0.6
    assert run.counts["decay"] == {"decayed": 0, "checkpoints": 0}
    assert not MemoryEvent.objects.filter(event_type="decay").exists()


def test_seventeen_days_decays_by_0_99_to_the_tenth(user, now):
    # given a memory of strength 0.6 last reinforced 17 days ago
    memory = memory_at(user, now=now, days=17, strength=0.6)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then strength = 0.6 × 0.99^(17 − 7), recorded as one decay event by the lifecycle
    assert _reload(memory).strength == pytest.approx(0.6 * 0.99**10, abs=1e-12)
    assert memory.base_strength == 0.6
    assert memory.status == "active"
    assert run.counts["decay"] == {"decayed": 1, "checkpoints": 1}
    event = MemoryEvent.objects.get(memory=memory, event_type="decay")
    assert event.actor == ACTOR
    assert event.before["strength"] == 0.6
    assert event.after["strength"] == pytest.approx(0.6 * 0.99**10, abs=1e-12)
    assert event.before["status"] == event.after["status"] == "active"


def test_partial_days_are_floored(user, now):
    # given a memory reinforced 17 days and 23 hours ago
    memory = memory_at(user, now=now, days=17 + 23 / 24, strength=0.8)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then only whole days count: 10 days past the grace period
    assert _reload(memory).strength == pytest.approx(0.8 * 0.99**10, abs=1e-12)


def test_decay_counts_from_the_last_reinforcement_not_the_observation(user, now):
    # given a memory said 100 days ago but reinforced (base 0.8) 10 days ago
    memory = memory_at(user, now=now, days=100, strength=0.8, last_reinforced_at=now - timedelta(days=10))

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then it decayed for 3 days only
    assert _reload(memory).strength == pytest.approx(0.8 * 0.99**3, abs=1e-12)


def test_running_twice_the_same_day_gives_identical_strengths(user, now):
    # given memories of various ages
    memories = [memory_at(user, now=now, days=d, strength=0.9) for d in (3, 17, 40, 90)]

    # when the lifecycle runs twice with the same clock
    first = lifecycle_run(owner=user, now=now)
    after_first = [_reload(m).strength for m in memories]
    second = lifecycle_run(owner=user, now=now)
    after_second = [_reload(m).strength for m in memories]

    # then the second run changes nothing and writes no new decay history
    assert after_first == after_second
    assert after_first == pytest.approx([0.9, 0.9 * 0.99**10, 0.9 * 0.99**33, 0.9 * 0.99**83], abs=1e-12)
    assert first.counts["decay"] == {"decayed": 3, "checkpoints": 3}
    assert second.counts["decay"] == {"decayed": 0, "checkpoints": 0}
    assert MemoryEvent.objects.filter(event_type="decay").count() == 3


@pytest.mark.parametrize("returning_old", [True, False], ids=["pg18-returning-old", "self-join"])
def test_decay_writes_history_only_when_strength_crosses_a_multiple_of_0_05(user, now, monkeypatch, returning_old):
    # given a server with RETURNING old.* (PostgreSQL 18) or without it (the self-join fallback)
    monkeypatch.setattr(common, "returning_old", lambda: returning_old)
    # and a memory of base 0.52 six days past its grace period: 0.52 × 0.99^6 ≈ 0.4896, below 0.50
    crossing = memory_at(user, now=now, days=13, strength=0.52)
    # and one of base 0.58 one day past it: 0.58 × 0.99 = 0.5742, still above 0.55
    within = memory_at(user, now=now, days=8, strength=0.58)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then both strengths are updated
    assert _reload(crossing).strength == pytest.approx(0.52 * 0.99**6, abs=1e-12)
    assert _reload(within).strength == pytest.approx(0.58 * 0.99, abs=1e-12)
    assert run.counts["decay"] == {"decayed": 2, "checkpoints": 1}
    # and only the one that crossed 0.50 got a decay event, with its strength before and after
    event = MemoryEvent.objects.get(event_type="decay")
    assert event.memory_id == crossing.pk
    assert event.actor == ACTOR
    assert event.before["strength"] == 0.52
    assert event.after["strength"] == pytest.approx(0.52 * 0.99**6, abs=1e-12)
    assert event.before["status"] == event.after["status"] == "active"
    assert not MemoryEvent.objects.filter(memory=within).exists()

    # when it runs again the same day
    again = lifecycle_run(owner=user, now=now)

    # then nothing changes and no history is added
    assert again.counts["decay"] == {"decayed": 0, "checkpoints": 0}
    assert _reload(crossing).strength == pytest.approx(0.52 * 0.99**6, abs=1e-12)
    assert _reload(within).strength == pytest.approx(0.58 * 0.99, abs=1e-12)
    assert MemoryEvent.objects.filter(event_type="decay").count() == 1


def test_nightly_decay_leaves_a_checkpoint_every_0_05(user, now):
    # given a memory of base 0.58 at the end of its grace period
    memory = memory_at(user, now=now, days=7, strength=0.58)

    # when the lifecycle runs on each of the next 20 nights
    runs = [lifecycle_run(owner=user, now=now + timedelta(days=n)) for n in range(1, 21)]

    # then every night decayed it, and history was written on the nights it crossed 0.55 and 0.50:
    # 0.58 × 0.99^5 ≈ 0.5516 → 0.58 × 0.99^6 ≈ 0.5461, and 0.58 × 0.99^14 ≈ 0.5036 → 0.99^15 ≈ 0.4986
    assert [r.counts["decay"]["decayed"] for r in runs] == [1] * 20
    assert [n for n, r in enumerate(runs, start=1) if r.counts["decay"]["checkpoints"]] == [6, 15]
    events = list(MemoryEvent.objects.filter(memory=memory, event_type="decay").order_by("created_at", "id"))
    assert [(e.before["strength"], e.after["strength"]) for e in events] == [
        pytest.approx((0.58 * 0.99**5, 0.58 * 0.99**6), abs=1e-12),
        pytest.approx((0.58 * 0.99**14, 0.58 * 0.99**15), abs=1e-12),
    ]
    assert _reload(memory).strength == pytest.approx(0.58 * 0.99**20, abs=1e-12)


def test_one_checkpoint_however_many_lines_a_night_crosses(user, now):
    # given a memory of base 0.9 unprocessed for 90 days: 0.9 × 0.99^83 ≈ 0.391
    memory = memory_at(user, now=now, days=90, strength=0.9)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then one decay event spans the whole drop
    assert run.counts["decay"] == {"decayed": 1, "checkpoints": 1}
    event = MemoryEvent.objects.get(memory=memory, event_type="decay")
    assert (event.before["strength"], event.after["strength"]) == pytest.approx((0.9, 0.9 * 0.99**83), abs=1e-12)


def test_servers_before_postgresql_18_give_the_same_threshold_moves(user, now, monkeypatch):
    # given a server without RETURNING old.* (the self-join fallback)
    monkeypatch.setattr(common, "returning_old", lambda: False)
    # and a memory that decays below the archive threshold
    archived = memory_at(user, now=now, days=30, strength=0.25)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the counts and history are those of the PostgreSQL 18 statement
    assert run.counts["decay"] == {"decayed": 1, "checkpoints": 1}
    assert run.counts["thresholds"] == {"forgotten": 0, "archived": 1, "demoted": 1}
    archive = MemoryEvent.objects.get(memory=archived, event_type="archive")
    assert (archive.before["status"], archive.after["status"]) == ("active", "archived")
    assert archive.before["strength"] == archive.after["strength"] == pytest.approx(0.25 * 0.99**23, abs=1e-12)


def test_nightly_runs_do_not_compound(user, now):
    # given a memory reinforced 17 days ago, decayed by a run one day earlier
    memory = memory_at(user, now=now, days=17, strength=0.6)
    lifecycle_run(owner=user, now=now - timedelta(days=1))

    # when the next night runs
    lifecycle_run(owner=user, now=now)

    # then the strength is the one-shot value for 17 days, not 0.6 × 0.99^9 × 0.99^10
    assert _reload(memory).strength == pytest.approx(0.6 * 0.99**10, abs=1e-12)


def test_below_0_2_is_archived(user, now):
    # given strength 0.25 reinforced 30 days ago: 0.25 × 0.99^23 ≈ 0.198
    memory = memory_at(user, now=now, days=30, strength=0.25)
    # and one that stays just above: 0.3 × 0.99^23 ≈ 0.238
    kept = memory_at(user, now=now, days=30, strength=0.3)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the first is archived (with history), the second stays active
    assert _reload(memory).strength == pytest.approx(0.25 * 0.99**23, abs=1e-12)
    assert memory.status == "archived"
    assert _reload(kept).status == "active"
    assert run.counts["thresholds"]["archived"] == 1
    event = MemoryEvent.objects.get(memory=memory, event_type="archive")
    assert event.actor == ACTOR
    assert (event.before["status"], event.after["status"]) == ("active", "archived")
    assert event.after["strength"] == pytest.approx(0.25 * 0.99**23, abs=1e-12)


def test_below_0_05_is_forgotten(user, now):
    # given strength 0.06 reinforced 40 days ago: 0.06 × 0.99^33 ≈ 0.0431
    memory = memory_at(user, now=now, days=40, strength=0.06)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then it is forgotten (the row and its history stay)
    assert _reload(memory).status == "forgotten"
    assert memory.strength == pytest.approx(0.06 * 0.99**33, abs=1e-12)
    assert run.counts["thresholds"]["forgotten"] == 1
    event = MemoryEvent.objects.get(memory=memory, event_type="forget")
    assert (event.before["status"], event.after["status"]) == ("active", "forgotten")
    assert event.reason == "strength below 0.05"


def test_permanent_memories_are_archived_but_never_forgotten(user, now):
    # given a permanent memory that decays far below the forget threshold
    memory = memory_at(user, now=now, days=400, strength=0.5, retention="permanent")

    # when the lifecycle runs (twice, a year apart)
    lifecycle_run(owner=user, now=now)
    lifecycle_run(owner=user, now=now + timedelta(days=365))

    # then it is archived, keeps its permanent retention, and is never forgotten
    assert _reload(memory).status == "archived"
    assert memory.retention == "permanent"
    assert memory.strength == pytest.approx(0.5 * 0.99 ** (400 + 365 - 7), abs=1e-12)
    assert not MemoryEvent.objects.filter(memory=memory, event_type__in=["forget", "demote", "expire"]).exists()


def test_below_0_3_is_demoted_to_transient(user, now):
    # given strength 0.35 reinforced 30 days ago: 0.35 × 0.99^23 ≈ 0.277
    memory = memory_at(user, now=now, days=30, strength=0.35)
    # and one above the line: 0.4 × 0.99^23 ≈ 0.318
    kept = memory_at(user, now=now, days=30, strength=0.4)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the first becomes transient, expiring a day later, still active; the second is untouched
    assert _reload(memory).retention == "transient"
    assert memory.expires_at == now + timedelta(days=1)
    assert memory.status == "active"
    assert _reload(kept).retention == "long"
    assert run.counts["thresholds"] == {"forgotten": 0, "archived": 0, "demoted": 1}
    event = MemoryEvent.objects.get(memory=memory, event_type="demote")
    assert (event.before["retention"], event.after["retention"]) == ("long", "transient")
    assert event.after["strength"] == pytest.approx(0.35 * 0.99**23, abs=1e-12)


def test_a_demoted_memory_expires_the_next_night_unless_reinforced(user, now):
    # given a memory demoted tonight
    memory = memory_at(user, now=now, days=30, strength=0.35)
    lifecycle_run(owner=user, now=now)

    # when the lifecycle runs two days later
    run = lifecycle_run(owner=user, now=now + timedelta(days=2))

    # then it has expired and is forgotten
    assert _reload(memory).status == "forgotten"
    assert run.counts["expire"] == {"expired": 1}
    assert MemoryEvent.objects.get(memory=memory, event_type="expire").reason == "expired"


def test_pinned_memories_are_left_alone(user, now):
    # given a pinned memory that would otherwise decay below every threshold
    memory = memory_at(user, now=now, days=500, strength=0.5, pinned=True)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then nothing about it changed
    assert _reload(memory).strength == 0.5
    assert (memory.status, memory.retention, memory.pinned) == ("active", "long", True)
    assert not MemoryEvent.objects.filter(memory=memory).exists()


def test_other_owners_are_not_touched(user, other_user, now):
    # given an old memory of another owner
    theirs = memory_at(other_user, now=now, days=200, strength=0.6)

    # when alice's lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then bob's memory is as it was
    assert _reload(theirs).strength == 0.6
    assert theirs.status == "active"
