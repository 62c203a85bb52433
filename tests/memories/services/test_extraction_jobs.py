"""The extraction queue's claim (one live worker per job) and the sweep's choice of lost jobs."""

from datetime import timedelta

import pytest

from memories.services.extraction_jobs import extraction_job_claim, extraction_job_release, extraction_jobs_due
from tests.extraction_jobs import OtherWorker, job_at, locks_held_here
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory(username="alice")


def test_claim_takes_a_pending_job_once(owner):
    job = job_at(owner)

    claimed = extraction_job_claim(job.pk)
    extraction_job_release(job.pk)

    assert claimed is not None
    assert (claimed.status, claimed.attempts) == ("running", 1)
    assert claimed.claimed_at is not None
    assert locks_held_here() == 0


def test_a_job_held_by_a_live_worker_is_not_claimed_until_that_worker_dies(owner):
    job = job_at(owner, status="running", attempts=1, claimed_age=timedelta(hours=2))
    other = OtherWorker(job)
    try:
        assert extraction_job_claim(job.pk) is None
    finally:
        other.die()

    reclaimed = extraction_job_claim(job.pk)
    extraction_job_release(job.pk)

    assert reclaimed is not None and reclaimed.attempts == 2


@pytest.mark.parametrize(
    ("status", "attempts", "claimable"),
    [("done", 1, False), ("failed", 5, False), ("failed", 2, True), ("pending", 0, True)],
)
def test_claim_respects_status_and_attempts(owner, status, attempts, claimable):
    job = job_at(owner, status=status, attempts=attempts)

    claimed = extraction_job_claim(job.pk)
    extraction_job_release(job.pk)

    assert (claimed is not None) is claimable
    assert locks_held_here() == 0


def test_claim_without_hold_lets_the_lock_go(owner):
    job = job_at(owner)

    claimed = extraction_job_claim(job.pk, hold=False)

    assert claimed is not None and claimed.status == "running"
    assert locks_held_here() == 0


def test_sweeper_selects_lost_failed_and_abandoned_jobs(owner, settings):
    settings.EXTRACTION_SWEEP_AFTER_SECONDS = 60
    old, recent = timedelta(minutes=5), timedelta(seconds=5)
    due = [
        job_at(owner, age=old),
        job_at(owner, status="failed", attempts=2, age=old),
        job_at(owner, status="running", attempts=1, claimed_age=old),
    ]
    live = job_at(owner, status="running", attempts=1, claimed_age=old)
    not_due = [
        job_at(owner, age=recent),
        job_at(owner, status="failed", attempts=5, age=old),
        job_at(owner, status="done", attempts=1, age=old),
        job_at(owner, status="running", attempts=1, claimed_age=recent),
        live,
    ]
    other = OtherWorker(live)
    try:
        selected = {j.pk for j in extraction_jobs_due()}
    finally:
        other.die()

    assert selected == {j.pk for j in due}
    assert not selected & {j.pk for j in not_due}
