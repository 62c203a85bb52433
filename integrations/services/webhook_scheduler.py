"""Webhook deliveries without a broker (the embedded mode): one scheduler thread and a small pool.

Before, each delivery ran as an eager task on one of two shared threads that slept through its
backoff, so two deliveries to a dead endpoint held every thread and every owner's webhooks waited
(issue 12). Here nothing sleeps on a pool thread: the scheduler picks deliveries that are due, at
most one per subscription and none of a subscription in backoff, and hands each to the pool for one
attempt (`webhook_delivery_attempt`); the attempt records when to try again, and the scheduler
wakes for it. A dead endpoint therefore holds at most one thread, for at most WEBHOOK_TIMEOUT_SECONDS
per backoff period, and other subscriptions keep the rest.
"""

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Min, Q
from django.utils import timezone

from integrations.models import WebhookDelivery
from integrations.services.webhooks import webhook_delivery_attempt
from memory_project.dbconn import thread_work

logger = logging.getLogger(__name__)

# Upper bound on a sleep, so rows written by another process (a management command) are seen too.
IDLE_SECONDS = 30.0
BATCH = 200


class _Scheduler:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: set = set()  # subscription ids with an attempt running
        self._stopping = False

    def wake(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._pool = ThreadPoolExecutor(
                    max_workers=settings.WEBHOOK_EMBEDDED_WORKERS, thread_name_prefix="webhook-delivery"
                )
                self._thread = threading.Thread(target=self._run, name="webhook-scheduler", daemon=True)
                self._thread.start()
        self._wake.set()

    def close(self, timeout: float = 10) -> None:
        """Stop the threads (test teardown, before the test database is dropped)."""
        with self._lock:
            thread, pool = self._thread, self._pool
            self._stopping = True
        self._wake.set()
        if thread is not None:
            thread.join(timeout=timeout)
        if pool is not None:
            pool.shutdown(wait=True)
        with self._lock:
            self._thread = self._pool = None
            self._stopping = False

    def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                sleep = self._dispatch_due()
            except Exception:
                logger.exception("webhook scheduler: could not read due deliveries")
                sleep = IDLE_SECONDS
            finally:
                # The thread wakes rarely: a connection kept between wakes would only sit idle.
                connection.close()
            self._wake.wait(timeout=sleep)

    def _dispatch_due(self) -> float:
        """Start what is due; returns how long to sleep before the next delivery is due."""
        now = timezone.now()
        with self._lock:
            busy = set(self._in_flight)
        free = settings.WEBHOOK_EMBEDDED_WORKERS - len(busy)
        pending = WebhookDelivery.objects.filter(status=WebhookDelivery.DeliveryStatus.PENDING)
        ready = (
            pending.filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
            .filter(Q(subscription__retry_at__isnull=True) | Q(subscription__retry_at__lte=now))
            .exclude(subscription_id__in=busy)
            .order_by("next_attempt_at", "created_at")
            .values_list("id", "subscription_id")[:BATCH]
        )
        for delivery_id, subscription_id in ready:
            if free <= 0:
                break
            if subscription_id in busy:
                continue  # one delivery per endpoint at a time, oldest first
            busy.add(subscription_id)
            free -= 1
            with self._lock:
                self._in_flight.add(subscription_id)
            self._pool.submit(self._attempt, delivery_id, subscription_id)
        own = pending.filter(next_attempt_at__gt=now).aggregate(at=Min("next_attempt_at"))["at"]
        endpoint = pending.filter(subscription__retry_at__gt=now).aggregate(at=Min("subscription__retry_at"))["at"]
        times = [t for t in (own, endpoint) if t is not None]
        if not times:
            return IDLE_SECONDS
        upcoming = min(times)
        return min(IDLE_SECONDS, max(0.05, (upcoming - timezone.now() + timedelta(milliseconds=10)).total_seconds()))

    def _attempt(self, delivery_id, subscription_id) -> None:
        try:
            with thread_work(logger, "webhook delivery %s failed", delivery_id):
                webhook_delivery_attempt(delivery_id=delivery_id)
        finally:
            with self._lock:
                self._in_flight.discard(subscription_id)
            self._wake.set()


_scheduler = _Scheduler()


def _new_scheduler_after_fork() -> None:
    # A forked child inherits the object but not its threads.
    global _scheduler
    _scheduler = _Scheduler()


os.register_at_fork(after_in_child=_new_scheduler_after_fork)


def webhook_scheduler_wake() -> None:
    """Look for due deliveries now (starting the scheduler on first use)."""
    _scheduler.wake()


def webhook_scheduler_close() -> None:
    _scheduler.close()
