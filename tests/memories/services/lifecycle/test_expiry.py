"""Expiry: todos and transient / short memories whose expires_at passed are forgotten."""

from datetime import timedelta

from memories.models import MemoryEvent
from memories.services.lifecycle import ACTOR, lifecycle_run
from tests.memories.services.lifecycle.conftest import memory_at


def test_expired_transient_short_and_todo_memories_are_forgotten(user, now):
    # given expired transient, short and todo memories, and a transient one not yet expired
    transient = memory_at(user, now=now, strength=0.9, retention="transient", expires_at=now - timedelta(hours=1))
    short = memory_at(user, now=now, strength=0.9, retention="short", expires_at=now - timedelta(days=1))
    todo = memory_at(user, now=now, strength=0.9, category="todo", expires_at=now - timedelta(minutes=5))
    pending = memory_at(user, now=now, strength=0.9, retention="transient", expires_at=now + timedelta(hours=3))

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then the expired ones are forgotten with an "expired" event, the other is untouched
    for memory in (transient, short, todo):
        memory.refresh_from_db()
        assert memory.status == "forgotten"
        event = MemoryEvent.objects.get(memory=memory, event_type="expire")
        assert (event.actor, event.reason) == (ACTOR, "expired")
        assert (event.before["status"], event.after["status"]) == ("active", "forgotten")
        assert event.after["strength"] == 0.9
    pending.refresh_from_db()
    assert pending.status == "active"
    assert run.counts["expire"] == {"expired": 3}


def test_expiry_exactly_now_counts_as_expired(user, now):
    # given a todo expiring at the very instant the run looks
    todo = memory_at(user, now=now, category="todo", expires_at=now)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then it is expired
    todo.refresh_from_db()
    assert todo.status == "forgotten"


def test_long_permanent_and_pinned_memories_do_not_expire(user, now):
    # given long, permanent and pinned transient memories with an expiry in the past
    long_fact = memory_at(user, now=now, strength=0.9, retention="long", expires_at=now - timedelta(days=1))
    permanent = memory_at(user, now=now, strength=0.9, retention="permanent", expires_at=now - timedelta(days=1))
    pinned = memory_at(
        user, now=now, strength=0.9, retention="transient", pinned=True, expires_at=now - timedelta(days=1)
    )

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now)

    # then all three stay active: long memories fade through decay, the others are kept on purpose
    for memory in (long_fact, permanent, pinned):
        memory.refresh_from_db()
        assert memory.status == "active"
    assert run.counts["expire"] == {"expired": 0}


def test_archived_todo_expires_too(user, now):
    # given an archived todo past its expiry
    todo = memory_at(user, now=now, category="todo", status="archived", expires_at=now - timedelta(days=2))

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then it is forgotten
    todo.refresh_from_db()
    assert todo.status == "forgotten"
    event = MemoryEvent.objects.get(memory=todo, event_type="expire")
    assert (event.before["status"], event.after["status"]) == ("archived", "forgotten")
