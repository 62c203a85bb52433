"""Lifecycle tasks: nightly fan-out per owner, and two concurrent runs for one owner do the work once."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from memories import tasks
from memories.models import LifecycleRun
from memories.services.lifecycle import runner
from tests.factories import MemoryFactory, UserFactory


@pytest.mark.django_db
def test_nightly_fans_out_one_task_per_owner_with_something_to_do(monkeypatch):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    UserFactory(username="idle")
    MemoryFactory(owner=alice)
    MemoryFactory(owner=bob)
    queued = []
    monkeypatch.setattr(tasks.lifecycle_owner_run, "delay", lambda pk, trigger: queued.append((pk, trigger)))

    assert tasks.lifecycle_nightly.delay().get() == 2
    assert sorted(queued) == sorted([(alice.pk, "nightly"), (bob.pk, "nightly")])


@pytest.mark.django_db
def test_a_second_nightly_message_for_an_owner_is_a_no_op():
    owner = UserFactory(username="alice")
    MemoryFactory(owner=owner)

    first = tasks.lifecycle_owner_run.delay(owner.pk, trigger="nightly").get()
    second = tasks.lifecycle_owner_run.delay(owner.pk, trigger="nightly").get()

    assert first["status"] == "completed"
    assert second == {"skipped": "already ran tonight"}
    assert LifecycleRun.objects.filter(owner=owner).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_for_one_owner_do_the_work_once(monkeypatch):
    owner = UserFactory(username="alice")
    old = timezone.now() - timedelta(days=40)
    memory = MemoryFactory(owner=owner, strength=0.6, observed_at=old, last_reinforced_at=old)
    first_inside, release_first = threading.Event(), threading.Event()
    drain = dict(runner.STEPS)["drain"]

    def slow_drain(run):
        first_inside.set()
        release_first.wait(10)
        return drain(run)

    monkeypatch.setattr(runner, "STEPS", (("drain", slow_drain), *runner.STEPS[1:]))
    results = {}

    def run(name):
        from django.db import connection

        try:
            results[name] = tasks.lifecycle_owner_run.apply(args=[owner.pk], kwargs={"trigger": "manual"}).get()
        finally:
            connection.close()

    first = threading.Thread(target=run, args=("first",))
    second = threading.Thread(target=run, args=("second",))
    first.start()
    try:
        assert first_inside.wait(10)
        second.start()
        second.join(20)
    finally:
        release_first.set()
        first.join(30)

    assert results["first"]["status"] == "completed"
    assert results["second"]["skipped"] == runner.LOCK_BUSY_ERROR
    runs = {r.pk: r for r in LifecycleRun.objects.filter(owner=owner)}
    assert len(runs) == 2
    assert len(runs[results["first"]["run_id"]].steps) == len(runner.STEPS)
    assert runs[results["second"]["run_id"]].steps == []
    memory.refresh_from_db()
    assert memory.events.filter(event_type="decay").count() <= 1
