"""The in-process stand-in for beat (embedded mode): same schedule, same tasks, real thread."""

import time
from datetime import timedelta

import pytest
from celery.schedules import crontab
from django.core.management import call_command
from django.utils import timezone

from memory_project import celery as celery_module
from memory_project.celery import PeriodicRunner, app, periodic_runner_start
from sessions.models import ExtractionJob
from tests.factories import ChatSessionFactory, UserFactory


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_the_runner_uses_the_beat_schedule():
    runner = PeriodicRunner()

    assert set(runner.entries) == {
        "extraction-jobs-sweep",
        "sessions-idle-end",
        "integrations-sweep",
        "import-jobs-sweep",
        "lifecycle-nightly",
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

    monkeypatch.setattr("sessions.services.extraction.extraction_job_process", process)
    schedule = {
        "sweep": {"task": "sessions.tasks.extraction_jobs_sweep", "schedule": 0.2},
        "nightly": {"task": "memories.tasks.lifecycle_nightly", "schedule": crontab(hour=3, minute=0)},
    }
    runner = periodic_runner_start(schedule, max_sleep=0.1)
    try:
        assert _wait_for(lambda: ExtractionJob.objects.get(pk=job.pk).status == "done")
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
        assert _wait_for(lambda: len(runs) >= 3, timeout=5)
    finally:
        runner.stop()

    assert runs[1] - runs[0] >= 0.15


def test_serve_starts_the_runner_only_without_redis(settings, monkeypatch):
    from daphne.cli import CommandLineInterface

    started = []
    monkeypatch.setattr("memories.management.commands.serve.call_command", lambda *a, **k: None)
    monkeypatch.setattr(CommandLineInterface, "run", lambda self, args: None)
    monkeypatch.setattr(celery_module, "periodic_runner_start", lambda: started.append(True))

    settings.REDIS_URL = ""
    call_command("serve", "--no-demo", "--port", "8123")
    settings.REDIS_URL = "redis://127.0.0.1:6379/9"
    call_command("serve", "--no-demo", "--port", "8123")

    assert started == [True]
