from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memory_project.models import UUIDModel


class MemberSource(models.TextChoices):
    """How a memory came into a group: its rule (which may take it out again) or a person."""

    RULE = "rule"
    MANUAL = "manual"


class MemoryGroup(UUIDModel):
    """A named group of an owner's memories ("work", "life"), nested under a parent, filled by its
    rules (category, agent, entity) and by hand."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_groups")
    name = models.CharField(max_length=100)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    description = models.TextField(blank=True, default="")
    # A memory matches when every non-empty list matches it (any value of a list); no lists, no rule.
    rule_categories = ArrayField(models.CharField(max_length=20), default=list, blank=True)
    rule_agents = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    # Entity names, case-folded as memories.Entity.normalized_name.
    rule_entities = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="memorygroup_unique_name"),
            models.CheckConstraint(name="memorygroup_not_own_parent", condition=~Q(parent=models.F("id"))),
        ]

    def __str__(self):
        return self.name


class MemoryGroupMember(models.Model):
    """One memory in one group, put there by the group's rule or by hand."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey(MemoryGroup, on_delete=models.CASCADE, related_name="members")
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="group_links")
    source = models.CharField(max_length=10, choices=MemberSource.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["group", "memory"], name="memorygroupmember_unique"),
            models.CheckConstraint(name="memorygroupmember_source_valid", condition=Q(source__in=MemberSource.values)),
        ]
        indexes = [models.Index(name="memorygroupmember_memory", fields=["memory"])]
