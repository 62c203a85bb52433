"""Thin Celery entry points for the memories app: take ids, call a service, retry with backoff."""

import logging
from datetime import timedelta

from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import OperationalError
from django.utils import timezone

from memories.models import LifecycleRun
from memories.services.access import memory_access_apply
from memories.services.extraction_jobs import extraction_job_execute, extraction_jobs_due
from memories.services.import_jobs import import_job_dispatch, import_job_run, import_jobs_due
from memories.services.lifecycle import LOCK_BUSY_ERROR, lifecycle_owners, lifecycle_run
from memories.services.search_stats import search_stats_refresh
from memories.services.turn_embeddings import fill_started, turn_embeddings_fill
from memory_project.celery import RETRY_WITH_BACKOFF, BrokerTolerantTask
from sessions.models import ExtractionJob

logger = logging.getLogger(__name__)

# A nightly run already completed this recently for an owner makes a second nightly message for
# that owner (two beats, a redelivery) a no-op.
NIGHTLY_DEDUP_WINDOW = timedelta(hours=12)


@shared_task(base=BrokerTolerantTask, **RETRY_WITH_BACKOFF, max_retries=3)
def memory_access_task(memory_ids: list[str]) -> int:
    return memory_access_apply(memory_ids=memory_ids)


@shared_task(base=BrokerTolerantTask, **RETRY_WITH_BACKOFF, max_retries=3)
def search_stats_refresh_task(owner_id: int, corpus: str, max_age_seconds: float | None = None) -> bool:
    return search_stats_refresh(owner_id=owner_id, corpus=corpus, max_age_seconds=max_age_seconds)


class LifecycleIncomplete(Exception):
    """A run finished with failed steps; the whole run is retried (every step is idempotent)."""


@shared_task(**RETRY_WITH_BACKOFF, max_retries=3)
def lifecycle_nightly() -> int:
    """Fan out one lifecycle task per owner, so owners run in parallel on the workers and one
    owner's failure is retried on its own."""
    owner_ids = list(lifecycle_owners().values_list("pk", flat=True))
    for owner_id in owner_ids:
        lifecycle_owner_run.delay(owner_id, trigger="nightly")
    logger.info("nightly lifecycle queued for %s owner(s)", len(owner_ids))
    return len(owner_ids)


@shared_task(bind=True, acks_late=True, max_retries=4)
def lifecycle_owner_run(self, owner_id: int, trigger: str = "manual") -> dict:
    """One owner's lifecycle. lifecycle_run holds a per-owner advisory lock: a run that finds
    another in progress records itself as such and returns, and is not retried (the other one is
    doing the work). A run with failed steps is retried whole, with backoff; in-process (eager)
    it is not, since the next night's run redoes it anyway."""
    owner = get_user_model().objects.filter(pk=owner_id, is_active=True).first()
    if owner is None:
        return {"skipped": "owner not found"}
    if trigger == "nightly":
        recent = LifecycleRun.objects.filter(
            owner=owner,
            trigger="nightly",
            status=LifecycleRun.RunStatus.COMPLETED,
            started_at__gte=timezone.now() - NIGHTLY_DEDUP_WINDOW,
        )
        if recent.exists():
            return {"skipped": "already ran tonight"}
    try:
        run = lifecycle_run(owner=owner, trigger=trigger)
    except OperationalError as exc:  # database unreachable: nothing was done, try again later
        if self.request.is_eager:
            raise
        raise self.retry(exc=exc, countdown=lifecycle_retry_countdown(self.request.retries)) from exc
    result = {"run_id": run.pk, "status": run.status}
    if run.status == LifecycleRun.RunStatus.FAILED:
        if run.error == LOCK_BUSY_ERROR:
            return {**result, "skipped": LOCK_BUSY_ERROR}
        if not self.request.is_eager and self.request.retries < self.max_retries:
            exc = LifecycleIncomplete(f"lifecycle run {run.pk} for owner {owner_id}: {run.error[:500]}")
            raise self.retry(exc=exc, countdown=lifecycle_retry_countdown(self.request.retries))
    return result


def lifecycle_retry_countdown(retries: int) -> int:
    return min(1800, 30 * 2**retries)


@shared_task(bind=True, base=BrokerTolerantTask, acks_late=True, max_retries=3)
def import_job_task(self, job_id: str) -> str:
    """One background import (memories.services.import_jobs); an unexpected error retries it with backoff."""
    try:
        return import_job_run(job_id=job_id)
    except Exception as exc:
        raise self.retry(exc=exc, countdown=min(300, 10 * 2**self.request.retries)) from exc


@shared_task(**RETRY_WITH_BACKOFF, max_retries=3)
def import_jobs_sweep() -> int:
    """Re-send import jobs whose message or worker was lost."""
    due = import_jobs_due()
    for job_id in due:
        import_job_dispatch(job_id=job_id)
    return len(due)


# The extraction and turn-vector tasks keep the names they had in sessions/tasks.py: messages already
# queued, and beat's PeriodicTask rows (copied from CELERY_BEAT_SCHEDULE), name them so.


def extraction_retry_countdown(attempts: int) -> int:
    return min(300, 2**attempts)


@shared_task(
    name="sessions.tasks.extraction_job_run", bind=True, base=BrokerTolerantTask, acks_late=True, max_retries=None
)
def extraction_job_run(self, job_id: str):
    outcome = extraction_job_execute(job_id=job_id)
    if outcome.status == "failed":
        job = outcome.job
        logger.warning(
            "extraction job %s failed (attempt %s/%s): %s", job.pk, job.attempts, job.max_attempts, outcome.error
        )
        # In-process (eager) retries would run back to back inside the request; the periodic sweep
        # retries the failed row later instead.
        if job.attempts < job.max_attempts and not self.request.is_eager:
            raise self.retry(exc=outcome.error, countdown=extraction_retry_countdown(job.attempts)) from outcome.error
    return outcome.status


@shared_task(name="sessions.tasks.extraction_jobs_sweep", **RETRY_WITH_BACKOFF, max_retries=3)
def extraction_jobs_sweep() -> int:
    """Re-send jobs that nobody is working on; returns how many were sent."""
    sent = 0
    for job in extraction_jobs_due():
        if extraction_job_run.delay(str(job.pk)) is None:
            break  # broker still down: the next sweep tries again
        # Bumping updated_at spaces out re-sends of a job that sits behind a long queue.
        ExtractionJob.objects.filter(pk=job.pk, status=job.status).update(updated_at=timezone.now())
        sent += 1
    if sent:
        logger.info("sweeper re-sent %s extraction job(s)", sent)
    return sent


@shared_task(
    name="sessions.tasks.turn_embeddings_task", bind=True, base=BrokerTolerantTask, **RETRY_WITH_BACKOFF, max_retries=5
)
def turn_embeddings_task(self) -> int:
    """Give stored turns their vectors (sent after a turn is stored); returns how many it embedded."""
    if self.request.is_eager:
        fill_started()
    return turn_embeddings_fill()


@shared_task(name="sessions.tasks.turn_embeddings_sweep", **RETRY_WITH_BACKOFF, max_retries=3)
def turn_embeddings_sweep() -> int:
    """Periodic: the turns whose fill never ran (a worker killed, a broker down) get their vectors."""
    filled = turn_embeddings_fill()
    if filled:
        logger.info("sweep embedded %s turn(s) left without a vector", filled)
    return filled
