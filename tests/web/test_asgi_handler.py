"""web.asgi_handler: each request served in one call on a thread of a fixed pool."""

import json
import threading

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core import signals
from django.db import connection
from django.http import StreamingHttpResponse
from django.urls import path

from memories.api import views
from memories.models import Memory
from tests.factories import MemoryFactory, api_key_for
from tests.support import asgi_http_scope
from web.asgi_handler import SyncChainASGIHandler


def _streamed_contents(request):
    # Read while the body is sent: the database is used after the view has returned.
    def rows():
        for content in Memory.objects.order_by("content").values_list("content", flat=True):
            yield f"{content}|{threading.get_ident()}\n"

    return StreamingHttpResponse(rows(), content_type="text/plain")


# This module is also the URLconf of the streaming test.
urlpatterns = [path("stream/", _streamed_contents)]


def _exchange(handler, method: str, path: str, body: bytes = b"", headers=()) -> tuple[int, bytes]:
    scope = asgi_http_scope(method, path, headers=[(b"content-length", str(len(body)).encode()), *headers])

    async def exchange():
        communicator = ApplicationCommunicator(handler, scope)
        await communicator.send_input({"type": "http.request", "body": body})
        start = await communicator.receive_output(10)
        chunks = []
        while True:
            message = await communicator.receive_output(10)
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        await communicator.wait(10)
        return start["status"], b"".join(chunks)

    return async_to_sync(exchange)()


def _search(handler, key: str, query: str) -> tuple[int, dict]:
    headers = [(b"authorization", f"Token {key}".encode()), (b"content-type", b"application/json")]
    status, raw = _exchange(handler, "POST", "/api/v1/search/", json.dumps({"query": query}).encode(), headers)
    return status, json.loads(raw)


@pytest.fixture
def steps(monkeypatch):
    """The thread of each step of a request, and whether the thread still held a database
    connection when request_finished had run."""
    seen = []

    def started(**kwargs):
        seen.append(("started", threading.get_ident()))

    def finished(**kwargs):
        seen.append(("finished", threading.get_ident(), connection.connection is None))

    search = views.memory_search_run

    def recorded(**kwargs):
        seen.append(("view", threading.get_ident()))
        return search(**kwargs)

    monkeypatch.setattr(views, "memory_search_run", recorded)
    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    yield seen
    signals.request_started.disconnect(started)
    signals.request_finished.disconnect(finished)


@pytest.mark.django_db(transaction=True)
def test_a_request_runs_on_one_pool_thread_and_gives_its_connection_back(user, steps):
    # given a memory of alice
    MemoryFactory(owner=user, content="Alice keeps bees on the roof")
    key = api_key_for(user)
    handler = SyncChainASGIHandler()

    # when alice searches through the handler
    status, body = _search(handler, key, "bees")

    # then the answer is the search's; request_started, the view and request_finished ran on one
    # thread that is not the caller's, and that thread had given its connection back at the end
    assert status == 200, body
    assert [r["content"] for r in body["results"]] == ["Alice keeps bees on the roof"]
    thread = steps[0][1]
    assert thread != threading.get_ident()
    assert steps == [("started", thread), ("view", thread), ("finished", thread, True)]


@pytest.mark.django_db(transaction=True)
def test_requests_reuse_the_threads_of_the_pool(user, steps, settings):
    # given a handler with one request thread
    settings.WEB_THREADS = 1
    MemoryFactory(owner=user, content="Alice keeps bees on the roof")
    key = api_key_for(user)
    handler = SyncChainASGIHandler()

    # when alice searches three times
    statuses = [_search(handler, key, "bees")[0] for _ in range(3)]

    # then every request ran on that same thread
    assert statuses == [200, 200, 200]
    assert len(steps) == 9
    assert {step[1] for step in steps} == {steps[0][1]}


@pytest.mark.django_db(transaction=True)
# Django warns that it reads a sync iterator whole under ASGI: what it does for every streamed response.
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")
def test_a_streamed_response_is_read_and_closed_on_the_request_thread(steps, settings):
    # given two memories and a view that streams them, read from the database as the body is sent
    settings.ROOT_URLCONF = __name__
    MemoryFactory(content="first")
    MemoryFactory(content="second")
    handler = SyncChainASGIHandler()

    # when it is asked for
    status, raw = _exchange(handler, "GET", "/stream/")

    # then the whole body arrives, read on the request's thread, which then gave its connection back
    thread = steps[0][1]
    assert status == 200
    assert raw.decode() == f"first|{thread}\nsecond|{thread}\n"
    assert steps == [("started", thread), ("finished", thread, True)]
