"""Outgoing webhooks: published events become signed POSTs to the owner's subscriptions.

Delivery rows are written inside the transaction of the change that caused the event (through the
event listener), so a rolled-back change sends nothing and a committed one is never lost; the
Celery task is sent once that transaction commits and retries with exponential backoff.
"""

import hashlib
import hmac
import json
import logging
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx2
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from integrations.models import WebhookDelivery, WebhookEvent, WebhookSubscription
from integrations.services.http import http_client
from memory_project.exceptions import ServiceError

logger = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
MAX_SUBSCRIPTIONS_PER_OWNER = 50
# memory.changed's `action` is the MemoryEvent type (or "added"); a subscriber thinks in outcomes.
ACTION_EVENTS = {
    "added": WebhookEvent.MEMORY_ADDED,
    "forget": WebhookEvent.MEMORY_FORGOTTEN,
    "delete": WebhookEvent.MEMORY_FORGOTTEN,
    "supersede": WebhookEvent.MEMORY_SUPERSEDED,
}
USER_AGENT = "agent-memory-webhooks/1"

# Without a broker the task would run in the request that made the change, and its backoff would
# hold that request; a small pool runs deliveries beside it instead.
_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="webhook-delivery")


def webhook_event_for(*, type: str, data: dict) -> str | None:
    """The webhook event a published event stands for, or None when subscribers never see it."""
    if type == "extraction.completed":
        return WebhookEvent.EXTRACTION_COMPLETED
    if type == "memory.changed":
        return ACTION_EVENTS.get(str(data.get("action", "")), WebhookEvent.MEMORY_UPDATED)
    return None


def webhook_subscription_create(
    *, owner, url: str, events: list[str] | None = None, secret: str = "", description: str = ""
) -> WebhookSubscription:
    if WebhookSubscription.objects.filter(owner=owner).count() >= MAX_SUBSCRIPTIONS_PER_OWNER:
        raise ServiceError(f"At most {MAX_SUBSCRIPTIONS_PER_OWNER} webhooks per owner.", code="limit_reached")
    return WebhookSubscription.objects.create(
        owner=owner,
        url=url,
        events=list(dict.fromkeys(events or WebhookEvent.values)),
        secret=secret or SECRET_PREFIX + secrets.token_urlsafe(32),
        description=description,
    )


def webhook_subscription_delete(*, subscription: WebhookSubscription) -> None:
    subscription.delete()


def webhook_event_received(*, owner_id, type: str, data: dict) -> None:
    """Event listener: one pending delivery per matching active subscription of this owner only."""
    event = webhook_event_for(type=type, data=data)
    if event is None:
        return
    try:
        # A webhook must never fail the write that caused it: its rows go in a savepoint.
        with transaction.atomic():
            subscriptions = [
                s
                for s in WebhookSubscription.objects.filter(owner_id=owner_id, active=True).only("id", "events")
                if event in s.events
            ]
            if not subscriptions:
                return
            now = timezone.now()
            # jsonb holds what json holds: anything else an event carries is sent as its text.
            data = json.loads(json.dumps(data, default=str))
            deliveries = [
                WebhookDelivery(subscription=s, event=event, payload={}, next_attempt_at=now) for s in subscriptions
            ]
            for delivery in deliveries:
                delivery.payload = {
                    "id": str(delivery.id),
                    "event": event,
                    "subscription_id": str(delivery.subscription_id),
                    "created_at": now.isoformat(),
                    "data": data,
                }
            WebhookDelivery.objects.bulk_create(deliveries)
        ids = [str(d.id) for d in deliveries]
        transaction.on_commit(lambda: _dispatch_all(ids))
    except Exception:
        logger.exception("could not record webhook deliveries of %s for owner %s", type, owner_id)


def _dispatch_all(ids: list[str]) -> None:
    for delivery_id in ids:
        try:
            webhook_delivery_dispatch(delivery_id=delivery_id)
        except Exception:  # the row is committed: the sweep sends it later
            logger.exception("could not dispatch webhook delivery %s", delivery_id)


def webhook_delivery_dispatch(*, delivery_id: str) -> None:
    from integrations.tasks import webhook_deliver

    if settings.CELERY_TASK_ALWAYS_EAGER and settings.WEBHOOK_EAGER_IN_BACKGROUND:
        _executor.submit(_deliver_in_thread, delivery_id)
    else:
        webhook_deliver.delay(delivery_id)


def _deliver_in_thread(delivery_id: str) -> None:
    from integrations.tasks import webhook_deliver

    try:
        webhook_deliver.apply(args=(delivery_id,))
    except Exception:
        logger.exception("webhook delivery %s failed", delivery_id)
    finally:
        # A pool thread's connection would otherwise outlive its use.
        connection.close()


def webhook_signature(*, secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_retry_countdown(attempts: int) -> float:
    """Seconds before attempt `attempts + 1`: base × 2^(attempts − 1), capped."""
    return min(settings.WEBHOOK_RETRY_MAX_SECONDS, settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** max(0, attempts - 1))


def webhook_delivery_attempt(*, delivery_id) -> WebhookDelivery | None:
    """Make one attempt; returns the delivery as left (None when it is gone or another worker has it).

    The row stays locked during the POST so two workers never send the same delivery at once, and
    a delivered or failed row is never sent again.
    """
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("subscription")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != WebhookDelivery.DeliveryStatus.PENDING:
            return delivery
        subscription = delivery.subscription
        now = timezone.now()
        if not subscription.active:
            delivery.status = WebhookDelivery.DeliveryStatus.FAILED
            delivery.last_error = "subscription is inactive"
            delivery.next_attempt_at = None
            delivery.save(update_fields=["status", "last_error", "next_attempt_at"])
            return delivery
        body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False, default=str).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Memory-Event": delivery.event,
            "X-Memory-Delivery": str(delivery.id),
            "X-Memory-Signature": webhook_signature(secret=subscription.secret, body=body),
        }
        started = time.perf_counter()
        status_code, error = None, ""
        try:
            response = http_client().post(
                subscription.url,
                content=body,
                headers=headers,
                timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
                follow_redirects=False,
            )
            status_code = response.status_code
            if not 200 <= status_code < 300:
                error = f"HTTP {status_code}: {response.text[:200]}"
        except httpx2.HTTPError as exc:
            error = f"{exc.__class__.__name__}: {exc}"[:500]
        delivery.attempts += 1
        delivery.last_status_code = status_code
        delivery.last_error = error
        delivery.attempt_log = [
            *delivery.attempt_log,
            {
                "at": now.isoformat(),
                "status_code": status_code,
                "error": error,
                "duration_ms": int((time.perf_counter() - started) * 1000),
            },
        ]
        if not error:
            delivery.status = WebhookDelivery.DeliveryStatus.DELIVERED
            delivery.delivered_at = timezone.now()
            delivery.next_attempt_at = None
        elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
            delivery.status = WebhookDelivery.DeliveryStatus.FAILED
            delivery.next_attempt_at = None
        else:
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=webhook_retry_countdown(delivery.attempts))
        delivery.save()
    return delivery


def webhook_deliveries_due(*, now=None, limit: int = 500) -> list[str]:
    """Pending deliveries whose retry time passed long enough ago that their message was lost."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.WEBHOOK_SWEEP_AFTER_SECONDS)
    rows = WebhookDelivery.objects.filter(
        status=WebhookDelivery.DeliveryStatus.PENDING, next_attempt_at__lt=cutoff
    ).order_by("next_attempt_at")
    return [str(pk) for pk in rows.values_list("pk", flat=True)[:limit]]
