"""Issue 12, finding 8: every dashboard API error is JSON in the API's shape (CSRF included), and an
over-long URL gets 414 instead of a dropped connection."""

import asyncio
import json

import pytest
from django.test import Client

from memories.models import Memory
from memory_project.limits import twisted_long_request_line_answers_414
from tests.factories import MemoryFactory, UserFactory
from tests.support import asgi_http_scope
from web.asgi import application

pytestmark = pytest.mark.django_db


def test_a_csrf_failure_on_the_dashboard_api_is_json(settings):
    owner = UserFactory(username="jo")
    memory = MemoryFactory(owner=owner, content="Likes tea")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)

    response = browser.patch(
        f"/dashboard/api/memories/{memory.pk}/", json.dumps({"content": "x"}), content_type="application/json"
    )

    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "csrf_failed" and error["message"].startswith("CSRF verification failed")
    assert Memory.objects.get(pk=memory.pk).content == "Likes tea"


def test_a_csrf_failure_on_a_page_is_still_djangos_page():
    owner = UserFactory(username="kim")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)

    response = browser.post("/accounts/logout/")

    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


def test_an_unknown_dashboard_api_path_is_a_json_404():
    browser = Client()
    browser.force_login(UserFactory(username="lee"))

    response = browser.get("/dashboard/api/no-such-endpoint/")

    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "Not found.", "details": None}}


async def _asgi_get(path: str, query: bytes = b"") -> tuple[dict, bytes]:
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = asgi_http_scope("GET", path, query=query, headers=[(b"host", b"127.0.0.1")])
    await application(scope, receive, send)
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_an_over_long_url_is_answered_414_by_the_application(settings):
    settings.MAX_URL_BYTES = 8192

    start, body = asyncio.run(_asgi_get("/api/v1/memories/", b"q=" + b"a" * 9000))

    assert start["status"] == 414
    assert json.loads(body)["error"]["code"] == "uri_too_long"


def test_a_request_line_past_the_servers_limit_is_answered_414_not_dropped():
    from twisted.internet.testing import StringTransport
    from twisted.web import http

    twisted_long_request_line_answers_414()
    channel = http.HTTPChannel()
    transport = StringTransport()
    channel.makeConnection(transport)

    channel.dataReceived(b"GET /api/v1/memories/?q=" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")

    assert transport.value().startswith(b"HTTP/1.1 414 URI Too Long\r\n")
    assert b'"uri_too_long"' in transport.value()
    assert transport.disconnecting
