"""What every queued job row shares (extraction jobs, background imports)."""

from django.db import models


class JobStatus(models.TextChoices):
    """A job row's state: waiting, claimed by a worker, finished, or failed (and perhaps retried)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
