from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory_project.models import UUIDModel
from memory_project.search_fields import search_vector_field


class Attachment(UUIDModel):
    """A file or image shared in a conversation turn; the bytes live in the attachments storage."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attachments")
    turn = models.ForeignKey("chat_sessions.ConversationTurn", on_delete=models.CASCADE, related_name="attachments")
    position = models.PositiveSmallIntegerField(default=0)
    # As the client named it: shown and offered as the download's name, never used as a path.
    filename = models.CharField(max_length=255)
    content_type = models.CharField(max_length=100)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    # The name in the storage, chosen by us (owner id and a random id), never from the client.
    storage_name = models.CharField(max_length=500, unique=True)
    caption = models.TextField(blank=True, default="")
    search_ngrams = models.TextField(blank=True, default="")
    search_vector = search_vector_field("filename", "caption")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "position"]
        indexes = [
            models.Index(name="attachment_owner_created", fields=["owner", "-created_at"]),
            models.Index(
                name="attachment_expiry", fields=["owner", "expires_at"], condition=Q(expires_at__isnull=False)
            ),
        ]

    def __str__(self):
        return self.filename
