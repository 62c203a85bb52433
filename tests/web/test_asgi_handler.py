"""web.asgi_handler: Django's ASGI handler with the middleware chain and the view in one sync call."""

import json
import threading

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator

from memories.api import views
from tests.factories import MemoryFactory, api_key_for
from tests.support import asgi_http_scope
from web.asgi_handler import SyncChainASGIHandler


def _post(handler, path: str, body: dict, key: str) -> tuple[int, dict]:
    payload = json.dumps(body).encode()
    headers = [
        (b"authorization", f"Token {key}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    scope = asgi_http_scope("POST", path, headers=headers)

    async def exchange():
        communicator = ApplicationCommunicator(handler, scope)
        await communicator.send_input({"type": "http.request", "body": payload})
        start = await communicator.receive_output(10)
        chunks = []
        while True:
            message = await communicator.receive_output(10)
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        # The handler closes the response (request_finished: the connection goes back) after sending it.
        await communicator.wait(10)
        return start["status"], json.loads(b"".join(chunks))

    return async_to_sync(exchange)()


@pytest.mark.django_db(transaction=True)
def test_a_search_runs_its_middleware_and_view_on_one_thread(user, monkeypatch):
    # given a memory of alice, and the thread of each middleware's and the view's work recorded
    MemoryFactory(owner=user, content="Alice keeps bees on the roof")
    key = api_key_for(user)
    threads = {}
    search = views.memory_search_run

    def recorded(**kwargs):
        threads["view"] = threading.get_ident()
        return search(**kwargs)

    monkeypatch.setattr(views, "memory_search_run", recorded)
    handler = SyncChainASGIHandler()
    outermost = handler._middleware_chain

    def chain(request):
        threads["chain"] = threading.get_ident()
        return outermost(request)

    handler._middleware_chain = chain

    # when alice searches through the handler
    status, body = _post(handler, "/api/v1/search/", {"query": "bees"}, key)

    # then the answer is the search's, and the view ran on the thread that ran the chain
    assert status == 200, body
    assert [r["content"] for r in body["results"]] == ["Alice keeps bees on the roof"]
    assert threads["view"] == threads["chain"]
