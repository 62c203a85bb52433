"""One round of embedded `serve`'s background process: the pipeline's work a Celery worker takes in
distributed mode. memory_project.background_process runs the process (rounds until stopped,
restarted by the server's master); web/'s serve_background hands it this round."""

from memories.services.turn_embeddings import turn_embeddings_fill
from memories.tasks import extraction_job_run
from sessions.models import ExtractionJob

# Extraction jobs per round: turn vectors are filled between rounds, so they wait for at most this
# many jobs, never for a whole backlog of them.
JOBS_PER_ROUND = 2


def background_step() -> int:
    """One round: every stored turn without a vector gets one, then the oldest pending extraction
    jobs run; returns how much was done (0: nothing was waiting)."""
    done = turn_embeddings_fill()
    pending = ExtractionJob.objects.filter(status=ExtractionJob.JobStatus.PENDING).order_by("updated_at")
    for job_id in pending.values_list("pk", flat=True)[:JOBS_PER_ROUND]:
        # A job another process holds is "skipped": not counted, so a held job cannot keep this loop
        # from sleeping.
        done += extraction_job_run.apply(args=[str(job_id)]).result != "skipped"
    return done
