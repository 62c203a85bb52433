"""The run record: steps in order with counts, progress events, failure isolation, draining jobs."""

import pytest

from memories.models import LifecycleRun
from memories.services.lifecycle import runner
from sessions.models import ExtractionJob
from tests.factories import ChatSessionFactory
from tests.memories.services.lifecycle.conftest import memory_at

STEP_NAMES = ["drain", "dedup", "decay", "thresholds", "expire", "attachments", "compress", "digests", "exports", "cap"]


def test_a_run_records_every_step_and_publishes_progress(user, now, monkeypatch):
    # given a memory and a recorder for live events
    memory_at(user, now=now, days=17)
    published = []
    monkeypatch.setattr(runner, "event_publish", lambda **kw: published.append(kw))

    # when the lifecycle runs
    run = runner.lifecycle_run(owner=user, trigger="test", now=now)

    # then the run is completed, with every step done, in order, with its counts
    run.refresh_from_db()
    assert (run.status, run.trigger, run.error) == ("completed", "test", "")
    assert [s["name"] for s in run.steps] == STEP_NAMES
    assert all(s["status"] == "done" for s in run.steps)
    assert set(run.counts) == set(STEP_NAMES)
    assert run.counts["decay"] == {"decayed": 1, "checkpoints": 1}
    assert run.finished_at is not None and run.duration_ms is not None
    # and one lifecycle.progress per step, then lifecycle.completed, all for this owner
    assert [e["type"] for e in published] == ["lifecycle.progress"] * len(STEP_NAMES) + ["lifecycle.completed"]
    assert {e["owner_id"] for e in published} == {user.pk}
    assert [e["data"]["step"] for e in published[:-1]] == STEP_NAMES
    assert published[2]["data"]["counts"] == {"decayed": 1, "checkpoints": 1}
    assert published[-1]["data"] == {
        "run_id": run.pk,
        "status": "completed",
        "counts": run.counts,
        "error": "",
        "duration_ms": run.duration_ms,
    }


def test_a_failing_step_does_not_stop_the_others(user, now, monkeypatch):
    # given a step that raises
    memory = memory_at(user, now=now, days=17)

    def broken(run):
        raise RuntimeError("boom")

    steps = [(name, broken if name == "dedup" else step) for name, step in runner.STEPS]
    monkeypatch.setattr(runner, "STEPS", tuple(steps))

    # when the lifecycle runs
    run = runner.lifecycle_run(owner=user, now=now)

    # then the run failed with that step's error, and the later steps still did their work
    assert run.status == "failed"
    assert run.error == "dedup: RuntimeError: boom"
    assert [s["status"] for s in run.steps] == ["done", "failed"] + ["done"] * (len(STEP_NAMES) - 2)
    memory.refresh_from_db()
    assert memory.strength == pytest.approx(0.6 * 0.99**10, abs=1e-12)


def test_a_run_left_running_by_a_crash_is_closed_by_the_next(user, now):
    # given a run row left "running" by a process that died
    stale = LifecycleRun.objects.create(owner=user, status="running")

    # when the next run starts
    runner.lifecycle_run(owner=user, now=now)

    # then the stale one is marked failed
    stale.refresh_from_db()
    assert (stale.status, stale.error) == ("failed", runner.INTERRUPTED_ERROR)


def _job(session, n, **fields):
    return ExtractionJob.objects.create(
        owner=session.owner, session=session, kind="turn", range_start=n, range_end=n, **fields
    )


def test_leftover_extraction_jobs_are_drained(user, other_user, now, monkeypatch):
    # given pending, retryable, exhausted and done jobs of alice, and a pending job of bob
    session = ChatSessionFactory(owner=user)
    pending = _job(session, 1)
    retry = _job(session, 2, status="failed", attempts=1)
    exhausted = _job(session, 3, status="failed", attempts=5)
    done = _job(session, 4, status="done")
    theirs = _job(ChatSessionFactory(owner=other_user), 1)
    processed = []

    def fake_process(*, job):
        processed.append(job.pk)
        ExtractionJob.objects.filter(pk=job.pk).update(status="done")

    monkeypatch.setattr("memories.services.extraction_jobs.extraction_job_process", fake_process)

    # when the lifecycle runs
    run = runner.lifecycle_run(owner=user, now=now)

    # then alice's claimable jobs ran, oldest first, and nothing else
    assert processed == [pending.pk, retry.pk]
    assert run.counts["drain"] == {"found": 2, "done": 2, "failed": 0, "skipped": 0}
    for job, status in ((exhausted, "failed"), (done, "done"), (theirs, "pending")):
        job.refresh_from_db()
        assert job.status == status


def test_a_failing_job_is_marked_failed_and_counted(user, now, monkeypatch):
    # given a pending job whose processing raises
    job = _job(ChatSessionFactory(owner=user), 1)

    def fake_process(*, job):
        raise ValueError("bad model output")

    monkeypatch.setattr("memories.services.extraction_jobs.extraction_job_process", fake_process)

    # when the lifecycle runs
    run = runner.lifecycle_run(owner=user, now=now)

    # then the job is failed with its error and an attempt used, and the run itself completed
    job.refresh_from_db()
    assert (job.status, job.attempts, job.last_error) == ("failed", 1, "ValueError: bad model output")
    assert run.counts["drain"] == {"found": 1, "done": 0, "failed": 1, "skipped": 0}
    assert run.status == "completed"
