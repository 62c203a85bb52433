"""The people, places and things memories mention."""

from django.conf import settings
from django.db import models

from memories.models.choices import (
    EntityKind,
)
from memories.models.memory import Memory


class Entity(models.Model):
    """A person, place, organisation, project or tool that memories mention."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    normalized_name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=EntityKind.choices, default=EntityKind.OTHER)
    memories = models.ManyToManyField(Memory, through="MemoryEntity", related_name="entities")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["owner", "normalized_name", "kind"], name="entity_unique_per_owner")
        ]

    def __str__(self):
        return self.name


class MemoryEntity(models.Model):
    """Link between a memory and an entity it mentions."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="entity_links")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="memory_links")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "entity"], name="memoryentity_unique")]
