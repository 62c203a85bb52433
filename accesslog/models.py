from django.conf import settings
from django.db import models


class QueryKind(models.TextChoices):
    SEARCH = "search"
    CONTEXT = "context"
    TOOL = "tool"


class QueryLog(models.Model):
    """One search or context call that returned memories: what was asked, through what, and when."""

    # Given when the call is recorded, so a batch applied twice adds each call once.
    id = models.UUIDField(primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=QueryKind.choices)
    # None: the call read every agent namespace of the owner.
    agent = models.CharField(max_length=100, null=True, blank=True)
    query = models.TextField(blank=True)
    results = models.PositiveIntegerField(default=0)
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-at"], name="accesslog_owner_at"),
            models.Index(fields=["at"], name="accesslog_at"),
        ]


class QueryLogHit(models.Model):
    """A memory a logged call returned, at its rank in the answer (1 = first)."""

    query_log = models.ForeignKey(QueryLog, on_delete=models.CASCADE, related_name="hits")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    score = models.FloatField(null=True, blank=True)
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["query_log", "rank"], name="accesslog_hit_rank")]
        indexes = [models.Index(fields=["memory", "-at"], name="accesslog_memory_at")]
