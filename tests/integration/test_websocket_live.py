"""/ws/events/ on a real daphne server with the Redis channel layer."""

import time

import pytest
from asgiref.sync import async_to_sync
from channels_redis.core import RedisChannelLayer

from memory_project.events import STAFF_GROUP, owner_group
from tests.factories import UserFactory, api_key_for
from tests.integration.harness import EventSocket, process_env, start_web

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_an_idle_socket_stays_open_and_gets_events_published_by_another_process(redis_server, log_dir, procs):
    db = 11
    redis_server.flush(db)
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    sockets = []
    try:
        web, base = start_web(process_env(redis_server.url(db)), log_dir)
        procs.append(web)
        sockets += [EventSocket(base, api_key_for(alice)), EventSocket(base, api_key_for(bob))]
        time.sleep(8)  # longer than the layer's 5 s blocking pop: the consumer must survive it

        # what a worker does: a group_send through Redis
        layer = RedisChannelLayer(hosts=[{"address": redis_server.url(db), "socket_timeout": 30}])
        event = {"type": "event.message", "event": {"type": "memory.changed", "data": {"n": 1}}}
        async_to_sync(layer.group_send)(owner_group(alice.pk), event)
        async_to_sync(layer.group_send)(STAFF_GROUP, {**event, "owner_id": str(alice.pk)})

        got = sockets[0].wait_for(lambda e: e["type"] == "memory.changed", timeout=10)
        time.sleep(0.5)
    finally:
        for ws in sockets:
            ws.close()
        for proc in reversed(procs):
            proc.stop()
        redis_server.flush(db)

    assert got == {"type": "memory.changed", "data": {"n": 1}}
    assert sockets[1].snapshot() == []
    assert "Traceback" not in web.log(), web.log()[-3000:]


def test_anonymous_and_foreign_origin_connections_are_refused(redis_server, log_dir, procs):
    db = 11
    redis_server.flush(db)
    owner = UserFactory(username="alice")
    try:
        web, base = start_web(process_env(redis_server.url(db)), log_dir)
        procs.append(web)
        anonymous = EventSocket(base, None)
        anonymous_code = anonymous.wait_closed(10)
        bad_key = EventSocket(base, "nope")
        bad_key_code = bad_key.wait_closed(10)
        with pytest.raises(AssertionError, match="403"):
            EventSocket(base, api_key_for(owner), headers={"Origin": "https://evil.example"})
    finally:
        for proc in reversed(procs):
            proc.stop()
        redis_server.flush(db)

    assert (anonymous_code, bad_key_code) == (4401, 4401)
