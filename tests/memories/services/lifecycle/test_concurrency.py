"""Two runs for one owner at once: the advisory lock lets exactly one do the work."""

import threading

import pytest
from django.db import connection

from memories.models import LifecycleRun, MemoryEvent
from memories.services.lifecycle import runner
from tests.factories import UserFactory
from tests.memories.services.lifecycle.conftest import memory_at


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_for_one_owner_do_the_work_once(monkeypatch, now):
    # given an owner with memories due for decay
    owner = UserFactory(username="alice")
    memories = [memory_at(owner, now=now, days=17, strength=0.6) for _ in range(3)]
    # and a first step that holds the first run inside the lock until told to go on
    inside, release = threading.Event(), threading.Event()
    real_drain = runner.STEPS[0][1]

    def held_drain(run):
        inside.set()
        assert release.wait(timeout=30)
        return real_drain(run)

    monkeypatch.setattr(runner, "STEPS", (("drain", held_drain), *runner.STEPS[1:]))
    results = {}

    def run(name):
        try:
            results[name] = runner.lifecycle_run(owner=owner, now=now)
        finally:
            connection.close()

    # when a second run starts while the first holds the lock
    first = threading.Thread(target=run, args=("first",))
    first.start()
    assert inside.wait(timeout=30)
    second = threading.Thread(target=run, args=("second",))
    second.start()
    second.join(timeout=30)
    release.set()
    first.join(timeout=60)

    # then the second returned at once without doing anything, the first did all the work
    assert results["second"].status == "failed"
    assert results["second"].error == runner.LOCK_BUSY_ERROR
    assert results["second"].steps == []
    assert results["first"].status == "completed"
    assert results["first"].counts["decay"] == {"decayed": 3, "checkpoints": 3}
    # and every memory decayed exactly once
    for memory in memories:
        memory.refresh_from_db()
        assert memory.strength == pytest.approx(0.6 * 0.99**10, abs=1e-12)
        assert MemoryEvent.objects.filter(memory=memory, event_type="decay").count() == 1
    assert set(LifecycleRun.objects.filter(owner=owner).values_list("status", flat=True)) == {"completed", "failed"}


@pytest.mark.django_db(transaction=True)
def test_the_lock_is_released_after_a_run(now):
    # given a finished run
    owner = UserFactory(username="alice")
    memory_at(owner, now=now, days=17)
    runner.lifecycle_run(owner=owner, now=now)

    # when another run starts, from another connection
    result = {}

    def run():
        try:
            result["run"] = runner.lifecycle_run(owner=owner, now=now)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)

    # then it gets the lock and completes (finding nothing left to decay)
    assert result["run"].status == "completed"
    assert result["run"].counts["decay"] == {"decayed": 0, "checkpoints": 0}


@pytest.mark.django_db(transaction=True)
def test_the_lock_is_released_when_a_run_raises(monkeypatch, now):
    # given a run interrupted by an exception that is not a step failure (e.g. a KeyboardInterrupt)
    owner = UserFactory(username="alice")

    def interrupted(run):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "STEPS", (("drain", interrupted),))
    with pytest.raises(KeyboardInterrupt):
        runner.lifecycle_run(owner=owner, now=now)
    monkeypatch.undo()

    # when the next run starts
    run = runner.lifecycle_run(owner=owner, now=now)

    # then it was not blocked, and the interrupted one is recorded as failed
    assert run.status == "completed"
    statuses = list(LifecycleRun.objects.filter(owner=owner).order_by("pk").values_list("status", flat=True))
    assert statuses == ["failed", "completed"]
