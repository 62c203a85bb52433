"""The in-process stand-in for beat (embedded mode): same schedule, same tasks, real thread."""

import threading
import time
from datetime import timedelta

import pytest
from celery.schedules import crontab
from django.db import connection
from django.utils import timezone

from memory_project.celery import PeriodicRunner, app, periodic_runner_start
from sessions.models import ExtractionJob
from tests.factories import ChatSessionFactory, UserFactory
from tests.support import periodic_leaders, wait_for


def test_the_runner_uses_the_beat_schedule():
    runner = PeriodicRunner()

    assert set(runner.entries) == {
        "extraction-jobs-sweep",
        "sessions-idle-end",
        "integrations-sweep",
        "import-jobs-sweep",
        "turn-embeddings-sweep",
        "lifecycle-nightly",
        "access-log-prune",
    }
    assert runner.entries["integrations-sweep"]["task"] == "integrations.tasks.integrations_sweep"
    assert runner.entries["lifecycle-nightly"]["schedule"] == crontab(hour=3, minute=0)
    assert runner.entries["extraction-jobs-sweep"]["schedule"].run_every == timedelta(seconds=60)
    for entry in runner.entries.values():
        assert entry["task"] in app.tasks


@pytest.mark.django_db(transaction=True)
def test_the_runner_sweeps_pending_jobs_in_process(settings, monkeypatch):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 1
    owner = UserFactory(username="alice")
    job = ExtractionJob.objects.create(owner=owner, session=ChatSessionFactory(owner=owner), kind="session_end")
    ExtractionJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
    processed = []

    def process(*, job):
        processed.append(job.pk)
        ExtractionJob.objects.filter(pk=job.pk).update(status="done")

    monkeypatch.setattr("memories.services.extraction_jobs.extraction_job_process", process)
    schedule = {
        "sweep": {"task": "sessions.tasks.extraction_jobs_sweep", "schedule": 0.2},
        "nightly": {"task": "memories.tasks.lifecycle_nightly", "schedule": crontab(hour=3, minute=0)},
    }
    runner = periodic_runner_start(schedule, max_sleep=0.1)
    try:
        assert wait_for(lambda: ExtractionJob.objects.get(pk=job.pk).status == "done")
    finally:
        runner.stop()

    assert not runner.is_alive()
    assert processed == [job.pk]


def test_the_runner_repeats_on_its_interval_and_survives_failures(monkeypatch):
    runs = []

    def flaky(self, args=(), kwargs=None, **options):
        runs.append(time.monotonic())
        raise RuntimeError("boom")

    monkeypatch.setattr(type(app.tasks["sessions.tasks.sessions_idle_end"]), "apply", flaky)
    runner = periodic_runner_start({"idle": {"task": "sessions.tasks.sessions_idle_end", "schedule": 0.2}})
    try:
        assert wait_for(lambda: len(runs) >= 3, timeout=5)
    finally:
        runner.stop()

    assert runs[1] - runs[0] >= 0.15


@pytest.mark.django_db(transaction=True)
def test_only_one_of_two_runners_runs_the_schedule_and_the_other_takes_over_when_it_stops(monkeypatch):
    # given two runners, as two web processes would start them, each with its own lock connection
    runs = []

    def record(self, args=(), kwargs=None, **options):
        runs.append((threading.current_thread().name, time.monotonic()))

    monkeypatch.setattr(type(app.tasks["sessions.tasks.sessions_idle_end"]), "apply", record)
    schedule = {"idle": {"task": "sessions.tasks.sessions_idle_end", "schedule": 0.1}}
    first = PeriodicRunner(schedule, max_sleep=0.1)
    first.name = "first"
    first.start()
    assert wait_for(lambda: first.leading)
    second = PeriodicRunner(schedule, max_sleep=0.1)
    second.name = "second"
    second.start()
    try:
        # when both have been running for a while
        assert wait_for(lambda: len(runs) >= 5)
        time.sleep(0.5)
        both_alive = list(runs)

        # and the leader stops (its lock connection closes with it)
        first.stop()
        stopped_at = time.monotonic()
        assert wait_for(lambda: any(name == "second" for name, _ in runs))
    finally:
        first.stop()
        second.stop()

    # then only the first ran while both were up, and only the second ran after it stopped
    assert {name for name, _ in both_alive} == {"first"}
    assert {name for name, at in runs if at > stopped_at} == {"second"}
    assert first.leading is True and second.leading is True


@pytest.mark.django_db(transaction=True)
def test_a_runner_whose_lock_connection_dies_stops_leading():
    # given a runner that leads
    runner = PeriodicRunner({}, max_sleep=0.1)
    runner.start()
    try:
        assert wait_for(lambda: runner.leading)
        pid = runner.leadership._connection.info.backend_pid

        # when its lock connection is killed from outside (a database restart, a network cut)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])

        # then it notices, reconnects and leads again on a new connection holding the lock
        # (asked of the lock table: `leading` stays True from before until the runner's next check)
        assert wait_for(lambda: set(periodic_leaders()) not in (set(), {pid}))
        assert wait_for(lambda: runner.leading)
        holders = set(periodic_leaders())
        new_pid = runner.leadership._connection.info.backend_pid
    finally:
        runner.stop()

    assert new_pid != pid
    assert holders == {new_pid}
