"""Thin Celery entry points: claim the row with a conditional UPDATE, call a service, retry."""

import logging
from datetime import timedelta

from celery import shared_task
from django.db.models import F, Q
from django.utils import timezone

from sessions.models import ExtractionJob

logger = logging.getLogger(__name__)

# A running claim older than this is treated as abandoned (its worker died) and may be re-claimed.
STALE_CLAIM = timedelta(minutes=10)


def extraction_job_claim(job_id) -> ExtractionJob | None:
    """Claim a job for this worker; None when another worker has it or it is finished."""
    now = timezone.now()
    claimable = (
        Q(status=ExtractionJob.JobStatus.PENDING)
        | Q(status=ExtractionJob.JobStatus.FAILED, attempts__lt=F("max_attempts"))
        | Q(status=ExtractionJob.JobStatus.RUNNING, claimed_at__lt=now - STALE_CLAIM)
    )
    claimed = ExtractionJob.objects.filter(claimable, pk=job_id).update(
        status=ExtractionJob.JobStatus.RUNNING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now
    )
    return ExtractionJob.objects.select_related("session", "owner").get(pk=job_id) if claimed else None


@shared_task(bind=True, acks_late=True, max_retries=5, default_retry_delay=5)
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
        logger.warning("extraction job %s failed (attempt %s): %s", job.pk, job.attempts, exc)
        if job.attempts < job.max_attempts:
            raise self.retry(exc=exc, countdown=min(300, 2**job.attempts)) from exc
        raise
    return "done"
