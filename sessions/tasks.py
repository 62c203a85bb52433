"""Thin Celery entry points: claim the row with a conditional UPDATE, call a service, retry.

The ExtractionJob row is the queue of record; a broker message only says "look at this row now".
A lost message (broker down, worker killed) is recovered by `extraction_jobs_sweep`, and a
duplicate one does nothing because only one worker at a time can claim a job.
"""

import logging
import zlib
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory_project.celery import BrokerTolerantTask
from sessions.models import ChatSession, ExtractionJob

logger = logging.getLogger(__name__)

# Advisory-lock namespace (first of the two int4 keys) for "a live worker is processing job X".
# Session-level, so it is released when the worker's database connection goes away with it.
JOB_LOCK_NAMESPACE = 0x4A0B
JOB_LOCK_WAIT_MS = 2000
SWEEP_BATCH = 500
IDLE_BATCH = 200


def _job_lock_key(job_id) -> int:
    # int4 range; a collision only makes one job wait for the next sweep, never run twice.
    return zlib.crc32(str(job_id).encode()) - 2**31


def _job_lock_try(job_id) -> bool:
    """Take the job's lock, waiting briefly: a worker killed a moment ago may still have a backend
    that has not yet noticed, and its message is often redelivered within that moment."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = {int(JOB_LOCK_WAIT_MS)}")
            # Session-level: the lock outlives this transaction, until released or disconnected.
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [JOB_LOCK_NAMESPACE, _job_lock_key(job_id)])
            # Within a caller's transaction SET LOCAL would otherwise last until that one ends.
            cursor.execute("SET LOCAL lock_timeout TO DEFAULT")
        return True
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == "55P03":  # lock_not_available: a live worker has it
            return False
        raise


def _job_lock_release(job_id) -> None:
    if connection.connection is None:  # the connection (and its locks) is already gone
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [JOB_LOCK_NAMESPACE, _job_lock_key(job_id)])


def _held_job_lock_keys() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = %s"
            " AND objsubid = 2",
            [JOB_LOCK_NAMESPACE],
        )
        # pg_locks shows the int4 key as an unsigned oid.
        return {(row[0] if row[0] < 2**31 else row[0] - 2**32) for row in cursor.fetchall()}


def extraction_job_claim(job_id, *, hold: bool = True) -> ExtractionJob | None:
    """Claim a job; None when a live worker has it, or it is finished or out of attempts.

    A `running` job whose lock is free was abandoned by a worker that died, and is re-claimed.
    The caller keeps the job's lock while it processes the job, so nobody takes it over meanwhile,
    and must call `extraction_job_release` after; with `hold=False` the lock is let go at once.
    """
    if not _job_lock_try(job_id):
        return None
    now = timezone.now()
    claimable = (
        Q(status=ExtractionJob.JobStatus.PENDING)
        | Q(status=ExtractionJob.JobStatus.FAILED, attempts__lt=F("max_attempts"))
        | Q(status=ExtractionJob.JobStatus.RUNNING)
    )
    try:
        claimed = ExtractionJob.objects.filter(claimable, pk=job_id).update(
            status=ExtractionJob.JobStatus.RUNNING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now
        )
    except Exception:
        extraction_job_release(job_id)
        raise
    if not claimed or not hold:
        extraction_job_release(job_id)
    return ExtractionJob.objects.select_related("session", "owner").get(pk=job_id) if claimed else None


def extraction_job_release(job_id) -> None:
    try:
        _job_lock_release(job_id)
    except Exception:  # a broken connection has dropped the lock already
        logger.debug("could not release the lock of job %s", job_id, exc_info=True)


def retry_countdown(attempts: int) -> int:
    return min(300, 2**attempts)


@shared_task(bind=True, base=BrokerTolerantTask, acks_late=True, max_retries=None)
def extraction_job_run(self, job_id: str):
    from sessions.services.extraction import extraction_job_process

    job = extraction_job_claim(job_id)
    if job is None:
        return "skipped"
    try:
        extraction_job_process(job=job)
    except Exception as exc:
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=ExtractionJob.JobStatus.FAILED,
            last_error=f"{exc.__class__.__name__}: {exc}"[:2000],
            updated_at=timezone.now(),
        )
        logger.warning("extraction job %s failed (attempt %s/%s): %s", job.pk, job.attempts, job.max_attempts, exc)
        # In-process (eager) retries would run back to back inside the request; the periodic sweep
        # retries the failed row later instead.
        if job.attempts < job.max_attempts and not self.request.is_eager:
            raise self.retry(exc=exc, countdown=retry_countdown(job.attempts)) from exc
        return "failed"
    finally:
        extraction_job_release(job.pk)
    return "done"


def extraction_jobs_due(*, now=None) -> list[ExtractionJob]:
    """Jobs whose message was lost or whose worker died: pending or failed (with attempts left) for
    longer than EXTRACTION_SWEEP_AFTER_SECONDS, or running under a claim that old whose worker no
    longer holds the job's lock."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.EXTRACTION_SWEEP_AFTER_SECONDS)
    due = (
        Q(status=ExtractionJob.JobStatus.PENDING, updated_at__lt=cutoff)
        | Q(status=ExtractionJob.JobStatus.FAILED, attempts__lt=F("max_attempts"), updated_at__lt=cutoff)
        | Q(status=ExtractionJob.JobStatus.RUNNING, claimed_at__lt=cutoff)
    )
    jobs = list(ExtractionJob.objects.filter(due).order_by("created_at")[:SWEEP_BATCH])
    held = _held_job_lock_keys() if any(j.status == ExtractionJob.JobStatus.RUNNING for j in jobs) else set()
    return [j for j in jobs if not (j.status == ExtractionJob.JobStatus.RUNNING and _job_lock_key(j.pk) in held)]


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
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


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def sessions_idle_end() -> int:
    """End sessions idle for SESSION_IDLE_TIMEOUT_MINUTES; ending is idempotent, so overlapping
    runs are harmless."""
    from sessions.services.sessions import session_end

    cutoff = timezone.now() - timedelta(minutes=settings.SESSION_IDLE_TIMEOUT_MINUTES)
    idle = ChatSession.objects.filter(status=ChatSession.SessionStatus.OPEN, last_activity_at__lt=cutoff)
    ended = 0
    for session in idle.order_by("last_activity_at")[:IDLE_BATCH]:
        try:
            session_end(session=session)
            ended += 1
        except Exception:  # one bad session must not stop the others from ending
            logger.exception("could not end idle session %s", session.pk)
    if ended:
        logger.info("ended %s idle session(s)", ended)
    return ended


@shared_task(
    bind=True, base=BrokerTolerantTask, acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=5
)
def turn_embeddings_task(self) -> int:
    """Give stored turns their vectors (sent after a turn is stored); returns how many it embedded."""
    from sessions.services.turn_embeddings import fill_started, turn_embeddings_fill

    if self.request.is_eager:
        fill_started()
    return turn_embeddings_fill()


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def turn_embeddings_sweep() -> int:
    """Periodic: the turns whose fill never ran (a worker killed, a broker down) get their vectors."""
    from sessions.services.turn_embeddings import turn_embeddings_fill

    filled = turn_embeddings_fill()
    if filled:
        logger.info("sweep embedded %s turn(s) left without a vector", filled)
    return filled
