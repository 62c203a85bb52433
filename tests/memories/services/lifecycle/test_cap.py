"""The per-owner cap: beyond it, the least important then least recent memories are forgotten."""

from datetime import timedelta

from memories.models import MemoryEvent
from memories.services.lifecycle import ACTOR, lifecycle_run
from tests.memories.services.lifecycle.conftest import memory_at


def test_cap_forgets_least_important_then_least_recent(user, now, settings):
    # given a cap of 3 and six live memories (plus one already forgotten)
    settings.MEMORY_OWNER_CAP = 3
    older = memory_at(user, now=now, days=3, strength=0.9, importance=0.3)
    newer = memory_at(user, now=now, days=1, strength=0.9, importance=0.3)
    middle = memory_at(user, now=now, days=2, strength=0.9, importance=0.5)
    top = memory_at(user, now=now, days=5, strength=0.9, importance=0.9)
    pinned = memory_at(user, now=now, days=6, strength=0.9, importance=0.1, pinned=True)
    permanent = memory_at(user, now=now, days=6, strength=0.9, importance=0.1, retention="permanent")
    memory_at(user, now=now, strength=0.9, importance=0.1, status="forgotten")

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then three are forgotten: importance 0.3 (older first), then 0.5; pinned and permanent are kept
    status = {m.pk: m.__class__.objects.get(pk=m.pk).status for m in (older, newer, middle, top, pinned, permanent)}
    assert [status[m.pk] for m in (older, newer, middle)] == ["forgotten"] * 3
    assert [status[m.pk] for m in (top, pinned, permanent)] == ["active"] * 3
    assert run.counts["cap"] == {"total": 6, "cap": 3, "forgotten": 3}
    event = MemoryEvent.objects.get(memory=older, event_type="forget")
    assert (event.actor, event.reason) == (ACTOR, "over the per-owner cap of 3")
    assert (event.before["status"], event.after["status"]) == ("active", "forgotten")


def test_recent_access_counts_as_recent(user, now, settings):
    # given two equally important memories; the older one was used yesterday
    settings.MEMORY_OWNER_CAP = 1
    used = memory_at(user, now=now, days=5, importance=0.5, last_accessed_at=now - timedelta(days=1))
    unused = memory_at(user, now=now, days=3, importance=0.5)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then the one not used lately goes
    used.refresh_from_db()
    unused.refresh_from_db()
    assert (used.status, unused.status) == ("active", "forgotten")


def test_under_the_cap_nothing_is_forgotten(user, now, settings):
    # given exactly as many memories as the cap
    settings.MEMORY_OWNER_CAP = 2
    memory_at(user, now=now)
    memory_at(user, now=now)

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then none is forgotten
    assert run.counts["cap"] == {"total": 2, "cap": 2, "forgotten": 0}
