"""An owner's API keys and event rules."""

from django.conf import settings
from django.db import models


class ApiKey(models.Model):
    """An API key of one owner; only its SHA-256 digest is stored."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.prefix}… ({self.owner})"


class EventRule(models.Model):
    """Seed 003 §11 rule: when an event matches the conditions, run the action. Owner null = every owner."""

    class Action(models.TextChoices):
        CONSOLIDATE = "consolidate"
        NOTIFY = "notify"
        FLAG = "flag"

    class Match(models.TextChoices):
        ALL = "all"
        ANY = "any"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="event_rules"
    )
    name = models.CharField(max_length=100)
    event_type = models.CharField(max_length=50)
    match = models.CharField(max_length=3, choices=Match.choices, default=Match.ALL)
    conditions = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name
