"""The events a webhook subscription can ask for."""

from django.db import models


class WebhookEvent(models.TextChoices):
    MEMORY_ADDED = "memory.added"
    MEMORY_UPDATED = "memory.updated"
    MEMORY_FORGOTTEN = "memory.forgotten"
    MEMORY_SUPERSEDED = "memory.superseded"
    EXTRACTION_COMPLETED = "extraction.completed"
