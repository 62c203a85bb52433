"""A local webhook receiver for tests: checks X-Memory-Signature as a subscriber would and answers
with the statuses it is told to.

    with WebhookReceiver(secret="...") as receiver:
        receiver.answer(500)          # the next POST gets 500; then 200 again
        receiver.answer_with(302, headers={"Location": "http://10.0.0.1/"}, body=b"...")
        ...
        receiver.requests             # every POST: headers (lower-case), raw body, JSON, signature_ok

A POST whose signature does not verify is answered 401 and recorded with signature_ok False.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ReceivedWebhook:
    headers: dict[str, str]
    raw: bytes
    body: Any
    signature_ok: bool
    status: int


class WebhookReceiver:
    def __init__(self, secret: str = "", host: str = "127.0.0.1"):
        self.secret = secret
        self._host = host
        self._answers: deque[tuple[int, bytes, dict]] = deque()
        self._requests: list[ReceivedWebhook] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - quiet test output
                pass

            def do_POST(self):
                receiver._handle(self)

        self._httpd = ThreadingHTTPServer((self._host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="webhook-receiver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://{self._host}:{self._httpd.server_address[1]}/hooks/memory"

    def answer(self, *statuses: int) -> None:
        with self._lock:
            self._answers.extend((status, b'{"received": true}', {}) for status in statuses)

    def answer_with(self, status: int, *, body: bytes = b"", headers: dict | None = None) -> None:
        with self._lock:
            self._answers.append((status, body, headers or {}))

    @property
    def requests(self) -> list[ReceivedWebhook]:
        with self._lock:
            return list(self._requests)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        expected = "sha256=" + hmac.new(self.secret.encode(), raw, hashlib.sha256).hexdigest()
        signature_ok = hmac.compare_digest(headers.get("x-memory-signature", ""), expected)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            status, data, extra = self._answers.popleft() if self._answers else (200, b'{"received": true}', {})
            if not signature_ok:
                status, data, extra = 401, b'{"received": false}', {}
            self._requests.append(ReceivedWebhook(headers, raw, body, signature_ok, status))
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
