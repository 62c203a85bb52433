"""Drain: the owner's extraction jobs still waiting run now, before the steps that read memories."""

import logging

from django.db.models import F, Q

from memories.services.lifecycle.common import StepContext, wall_now
from sessions.models import ExtractionJob
from sessions.services.extraction import extraction_job_process
from sessions.tasks import extraction_job_claim, extraction_job_release

logger = logging.getLogger(__name__)


def drain_step(run: StepContext) -> tuple[dict, dict]:
    """Run the owner's extraction jobs still pending (or failed with attempts left) now."""
    statuses = ExtractionJob.JobStatus
    # A running job is only claimed when no live worker holds its lock (extraction_job_claim checks).
    claimable = (
        Q(status=statuses.PENDING)
        | Q(status=statuses.FAILED, attempts__lt=F("max_attempts"))
        | Q(status=statuses.RUNNING)
    )
    ids = list(
        ExtractionJob.objects.filter(claimable, owner=run.owner)
        .order_by("created_at")
        .values_list("pk", flat=True)[: run.cfg["DRAIN_MAX_JOBS"]]
    )
    counts = {"found": len(ids), "done": 0, "failed": 0, "skipped": 0}
    for job_id in ids:
        job = extraction_job_claim(job_id)
        if job is None:  # a worker took it meanwhile
            counts["skipped"] += 1
            continue
        try:
            extraction_job_process(job=job)
            counts["done"] += 1
        except Exception as exc:
            ExtractionJob.objects.filter(pk=job.pk).update(
                status=statuses.FAILED, last_error=f"{exc.__class__.__name__}: {exc}"[:2000], updated_at=wall_now()
            )
            logger.warning("lifecycle: extraction job %s failed (attempt %s): %s", job.pk, job.attempts, exc)
            counts["failed"] += 1
        finally:
            extraction_job_release(job.pk)
    return counts, {}
