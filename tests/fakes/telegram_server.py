"""A local Telegram Bot API for tests: the service's real HTTP client talks to it over a socket on
127.0.0.1, and it answers in the Bot API's JSON shape.

    with FakeTelegramServer() as bot:
        settings.TELEGRAM_API_BASE = bot.base_url
        settings.TELEGRAM_BOT_TOKEN = bot.token
        bot.fail_next(500)                 # the next call answers 500 (then normal service)
        bot.fail_next(429, retry_after=0)  # a rate limit with its retry_after
        ...
        bot.calls                          # every call: method, status answered, JSON body
        bot.messages_to(chat_id)           # texts delivered by sendMessage, in order

Methods served: sendMessage, setWebhook, deleteWebhook, getMe, getWebhookInfo. A wrong token is a
401 and an unknown method a 404, as with the real API.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BOT_USER = {"id": 7000000001, "is_bot": True, "first_name": "Memory", "username": "memory_test_bot"}


@dataclass
class BotApiCall:
    method: str
    status: int
    body: Any


def telegram_update(update_id: int, *, user_id: int, chat_id: int, text: str, first_name: str = "Ana") -> dict:
    """An update as Telegram sends it for a private text message."""
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id * 10,
            "from": {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en"},
            "chat": {"id": chat_id, "first_name": first_name, "type": "private"},
            "date": int(time.time()),
            "text": text,
        },
    }


class FakeTelegramServer:
    def __init__(self, token: str = "123456:TEST-token_abc", host: str = "127.0.0.1"):
        self.token = token
        self._host = host
        self._failures: deque[tuple[int, float | None]] = deque()
        self._calls: list[BotApiCall] = []
        self._lock = threading.Lock()
        self._message_id = 0
        # file_id -> (file_path, bytes): what getFile describes and /file/bot<token>/<path> serves.
        self._files: dict[str, tuple[str, bytes]] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeTelegramServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - quiet test output
                pass

            def do_POST(self):
                server._handle(self)

            def do_GET(self):
                server._handle(self)

        self._httpd = ThreadingHTTPServer((self._host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-telegram", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeTelegramServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://{self._host}:{self._httpd.server_address[1]}"

    def add_file(self, file_id: str, data: bytes, *, file_path: str) -> None:
        """A file a user sent (a photo, a document), as the Bot API keeps it."""
        with self._lock:
            self._files[file_id] = (file_path, data)

    def fail_next(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    @property
    def calls(self) -> list[BotApiCall]:
        with self._lock:
            return list(self._calls)

    def messages_to(self, chat_id: int) -> list[str]:
        return [
            c.body["text"]
            for c in self.calls
            if c.method == "sendMessage" and c.status == 200 and c.body.get("chat_id") == chat_id
        ]

    # -- serving ---------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        prefix, _, method = handler.path.split("?", 1)[0].lstrip("/").partition("/")
        if prefix == "file":
            self._serve_file(handler, method)
            return
        status, answer = self._answer(prefix, method, body)
        with self._lock:
            self._calls.append(BotApiCall(method, status, body))
        data = json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _serve_file(self, handler: BaseHTTPRequestHandler, rest: str) -> None:
        bot, _, file_path = rest.partition("/")
        with self._lock:
            found = [data for path, data in self._files.values() if path == file_path]
            self._calls.append(
                BotApiCall("file", 200 if found and bot == f"bot{self.token}" else 404, {"path": file_path})
            )
        data = found[0] if found and bot == f"bot{self.token}" else b"Not Found"
        handler.send_response(200 if found and bot == f"bot{self.token}" else 404)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _answer(self, prefix: str, method: str, body: dict) -> tuple[int, dict]:
        if prefix != f"bot{self.token}":
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self._lock:
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            status, retry_after = failure
            answer = {"ok": False, "error_code": status, "description": "Internal Server Error"}
            if status == 429:
                answer["description"] = f"Too Many Requests: retry after {retry_after or 0}"
                answer["parameters"] = {"retry_after": retry_after or 0}
            return status, answer
        if method == "sendMessage":
            if not isinstance(body.get("chat_id"), int | str) or "chat_id" not in body:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: chat_id is empty"}
            text = body.get("text")
            if not isinstance(text, str) or not text.strip():
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message text is empty"}
            if len(text) > 4096:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}
            with self._lock:
                self._message_id += 1
                message_id = self._message_id
            message = {
                "message_id": message_id,
                "from": BOT_USER,
                "chat": {"id": body["chat_id"], "type": "private"},
                "date": int(time.time()),
                "text": text,
            }
            return 200, {"ok": True, "result": message}
        if method == "setWebhook":
            if not body.get("url"):
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: bad webhook: URL is empty"}
            return 200, {"ok": True, "result": True, "description": "Webhook was set"}
        if method == "deleteWebhook":
            return 200, {"ok": True, "result": True, "description": "Webhook was deleted"}
        if method == "getFile":
            with self._lock:
                found = self._files.get(body.get("file_id"))
            if found is None:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: invalid file_id"}
            path, data = found
            result = {"file_id": body["file_id"], "file_unique_id": body["file_id"][::-1], "file_size": len(data)}
            return 200, {"ok": True, "result": {**result, "file_path": path}}
        if method == "getMe":
            return 200, {"ok": True, "result": BOT_USER}
        if method == "getWebhookInfo":
            return 200, {"ok": True, "result": {"url": "", "has_custom_certificate": False, "pending_update_count": 0}}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
