"""Background imports and the entries imported, so a second import changes nothing."""

from django.conf import settings
from django.db import models

from memories.models.memory import Memory
from memory_project.jobs import JobStatus
from memory_project.models import UUIDModel


class ImportJob(UUIDModel):
    """An import too large to run in its request: the uploaded text, its progress and its report."""

    JobStatus = JobStatus

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs")
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    format = models.CharField(max_length=20, blank=True, default="")
    name = models.CharField(max_length=255, blank=True, default="")
    agent = models.CharField(max_length=100, null=True, blank=True)
    # "merge" or "restore"; blank: restore a JSONL export whose lines all carry their id, merge otherwise.
    mode = models.CharField(max_length=10, blank=True, default="")
    actor = models.CharField(max_length=200)
    # The file itself until the job has run; emptied afterwards (the memories hold what it said).
    text = models.TextField(blank=True, default="")
    size = models.PositiveBigIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # Entries refused by validation: [{line, field, message}], nothing was imported.
    problems = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(name="importjob_owner_created", fields=["owner", "-created_at"]),
            models.Index(name="importjob_status", fields=["status", "heartbeat_at"]),
        ]

    @property
    def percent(self) -> int:
        """How far the job has got: 100 once it is done, at most 99 before."""
        if self.status == JobStatus.DONE:
            return 100
        if not self.total:
            return 0
        return min(99, int(self.processed * 100 / self.total))


class ImportedEntry(models.Model):
    """An imported entry and the memory it became or matched: importing it again changes nothing."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    agent = models.CharField(max_length=100, blank=True, default="")
    # The entry's content hash (merge imports), or "id:<uuid>" of a restored JSONL row.
    key = models.CharField(max_length=80)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="imported_entries")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "agent", "key"], name="importedentry_unique")]
