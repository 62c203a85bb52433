from django.db import models

from memory_project.models import UUIDModel


class ErasureReceipt(UUIDModel):
    """Proof that an owner's data (or one agent's) was erased: counts per kind, when, and a digest.

    It holds no erased content. `owner_id` is a plain integer rather than a foreign key so that the
    receipt outlives the account and is never itself reachable from the owner it describes.
    """

    owner_id = models.BigIntegerField(db_index=True)
    # None: every agent of the owner; otherwise the one agent namespace erased.
    agent = models.CharField(max_length=100, null=True, blank=True)
    account_deleted = models.BooleanField(default=False)
    requested_by = models.CharField(max_length=200)
    counts = models.JSONField(default=dict)
    total = models.PositiveBigIntegerField(default=0)
    digest = models.CharField(max_length=64)
    erased_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-erased_at"]
        indexes = [models.Index(name="erasure_owner_time", fields=["owner_id", "-erased_at"])]

    def __str__(self):
        scope = f"agent {self.agent!r} of owner {self.owner_id}" if self.agent is not None else f"owner {self.owner_id}"
        return f"erasure of {scope} at {self.erased_at:%Y-%m-%d %H:%M:%S}"
