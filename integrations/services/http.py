"""One HTTP client per process for the Bot API, and one for webhook deliveries.

Building a client builds its TLS context (about 0.3 s), far more than a request on a kept-alive
connection; the client is thread-safe, and is rebuilt after a fork so that no two processes share
its connection pool.
"""

import os
import threading

import httpx2

from integrations.services.webhook_targets import GuardedTransport

_lock = threading.Lock()
_client: httpx2.Client | None = None
_pid: int | None = None


def http_client() -> httpx2.Client:
    global _client, _pid
    with _lock:
        if _client is None or _pid != os.getpid():
            _client = httpx2.Client(follow_redirects=False)
            _pid = os.getpid()
        return _client


_webhook_client: httpx2.Client | None = None
_webhook_pid: int | None = None


def webhook_http_client() -> httpx2.Client:
    """The client for webhook deliveries: it connects to public addresses only (see webhook_targets)
    and never follows a redirect."""
    global _webhook_client, _webhook_pid
    with _lock:
        if _webhook_client is None or _webhook_pid != os.getpid():
            _webhook_client = httpx2.Client(transport=GuardedTransport(), follow_redirects=False, trust_env=False)
            _webhook_pid = os.getpid()
        return _webhook_client
