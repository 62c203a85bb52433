"""WebSocket /ws/events/: who may connect, which groups they join, what they receive (in-memory layer)."""

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import Client

from memory_project.events import event_publish
from tests.factories import UserFactory, api_key_for
from web.asgi import application

pytestmark = pytest.mark.django_db


def _publish(django_capture_on_commit_callbacks, *events):
    with django_capture_on_commit_callbacks(execute=True):
        for owner_id, type_, data in events:
            event_publish(owner_id=owner_id, type=type_, data=data, rules=False)


async def _connect(path, headers=()):
    communicator = WebsocketCommunicator(application, path, headers=list(headers))
    connected, code = await communicator.connect(timeout=5)
    return communicator, connected, code


async def _messages(communicator, timeout=0.3) -> list[dict]:
    # receive_nothing waits without cancelling the application, unlike a timed-out receive.
    received = []
    while not await communicator.receive_nothing(timeout=timeout):
        received.append(await communicator.receive_json_from(timeout=1))
    return received


def _session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}".encode()


def test_anonymous_connection_is_closed_with_4401():
    async def scenario():
        communicator, connected, _ = await _connect("/ws/events/")
        closed = await communicator.receive_output(timeout=5)
        await communicator.disconnect()
        return connected, closed

    connected, closed = async_to_sync(scenario)()

    assert connected
    assert closed == {"type": "websocket.close", "code": 4401}


@pytest.mark.parametrize("token", ["not-a-key", ""])
def test_a_bad_token_is_anonymous_even_with_a_session_cookie(token):
    owner = UserFactory(username="carol")
    cookie = _session_cookie(owner)

    async def scenario():
        communicator, _, _ = await _connect(f"/ws/events/?token={token}", [(b"cookie", cookie)])
        closed = await communicator.receive_output(timeout=5)
        await communicator.disconnect()
        return closed

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": 4401}


def test_a_revoked_key_is_refused():
    from memories.models import ApiKey

    owner = UserFactory(username="dave")
    key = api_key_for(owner)
    ApiKey.objects.filter(owner=owner).update(revoked_at="2020-01-01T00:00:00Z")

    async def scenario():
        communicator, _, _ = await _connect(f"/ws/events/?token={key}")
        closed = await communicator.receive_output(timeout=5)
        await communicator.disconnect()
        return closed

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": 4401}


def test_token_owner_gets_own_events_only(django_capture_on_commit_callbacks):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    alice_key, bob_key = api_key_for(alice), api_key_for(bob)

    async def scenario():
        a, a_ok, _ = await _connect(f"/ws/events/?token={alice_key}")
        b, b_ok, _ = await _connect("/ws/events/", [(b"authorization", f"Token {bob_key}".encode())])
        await sync_to_async(_publish)(
            django_capture_on_commit_callbacks,
            (alice.pk, "memory.changed", {"n": 1}),
            (bob.pk, "session.ended", {"n": 2}),
            (alice.pk, "extraction.completed", {"n": 3}),
        )
        got_a, got_b = await _messages(a), await _messages(b)
        await a.disconnect()
        await b.disconnect()
        return a_ok and b_ok, got_a, got_b

    ok, got_a, got_b = async_to_sync(scenario)()

    assert ok
    assert got_a == [{"type": "memory.changed", "data": {"n": 1}}, {"type": "extraction.completed", "data": {"n": 3}}]
    assert got_b == [{"type": "session.ended", "data": {"n": 2}}]


def test_staff_dashboard_session_sees_every_owner_once(django_capture_on_commit_callbacks):
    staff = UserFactory(username="root", is_staff=True)
    alice = UserFactory(username="alice")
    cookie = _session_cookie(staff)

    async def scenario():
        s, ok, _ = await _connect("/ws/events/", [(b"cookie", cookie), (b"origin", b"http://127.0.0.1:8000")])
        await sync_to_async(_publish)(
            django_capture_on_commit_callbacks,
            (alice.pk, "memory.changed", {"n": 1}),
            (staff.pk, "memory.changed", {"n": 2}),
        )
        got = await _messages(s)
        await s.disconnect()
        return ok, got

    ok, got = async_to_sync(scenario)()

    assert ok
    assert got == [
        {"type": "memory.changed", "data": {"n": 1}, "owner_id": str(alice.pk)},
        {"type": "memory.changed", "data": {"n": 2}, "owner_id": str(staff.pk)},
    ]


