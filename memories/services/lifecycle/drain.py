"""Drain: the owner's extraction jobs still waiting run now, before the steps that read memories."""

import logging

from django.db.models import F, Q

from memories.services.extraction_jobs import extraction_job_execute
from memories.services.lifecycle.common import StepContext
from sessions.models import ExtractionJob

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
        outcome = extraction_job_execute(job_id=job_id)  # "skipped": a worker took it meanwhile
        counts[outcome.status] += 1
        if outcome.status == "failed":
            logger.warning(
                "lifecycle: extraction job %s failed (attempt %s): %s", job_id, outcome.job.attempts, outcome.error
            )
    return counts, {}
