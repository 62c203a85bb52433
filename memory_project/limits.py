"""414 URI Too Long, answered by the application for any server in front of it.

An over-long URL used to end in a closed connection without any response (issue 12). This ASGI
middleware answers 414 in the API's JSON error shape when the path and query exceed MAX_URL_BYTES;
the server's own request-line limit must be above it (serve gives daphne room for that).
"""

import json

from django.conf import settings


class UriTooLongMiddleware:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            size = len(scope.get("raw_path") or scope.get("path", "").encode()) + len(scope.get("query_string") or b"")
            if size > settings.MAX_URL_BYTES:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1009})
                    return
                body = json.dumps(
                    {
                        "error": {
                            "code": "uri_too_long",
                            "message": f"The URL is longer than {settings.MAX_URL_BYTES} bytes.",
                            "details": None,
                        }
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 414,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        return await self.app(scope, receive, send)


def twisted_long_request_line_answers_414() -> None:
    """Under daphne, Twisted drops the connection without a word when a request line passes its
    16 KiB line limit (LineReceiver.lineLengthExceeded); answer 414 there too."""
    from twisted.web import http

    def line_too_long(channel, line):
        body = json.dumps(
            {"error": {"code": "uri_too_long", "message": "The request line is too long.", "details": None}}
        ).encode()
        channel.transport.write(
            b"HTTP/1.1 414 URI Too Long\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        channel.transport.loseConnection()

    http.HTTPChannel.lineLengthExceeded = line_too_long
