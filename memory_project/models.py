"""Abstract model bases the apps share (no table of their own, so memory_project stays app-free)."""

import uuid

from django.db import models


class UUIDModel(models.Model):
    """A row whose primary key is a random UUID, given in Python before the row is saved."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)

    class Meta:
        abstract = True
