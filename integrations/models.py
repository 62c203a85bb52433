from django.conf import settings
from django.db import models
from django.db.models import Q

from integrations.choices import WebhookEvent
from memory_project.models import UUIDModel


class TelegramLink(models.Model):
    """A Telegram user linked to an owner: their messages become that owner's turns."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="telegram_links")
    telegram_user_id = models.BigIntegerField(unique=True)
    chat_id = models.BigIntegerField()
    first_name = models.CharField(max_length=100, blank=True, default="")
    telegram_username = models.CharField(max_length=100, blank=True, default="")
    linked_at = models.DateTimeField(auto_now_add=True)
    # "/forget …" asks before acting; the memory waiting for "/yes" is kept here.
    pending_forget = models.ForeignKey(
        "memories.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    pending_forget_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"telegram:{self.telegram_user_id} → {self.owner}"


class TelegramLinkCode(models.Model):
    """A one-time code an owner sends to the bot as `/start <code>` to link their Telegram account."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="telegram_link_codes")
    code = models.CharField(max_length=32, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by_telegram_user_id = models.BigIntegerField(null=True, blank=True)

    def __str__(self):
        return self.code


class TelegramUpdate(models.Model):
    """One update received from the Bot API, kept by update_id so a redelivered update is ignored."""

    class UpdateStatus(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    update_id = models.BigIntegerField(unique=True)
    # The raw update until it is processed; emptied afterwards so strangers' messages are not kept.
    payload = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=UpdateStatus.choices, default=UpdateStatus.PENDING)
    outcome = models.CharField(max_length=40, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(name="telegramupdate_status", fields=["status", "received_at"])]

    def __str__(self):
        return str(self.update_id)


class WebhookSubscription(UUIDModel):
    """An owner's HTTP endpoint that receives signed POSTs for the events it subscribed to."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=1000)
    secret = models.CharField(max_length=200)
    events = models.JSONField(default=list)
    description = models.CharField(max_length=200, blank=True, default="")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Scheduling is per subscription: after a failed attempt none of its deliveries is tried before
    # retry_at (backoff on its consecutive failures), so a dead endpoint delays only its own.
    failures = models.PositiveIntegerField(default=0)
    retry_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(name="webhook_owner_active", fields=["owner", "active"])]

    def __str__(self):
        return self.url


class WebhookDelivery(UUIDModel):
    """One event sent (or being sent) to one subscription, with a record of every attempt."""

    class DeliveryStatus(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    subscription = models.ForeignKey(WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=WebhookEvent.choices)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    # One entry per attempt: {at, status_code, error, duration_ms}.
    attempt_log = models.JSONField(default=list, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(name="delivery_sub_created", fields=["subscription", "-created_at"]),
            models.Index(name="delivery_status_next", fields=["status", "next_attempt_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                name="delivery_status_valid", condition=Q(status__in=["pending", "delivered", "failed"])
            ),
        ]

    def __str__(self):
        return f"{self.event} → {self.subscription_id} ({self.status})"
