"""The durable job queue's entry points: claim, run, sweep, idle sessions (in-process, eager)."""

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError

from memory_project.celery import BrokerTolerantTask
from sessions import tasks
from sessions.models import ChatSession, ExtractionJob
from tests.factories import ChatSessionFactory, ConversationTurnFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory(username="alice")


def _job(owner, *, status="pending", attempts=0, age=timedelta(0), claimed_age=None, **kwargs) -> ExtractionJob:
    session = ChatSessionFactory(owner=owner)
    job = ExtractionJob.objects.create(owner=owner, session=session, kind="session_end", **kwargs)
    now = timezone.now()
    ExtractionJob.objects.filter(pk=job.pk).update(
        status=status,
        attempts=attempts,
        updated_at=now - age,
        claimed_at=None if claimed_age is None else now - claimed_age,
    )
    job.refresh_from_db()
    return job


class OtherWorker:
    """A second database session holding a job's lock, as a live worker would."""

    def __init__(self, job):
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        params.pop("prepare_threshold", None)
        self.conn = psycopg.connect(**params, autocommit=True)
        self.conn.execute("SELECT pg_advisory_lock(%s, %s)", [tasks.JOB_LOCK_NAMESPACE, tasks._job_lock_key(job.pk)])

    def die(self):
        self.conn.close()


def _locks_held_here() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND pid = pg_backend_pid()",
            [tasks.JOB_LOCK_NAMESPACE],
        )
        return cursor.fetchone()[0]


def test_claim_takes_a_pending_job_once(owner):
    job = _job(owner)

    claimed = tasks.extraction_job_claim(job.pk)
    tasks.extraction_job_release(job.pk)

    assert claimed is not None
    assert (claimed.status, claimed.attempts) == ("running", 1)
    assert claimed.claimed_at is not None
    assert _locks_held_here() == 0


def test_a_job_held_by_a_live_worker_is_not_claimed_until_that_worker_dies(owner):
    job = _job(owner, status="running", attempts=1, claimed_age=timedelta(hours=2))
    other = OtherWorker(job)
    try:
        assert tasks.extraction_job_claim(job.pk) is None
    finally:
        other.die()

    reclaimed = tasks.extraction_job_claim(job.pk)
    tasks.extraction_job_release(job.pk)

    assert reclaimed is not None and reclaimed.attempts == 2


@pytest.mark.parametrize(
    ("status", "attempts", "claimable"),
    [("done", 1, False), ("failed", 5, False), ("failed", 2, True), ("pending", 0, True)],
)
def test_claim_respects_status_and_attempts(owner, status, attempts, claimable):
    job = _job(owner, status=status, attempts=attempts)

    claimed = tasks.extraction_job_claim(job.pk)
    tasks.extraction_job_release(job.pk)

    assert (claimed is not None) is claimable
    assert _locks_held_here() == 0


def test_claim_without_hold_lets_the_lock_go(owner):
    job = _job(owner)

    claimed = tasks.extraction_job_claim(job.pk, hold=False)

    assert claimed is not None and claimed.status == "running"
    assert _locks_held_here() == 0


def _done(*, job):
    ExtractionJob.objects.filter(pk=job.pk).update(status="done", finished_at=timezone.now())


def test_run_marks_failure_without_inline_retries_in_eager_mode(owner, monkeypatch):
    job = _job(owner)

    def boom(*, job):
        raise ValueError("LLM returned garbage")

    monkeypatch.setattr("sessions.services.extraction.extraction_job_process", boom)

    result = tasks.extraction_job_run.delay(str(job.pk))

    job.refresh_from_db()
    assert result.get() == "failed"
    assert (job.status, job.attempts) == ("failed", 1)
    assert job.last_error == "ValueError: LLM returned garbage"
    assert _locks_held_here() == 0


def test_run_twice_processes_once(owner, monkeypatch):
    job = _job(owner)
    calls = []
    monkeypatch.setattr(
        "sessions.services.extraction.extraction_job_process", lambda *, job: (calls.append(job.pk), _done(job=job))
    )

    first = tasks.extraction_job_run.delay(str(job.pk)).get()
    second = tasks.extraction_job_run.delay(str(job.pk)).get()

    assert (first, second) == ("done", "skipped")
    assert calls == [job.pk]


def test_sweeper_selects_lost_failed_and_abandoned_jobs(owner, settings):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    old, recent = timedelta(minutes=5), timedelta(seconds=5)
    due = [
        _job(owner, age=old),
        _job(owner, status="failed", attempts=2, age=old),
        _job(owner, status="running", attempts=1, claimed_age=old),
    ]
    live = _job(owner, status="running", attempts=1, claimed_age=old)
    not_due = [
        _job(owner, age=recent),
        _job(owner, status="failed", attempts=5, age=old),
        _job(owner, status="done", attempts=1, age=old),
        _job(owner, status="running", attempts=1, claimed_age=recent),
        live,
    ]
    other = OtherWorker(live)
    try:
        selected = {j.pk for j in tasks.extraction_jobs_due()}
    finally:
        other.die()

    assert selected == {j.pk for j in due}
    assert not selected & {j.pk for j in not_due}


def test_sweeper_runs_due_jobs_and_spaces_out_resends(owner, settings, monkeypatch):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    job = _job(owner, age=timedelta(minutes=5))
    sent = []
    monkeypatch.setattr(tasks.extraction_job_run, "delay", lambda job_id: sent.append(job_id) or object())

    assert tasks.extraction_jobs_sweep.delay().get() == 1
    assert tasks.extraction_jobs_sweep.delay().get() == 0
    assert sent == [str(job.pk)]


def test_sweeper_stops_while_the_broker_is_down(owner, settings, monkeypatch):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    job = _job(owner, age=timedelta(minutes=5))
    _job(owner, age=timedelta(minutes=5))
    monkeypatch.setattr(tasks.extraction_job_run, "delay", lambda job_id: None)

    assert tasks.extraction_jobs_sweep.delay().get() == 0
    job.refresh_from_db()
    assert job.updated_at < timezone.now() - timedelta(minutes=4)


def test_publishing_with_the_broker_down_returns_none(monkeypatch):
    def unreachable(self, *args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr("celery.app.task.Task.apply_async", unreachable)

    assert BrokerTolerantTask.apply_async(tasks.extraction_job_run, ("x",)) is None


def test_idle_sessions_are_ended_once(owner, settings, monkeypatch):
    settings.SESSION_IDLE_TIMEOUT_MINUTES = 30
    monkeypatch.setattr("sessions.services.sessions.extraction_job_dispatch_on_commit", lambda **kw: None)
    idle = ChatSessionFactory(owner=owner)
    for n in range(3):
        ConversationTurnFactory(session=idle, owner=owner, sequence=n + 1)
    ChatSession.objects.filter(pk=idle.pk).update(turn_count=3, last_activity_at=timezone.now() - timedelta(minutes=31))
    active = ChatSessionFactory(owner=owner)
    ChatSession.objects.filter(pk=active.pk).update(last_activity_at=timezone.now() - timedelta(minutes=29))

    first = tasks.sessions_idle_end.delay().get()
    second = tasks.sessions_idle_end.delay().get()

    idle.refresh_from_db()
    active.refresh_from_db()
    assert (first, second) == (1, 0)
    assert idle.status == "ended" and active.status == "open"
    job = ExtractionJob.objects.get(session=idle)
    assert (job.kind, job.range_start, job.range_end, job.status) == ("session_end", 1, 3, "pending")
