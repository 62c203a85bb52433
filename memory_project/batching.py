"""A per-process buffer of off-path writes (request analytics, the access log), sent as one batch.

Recording is a dict update under a lock, no query. The buffer is sent when it holds `items` adds or
its oldest add is `seconds` old, whichever comes first; a timer catches a quiet process. A batch's
age counts from its first add, so a lone call after a quiet spell waits for company like any other.
A process about to exit sends what its buffers hold (batch_buffers_flush), or it would be lost.
"""

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from django.conf import settings

from memory_project.background import background_drain
from memory_project.dbconn import thread_work

logger = logging.getLogger(__name__)

_buffers: weakref.WeakSet = weakref.WeakSet()


class BatchBuffer:
    def __init__(self, *, seconds_setting: str, items_setting: str, flush: Callable[[], Any]):
        # Setting names, read at each add: tests and operators change them at run time.
        self._seconds_setting, self._items_setting, self._flush = seconds_setting, items_setting, flush
        self._lock = threading.Lock()
        self._items: dict = {}
        self._adds = 0
        self._since = time.monotonic()
        self._timer: threading.Timer | None = None
        _buffers.add(self)

    def add(self, key, update: Callable[[Any], Any]) -> None:
        """Store `update(current value or None)` under `key`; send the batch when it is due."""
        seconds = getattr(settings, self._seconds_setting)
        with self._lock:
            if not self._items:
                self._since = time.monotonic()
            self._items[key] = update(self._items.get(key))
            self._adds += 1
            due = self._adds >= getattr(settings, self._items_setting) or time.monotonic() - self._since >= seconds
            if not due and self._timer is None:
                self._timer = threading.Timer(seconds, self._flush_on_timer)
                self._timer.daemon = True
                self._timer.start()
        if due:
            self._flush()

    def _flush_on_timer(self) -> None:
        # The timer's thread ends after this: a pooled connection the flush borrowed must be given
        # back now, or the process's pool loses a connection for good.
        with thread_work(logger, "sending a batch from %s failed", self._items_setting):
            self._flush()

    def take(self) -> dict:
        """Everything buffered so far, leaving the buffer empty."""
        with self._lock:
            taken, self._items, self._adds = self._items, {}, 0
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return taken

    def pending(self) -> list:
        with self._lock:
            return list(self._items.values())

    def discard(self, keep: Callable[[Any, Any], bool]) -> None:
        """Drop what `keep(key, value)` rejects (an erasure of an owner whose calls are buffered)."""
        with self._lock:
            self._items = {k: v for k, v in self._items.items() if keep(k, v)}


def batch_buffers_flush() -> None:
    """Send every buffer's batch now and wait until the in-process background thread (no broker) has
    written them: the process is about to exit (a web worker, a Celery worker, the background
    process, `manage.py mcp`)."""
    for buffer in list(_buffers):
        with thread_work(logger, "sending a batch from %s at exit failed", buffer._items_setting):
            buffer._flush()
    background_drain()


def batch_buffers_discard() -> None:
    """Drop what every buffer holds, and its timer (test teardown: the rows it refers to are gone)."""
    for buffer in list(_buffers):
        buffer.take()
