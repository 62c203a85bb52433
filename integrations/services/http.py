"""One HTTP client per process for the Bot API and webhook deliveries.

Building a client builds its TLS context (about 0.3 s), far more than a request on a kept-alive
connection; the client is thread-safe, and is rebuilt after a fork so that no two processes share
its connection pool.
"""

import os
import threading

import httpx2

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
