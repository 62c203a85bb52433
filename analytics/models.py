from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

# Upper bounds (ms) of the latency histogram's buckets; the last bucket is everything slower.
LATENCY_BOUNDS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
BUCKETS = len(LATENCY_BOUNDS_MS) + 1


def empty_buckets() -> list[int]:
    return [0] * BUCKETS


class RequestKind(models.TextChoices):
    ADD = "add"
    SEARCH = "search"
    CONTEXT = "context"
    TURNS = "turns"
    IMPORT = "import"
    OTHER = "other"


class RequestDaily(models.Model):
    """API requests of one kind by one owner and agent on one day (UTC): count, errors and latency."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    agent = models.CharField(max_length=100, blank=True, default="")
    day = models.DateField()
    kind = models.CharField(max_length=10, choices=RequestKind.choices)
    count = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    total_ms = models.FloatField(default=0.0)
    max_ms = models.FloatField(default=0.0)
    # How many requests fell in each latency bucket (LATENCY_BOUNDS_MS), for percentiles over days.
    buckets = ArrayField(models.PositiveIntegerField(), size=BUCKETS, default=empty_buckets)

    class Meta:
        verbose_name_plural = "request days"
        constraints = [
            models.UniqueConstraint(fields=["owner", "agent", "day", "kind"], name="requestdaily_unique"),
        ]
        indexes = [models.Index(name="requestdaily_day", fields=["day"])]


class RequestStatBatch(models.Model):
    """A batch of request statistics already added in: the task that applies one may run twice."""

    id = models.UUIDField(primary_key=True)
    applied_at = models.DateTimeField(auto_now_add=True, db_index=True)
