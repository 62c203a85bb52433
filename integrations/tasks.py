"""Thin Celery entry points for the integrations: take ids, call a service, retry with backoff."""

import logging
import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from integrations.models import TelegramUpdate, WebhookDelivery
from integrations.services.telegram import telegram_update_failed, telegram_update_process
from integrations.services.webhooks import (
    webhook_deliveries_due,
    webhook_delivery_attempt,
    webhook_delivery_dispatch,
)
from memory_project.celery import RETRY_WITH_BACKOFF, BrokerTolerantTask

logger = logging.getLogger(__name__)

TELEGRAM_MAX_RETRIES = 5


@shared_task(bind=True, base=BrokerTolerantTask, acks_late=True, max_retries=None)
def webhook_deliver(self, delivery_id: str) -> str:
    delivery = webhook_delivery_attempt(delivery_id=delivery_id)
    if delivery is None:
        return "skipped"
    if delivery.status == WebhookDelivery.DeliveryStatus.PENDING:
        # Its own backoff, its endpoint's backoff, or its endpoint busy with another delivery.
        due = delivery.next_attempt_at or timezone.now()
        countdown = max(0.0, (due - timezone.now()).total_seconds())
        if self.request.is_eager and countdown > 0:
            # Eager retries run at once (only with WEBHOOK_EAGER_IN_BACKGROUND off, as in tests: the
            # embedded mode's scheduler makes its attempts without this task).
            time.sleep(countdown)
        raise self.retry(countdown=countdown)
    return delivery.status


@shared_task(bind=True, base=BrokerTolerantTask, acks_late=True, max_retries=TELEGRAM_MAX_RETRIES)
def telegram_update_task(self, update_id: int) -> str:
    try:
        return telegram_update_process(update_id=update_id)
    except Exception as exc:
        logger.exception("Telegram update %s failed", update_id)
        telegram_update_failed(update_id=update_id, error=f"{exc.__class__.__name__}: {exc}")
        # In-process, a retry would run back to back inside the webhook request; the sweep
        # (integrations_sweep) picks the failed update up later instead.
        if not self.request.is_eager and self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=min(300, 2 ** (self.request.retries + 1))) from exc
        return "failed"


@shared_task(**RETRY_WITH_BACKOFF, max_retries=3)
def integrations_sweep() -> dict:
    """Re-send what lost its message (broker outage, killed worker): due webhook deliveries and
    Telegram updates left pending or failed."""
    deliveries = webhook_deliveries_due()
    for delivery_id in deliveries:
        webhook_delivery_dispatch(delivery_id=delivery_id)
    cutoff = timezone.now() - timedelta(seconds=settings.WEBHOOK_SWEEP_AFTER_SECONDS)
    updates = list(
        TelegramUpdate.objects.filter(
            status__in=[TelegramUpdate.UpdateStatus.PENDING, TelegramUpdate.UpdateStatus.FAILED],
            attempts__lt=TELEGRAM_MAX_RETRIES + 1,
            received_at__lt=cutoff,
        ).values_list("update_id", flat=True)[:200]
    )
    for update_id in updates:
        telegram_update_task.delay(update_id)
    return {"webhook_deliveries": len(deliveries), "telegram_updates": len(updates)}
