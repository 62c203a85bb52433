from django.conf import settings
from django.db import models


class HotCacheChange(models.Model):
    """A change to an owner's memories; the newest id is the version their cached entries belong to."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-id"], name="hotcache_owner_latest")]
