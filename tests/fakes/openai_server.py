"""A local OpenAI-compatible HTTP server for tests: the real `openai` client talks to it over a real
socket on 127.0.0.1, so retries, timeouts and JSON handling are exercised end to end.

    with FakeOpenAIServer() as server:
        server.reply_json({"memories": []})          # a chat completion whose content is that JSON
        server.reply_error(429)                      # an HTTP error with an OpenAI-style body
        server.reply_text("not json", delay=1.0)     # answered after a delay
        settings.OPENAI_BASE_URL = server.base_url
        ...
        server.chat_requests[0].messages             # what the client sent

Queued replies answer POST /v1/chat/completions in order; with the queue empty the server answers
400 "no reply queued" (not retried by clients, so a missing reply fails fast). POST /v1/embeddings
always answers with deterministic vectors, and GET /v1/models lists one model.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MODEL = "fake-model"


@dataclass
class FakeReply:
    status: int = 200
    content: str = ""  # the assistant message content, for a 200 chat completion
    finish_reason: str = "stop"
    body: Any = None  # a raw JSON body, used as is when set (error bodies, odd payloads)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts)


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any
    received_at: float

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def last_user_message(self) -> str:
        users = [m.get("content", "") for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""


def _chat_completion(reply: FakeReply, model: str, number: int) -> dict:
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": None},
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": max(1, len(reply.content) // 4), "total_tokens": 11},
    }


def _embedding(text: str, dim: int) -> list[float]:
    values = []
    for i in range(dim):
        digest = hashlib.blake2b(f"{i}:{text}".encode(), digest_size=4).digest()
        values.append(int.from_bytes(digest, "little") / 2**32 - 0.5)
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class FakeOpenAIServer:
    def __init__(self, host: str = "127.0.0.1"):
        self._host = host
        self._replies: deque[FakeReply] = deque()
        self._requests: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - quiet test output
                pass

            def do_GET(self):
                server._handle(self)

            def do_POST(self):
                server._handle(self)

        self._httpd = ThreadingHTTPServer((self._host, 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval keeps stop() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://{self._host}:{self._httpd.server_address[1]}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def reply(self, reply: FakeReply) -> None:
        with self._lock:
            self._replies.append(reply)

    def reply_json(self, payload: Any, *, delay: float = 0.0) -> None:
        self.reply(FakeReply(content=json.dumps(payload, ensure_ascii=False), delay=delay))

    def reply_text(self, content: str, *, finish_reason: str = "stop", delay: float = 0.0) -> None:
        self.reply(FakeReply(content=content, finish_reason=finish_reason, delay=delay))

    def reply_error(
        self, status: int, message: str = "fake error", *, headers: dict[str, str] | None = None, delay: float = 0.0
    ) -> None:
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
        self.reply(FakeReply(status=status, body=body, headers=headers or {}, delay=delay))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- serving -----------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self._requests.append(
                ReceivedRequest(
                    handler.command, path, {k.lower(): v for k, v in handler.headers.items()}, body, time.monotonic()
                )
            )
            number = len(self._requests)
        if handler.command == "GET" and path.endswith("/models"):
            self._send(handler, 200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "fake"}]})
        elif handler.command == "POST" and path.endswith("/embeddings"):
            self._embeddings(handler, body)
        elif handler.command == "POST" and path.endswith("/chat/completions"):
            with self._lock:
                reply = self._replies.popleft() if self._replies else None
            if reply is None:
                reply = FakeReply(
                    status=400,
                    body={"error": {"message": "fake server: no reply queued", "type": "invalid_request_error"}},
                )
            if reply.delay and self._stopping.wait(reply.delay):
                return
            if reply.body is not None or reply.status != 200:
                self._send(handler, reply.status, reply.body, reply.headers)
            else:
                model = body.get("model", MODEL) if isinstance(body, dict) else MODEL
                self._send(handler, 200, _chat_completion(reply, model, number), reply.headers)
        else:
            self._send(handler, 404, {"error": {"message": f"fake server: no route {handler.command} {path}"}})

    def _embeddings(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        inputs = body.get("input", []) if isinstance(body, dict) else []
        inputs = [inputs] if isinstance(inputs, str) else inputs
        dim = int(body.get("dimensions") or 8) if isinstance(body, dict) else 8
        data = [{"object": "embedding", "index": i, "embedding": _embedding(str(t), dim)} for i, t in enumerate(inputs)]
        self._send(handler, 200, {"object": "list", "data": data, "model": body.get("model", MODEL), "usage": {}})

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout fired) before the answer came.
            pass


@pytest.fixture
def fake_openai():
    """A running FakeOpenAIServer, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server
