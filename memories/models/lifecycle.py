"""What the nightly lifecycle keeps: the exported core files, daily digests, its runs."""

from django.conf import settings
from django.db import models


class CoreMemory(models.Model):
    """Per owner and agent: MEMORY.md essence, USER.md profile, learnings and rolling summary."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="core_memories")
    agent = models.CharField(max_length=100, blank=True, default="")
    memory_md = models.TextField(blank=True, default="")
    user_md = models.TextField(blank=True, default="")
    learnings_md = models.TextField(blank=True, default="")
    rolling_summary = models.TextField(blank=True, default="")
    generated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "core memories"
        constraints = [models.UniqueConstraint(fields=["owner", "agent"], name="corememory_unique")]


class DailyDigest(models.Model):
    """Per owner and day: what happened; summarised after 30 days, raw entries dropped after 60."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="daily_digests")
    agent = models.CharField(max_length=100, blank=True, default="")
    day = models.DateField()
    entries = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True, default="")
    summarized_at = models.DateTimeField(null=True, blank=True)
    entries_purged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "agent", "day"], name="dailydigest_unique")]


class LifecycleRun(models.Model):
    """One run of the lifecycle for one owner: steps, counts, duration, errors."""

    class RunStatus(models.TextChoices):
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lifecycle_runs")
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    trigger = models.CharField(max_length=20, default="manual")
    steps = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(name="lifecyclerun_owner_time", fields=["owner", "-started_at"])]
