"""The extraction tasks: run a job once, sweep lost ones, survive a broker outage (in-process, eager)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from memories import tasks
from memory_project.celery import BrokerTolerantTask, app
from sessions.models import ExtractionJob
from tests.extraction_jobs import job_at, locks_held_here
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory(username="alice")


def _done(*, job):
    ExtractionJob.objects.filter(pk=job.pk).update(status="done", finished_at=timezone.now())


def test_run_marks_failure_without_inline_retries_in_eager_mode(owner, monkeypatch):
    job = job_at(owner)

    def boom(*, job):
        raise ValueError("LLM returned garbage")

    monkeypatch.setattr("memories.services.extraction_jobs.extraction_job_process", boom)

    result = tasks.extraction_job_run.delay(str(job.pk))

    job.refresh_from_db()
    assert result.get() == "failed"
    assert (job.status, job.attempts) == ("failed", 1)
    assert job.last_error == "ValueError: LLM returned garbage"
    assert locks_held_here() == 0


def test_run_twice_processes_once(owner, monkeypatch):
    job = job_at(owner)
    calls = []
    monkeypatch.setattr(
        "memories.services.extraction_jobs.extraction_job_process",
        lambda *, job: (calls.append(job.pk), _done(job=job)),
    )

    first = tasks.extraction_job_run.delay(str(job.pk)).get()
    second = tasks.extraction_job_run.delay(str(job.pk)).get()

    assert (first, second) == ("done", "skipped")
    assert calls == [job.pk]


def test_sweeper_runs_due_jobs_and_spaces_out_resends(owner, settings, monkeypatch):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    job = job_at(owner, age=timedelta(minutes=5))
    sent = []
    monkeypatch.setattr(tasks.extraction_job_run, "delay", lambda job_id: sent.append(job_id) or object())

    assert tasks.extraction_jobs_sweep.delay().get() == 1
    assert tasks.extraction_jobs_sweep.delay().get() == 0
    assert sent == [str(job.pk)]


def test_sweeper_stops_while_the_broker_is_down(owner, settings, monkeypatch):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    job = job_at(owner, age=timedelta(minutes=5))
    job_at(owner, age=timedelta(minutes=5))
    monkeypatch.setattr(tasks.extraction_job_run, "delay", lambda job_id: None)

    assert tasks.extraction_jobs_sweep.delay().get() == 0
    job.refresh_from_db()
    assert job.updated_at < timezone.now() - timedelta(minutes=4)


def test_publishing_with_the_broker_down_returns_none(monkeypatch):
    def unreachable(self, *args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr("celery.app.task.Task.apply_async", unreachable)

    assert BrokerTolerantTask.apply_async(tasks.extraction_job_run, ("x",)) is None


def test_the_tasks_keep_the_names_queued_messages_and_beat_rows_use():
    # given the names the tasks had while they lived in sessions/tasks.py
    names = {
        "sessions.tasks.extraction_job_run": tasks.extraction_job_run,
        "sessions.tasks.extraction_jobs_sweep": tasks.extraction_jobs_sweep,
        "sessions.tasks.turn_embeddings_task": tasks.turn_embeddings_task,
        "sessions.tasks.turn_embeddings_sweep": tasks.turn_embeddings_sweep,
    }

    # when the worker looks them up, then they are the tasks in memories.tasks
    assert {name: app.tasks[name] for name in names} == names
