"""Outgoing webhooks: published events become signed POSTs to the owner's subscriptions.

Delivery rows are written inside the transaction of the change that caused the event (through the
event listener), so a rolled-back change sends nothing and a committed one is never lost; the
Celery task is sent once that transaction commits and retries with exponential backoff.

Scheduling is per subscription: one delivery in flight per endpoint, and after a failure none of
that endpoint's deliveries is tried before its backoff ends, so a dead endpoint costs one attempt per
backoff period and delays no one else's deliveries. Each attempt's body carries the time it was sent
(`timestamp`, also in X-Memory-Timestamp) under the signature, so a receiver can refuse a replay; the
delivery log keeps status and timing, never the receiver's response body.
"""

import hashlib
import hmac
import json
import logging
import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from integrations.choices import WebhookEvent
from integrations.models import WebhookDelivery, WebhookSubscription
from integrations.services.http import webhook_http_client
from integrations.services.webhook_targets import target_problem, url_problem
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
# A delivery whose endpoint has another delivery in flight is looked at again this much later.
BUSY_RETRY_SECONDS = 1.0


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
    problem = url_problem(url)
    if problem:
        raise ServiceError(f"Webhooks cannot be sent to this URL: {problem}.", code="invalid_url")
    problem = target_problem(url)
    if problem:
        raise ServiceError(f"Webhooks are sent to public addresses only: {problem}.", code="forbidden_target")
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
    # integrations.tasks imports this module: the task is imported when a delivery is sent.
    from integrations.tasks import webhook_deliver

    if settings.CELERY_TASK_ALWAYS_EAGER and settings.WEBHOOK_EAGER_IN_BACKGROUND:
        # The scheduler imports this module to attempt deliveries: imported when it is woken.
        from integrations.services.webhook_scheduler import webhook_scheduler_wake

        webhook_scheduler_wake()
    else:
        webhook_deliver.delay(delivery_id)


def webhook_signature(*, secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_retry_countdown(attempts: int) -> float:
    """Seconds before attempt `attempts + 1`: base × 2^(attempts − 1), capped."""
    return min(settings.WEBHOOK_RETRY_MAX_SECONDS, settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** max(0, attempts - 1))


def webhook_delivery_attempt(*, delivery_id) -> WebhookDelivery | None:
    """Make one attempt; returns the delivery as left (None when it is gone or another worker has it).

    The row stays locked during the POST so two workers never send the same delivery at once, and
    a delivered or failed row is never sent again. Its subscription's row is locked too (FOR NO KEY
    UPDATE, which new deliveries' foreign keys do not wait for): a delivery whose endpoint is busy
    or backing off is left pending, with next_attempt_at saying when to look again.
    """
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update(skip_locked=True).filter(pk=delivery_id).first()
        if delivery is None or delivery.status != WebhookDelivery.DeliveryStatus.PENDING:
            return delivery
        now = timezone.now()
        subscription = (
            WebhookSubscription.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(pk=delivery.subscription_id)
            .first()
        )
        if subscription is None or (subscription.retry_at and subscription.retry_at > now):
            later = subscription.retry_at if subscription else now + timedelta(seconds=BUSY_RETRY_SECONDS)
            if delivery.next_attempt_at != later:
                delivery.next_attempt_at = later
                delivery.save(update_fields=["next_attempt_at"])
            return delivery
        delivery.subscription = subscription
        if not subscription.active:
            delivery.status = WebhookDelivery.DeliveryStatus.FAILED
            delivery.last_error = "subscription is inactive"
            delivery.next_attempt_at = None
            delivery.save(update_fields=["status", "last_error", "next_attempt_at"])
            return delivery
        started = time.perf_counter()
        status_code, error = None, ""
        try:
            sent_at = int(time.time())
            body = json.dumps(
                {**delivery.payload, "timestamp": sent_at}, separators=(",", ":"), ensure_ascii=False, default=str
            ).encode()
            headers = {
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "X-Memory-Event": delivery.event,
                "X-Memory-Delivery": str(delivery.id),
                "X-Memory-Timestamp": str(sent_at),
                "X-Memory-Signature": webhook_signature(secret=subscription.secret, body=body),
            }
            # The receiver's body is never read into the log: it is whatever the URL's host answers,
            # and the owner chose the URL.
            with webhook_http_client().stream(
                "POST",
                subscription.url,
                content=body,
                headers=headers,
                timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
                follow_redirects=False,
            ) as response:
                status_code = response.status_code
            if not 200 <= status_code < 300:
                error = f"HTTP {status_code}"
        except Exception as exc:
            # Whatever stops the attempt is its failure, with the usual backoff: not only httpx2's
            # HTTPError (a host it cannot encode raises InvalidURL before sending), and an exception
            # left to the caller would leave the row pending and due, retried at once, forever.
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
            subscription.failures, subscription.retry_at = 0, None
        else:
            subscription.failures += 1
            subscription.retry_at = timezone.now() + timedelta(seconds=webhook_retry_countdown(subscription.failures))
            if delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
                delivery.status = WebhookDelivery.DeliveryStatus.FAILED
                delivery.next_attempt_at = None
            else:
                own = timezone.now() + timedelta(seconds=webhook_retry_countdown(delivery.attempts))
                delivery.next_attempt_at = max(own, subscription.retry_at)
        delivery.save()
        subscription.save(update_fields=["failures", "retry_at"])
    return delivery


def webhook_deliveries_due(*, now=None, limit: int = 500) -> list[str]:
    """Pending deliveries whose retry time passed long enough ago that their message was lost."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.WEBHOOK_SWEEP_AFTER_SECONDS)
    rows = WebhookDelivery.objects.filter(
        status=WebhookDelivery.DeliveryStatus.PENDING, next_attempt_at__lt=cutoff
    ).order_by("next_attempt_at")
    return [str(pk) for pk in rows.values_list("pk", flat=True)[:limit]]