def test_a_foreign_origin_is_rejected_before_authentication():
    owner = UserFactory(username="erin")
    cookie = _session_cookie(owner)

    async def scenario():
        communicator, connected, _ = await _connect(
            "/ws/events/", [(b"cookie", cookie), (b"origin", b"https://evil.example")]
        )
        await communicator.disconnect()
        return connected

    assert async_to_sync(scenario)() is False


def test_messages_from_the_client_are_ignored(django_capture_on_commit_callbacks):
    owner = UserFactory(username="frank")
    key = api_key_for(owner)

    async def scenario():
        c, _, _ = await _connect(f"/ws/events/?token={key}")
        await c.send_json_to({"type": "event.message", "event": {"type": "forged", "data": {}}})
        got = await _messages(c)
        await c.disconnect()
        return got

    assert async_to_sync(scenario)() == []


@pytest.mark.django_db(transaction=True)
def test_revoking_a_key_closes_the_websockets_opened_with_it(django_capture_on_commit_callbacks):
    # given two sockets of one owner, one per key
    from memories.models import ApiKey
    from memories.services.api_keys import api_key_revoke

    owner = UserFactory(username="ivy")
    revoked_raw, kept_raw = api_key_for(owner), api_key_for(owner)
    revoked = ApiKey.objects.filter(owner=owner).order_by("pk").first()

    async def scenario():
        doomed, ok_doomed, _ = await _connect(f"/ws/events/?token={revoked_raw}")
        kept, ok_kept, _ = await _connect(f"/ws/events/?token={kept_raw}")
        # when the first key is revoked
        await sync_to_async(api_key_revoke)(key=revoked)
        closed = await doomed.receive_output(timeout=5)
        still_open = await kept.receive_nothing(timeout=0.3)
        # and a new connection with the revoked key is refused
        again, _, _ = await _connect(f"/ws/events/?token={revoked_raw}")
        refused = await again.receive_output(timeout=5)
        for communicator in (doomed, kept, again):
            await communicator.disconnect()
        return ok_doomed, ok_kept, closed, still_open, refused

    ok_doomed, ok_kept, closed, still_open, refused = async_to_sync(scenario)()

    # then only that key's socket was closed, with the code that tells the client to log in again
    assert ok_doomed and ok_kept
    assert closed == {"type": "websocket.close", "code": 4401}
    assert still_open is True
    assert refused == {"type": "websocket.close", "code": 4401}


def test_frames_that_are_not_json_are_ignored_and_the_socket_stays_open(django_capture_on_commit_callbacks):
    # Given an open socket
    owner = UserFactory(username="gina")
    key = api_key_for(owner)

    async def scenario():
        c, _, _ = await _connect(f"/ws/events/?token={key}")
        # When the client sends text that is not JSON, a binary frame and JSON nested past the parser
        await c.send_to(text_data="not json")
        await c.send_to(bytes_data=b"\x00\xff")
        await c.send_to(text_data="[" * 100_000 + "]" * 100_000)
        silent = await _messages(c)
        await sync_to_async(_publish)(django_capture_on_commit_callbacks, (owner.pk, "memory.created", {"id": "m1"}))
        got = await _messages(c)
        await c.disconnect()
        return silent, got

    silent, got = async_to_sync(scenario)()

    # Then nothing came back for them, and the next event still arrives
    assert silent == []
    assert [(m["type"], m["data"]) for m in got] == [("memory.created", {"id": "m1"})]


@pytest.mark.parametrize("path", ["/ws/nope/", "/ws/events", "/api/v1/memories/", "/mcp/"])
def test_a_websocket_handshake_on_another_path_is_refused(path):
    async def scenario():
        communicator, connected, _ = await _connect(path)
        await communicator.wait()
        return connected

    assert async_to_sync(scenario)() is False
