"""Distributed mode end to end: a real Celery worker (and beat) on Redis, a real daphne server, real
WebSocket clients, all on the pytest test database."""

import time

import pytest
from django.contrib.auth import get_user_model

from memories.models import Memory
from sessions.models import ConversationTurn, Episode, ExtractionJob
from tests.factories import UserFactory, api_key_for
from tests.integration.harness import (
    EventSocket,
    TcpProxy,
    http,
    process_env,
    start_beat,
    start_web,
    start_worker,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ALICE_TURNS = [
    {"role": "user", "content": "I live in Lisbon and I work as a data engineer."},
    {"role": "assistant", "content": "Nice, Lisbon is lovely."},
    {"role": "user", "content": "I prefer Python over Java for every new project."},
    {"role": "assistant", "content": "Noted."},
]
BOB_TURNS = [
    {"role": "user", "content": "My favourite food is ramen."},
    {"role": "assistant", "content": "Ramen is great."},
    {"role": "user", "content": "I have a dog called Rex."},
]


def _logs(procs) -> str:
    return "\n".join(f"--- {p.name}\n{p.log()[-3000:]}" for p in procs)


def _create_session(base: str, key: str, turns: list[dict]) -> str:
    status, body, took = http("POST", f"{base}/api/v1/sessions/", key, {"agent": "it"})
    assert status == 201, body
    session_id = body["id"]
    status, body, took = http("POST", f"{base}/api/v1/sessions/{session_id}/turns/", key, {"turns": turns})
    assert status == 201, body
    return session_id


def _jobs_done(session_ids) -> bool:
    jobs = ExtractionJob.objects.filter(session_id__in=session_ids)
    return jobs.exists() and not jobs.exclude(status="done").exists()


def test_turns_become_memories_through_the_worker_and_events_reach_only_their_owner(redis_server, log_dir, procs):
    db = 9
    redis_server.flush(db)
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    root = UserFactory(username="root", is_staff=True)
    keys = {u.username: api_key_for(u) for u in (alice, bob, root)}
    env = process_env(redis_server.url(db))
    sockets = []
    try:
        procs.append(start_worker(env, log_dir))
        web, base = start_web(env, log_dir)
        procs.append(web)
        sockets += [EventSocket(base, keys[name]) for name in ("alice", "bob", "root")]
        alice_ws, bob_ws, root_ws = sockets
        time.sleep(0.5)  # group_add completes after the handshake

        alice_session = _create_session(base, keys["alice"], ALICE_TURNS)
        bob_session = _create_session(base, keys["bob"], BOB_TURNS)
        for session_id, key in ((alice_session, keys["alice"]), (bob_session, keys["bob"])):
            status, body, _ = http("POST", f"{base}/api/v1/sessions/{session_id}/end/", key)
            assert status == 202, body

        def consolidated(session_id):
            return lambda e: (
                e["type"] == "extraction.completed"
                and e["data"].get("session_id") == session_id
                and e["data"].get("kind") == "session_end"
            )

        try:
            done_a = alice_ws.wait_for(consolidated(alice_session), timeout=90)
            done_b = bob_ws.wait_for(consolidated(bob_session), timeout=90)
            root_ws.wait_for(consolidated(alice_session), timeout=10)
            root_ws.wait_for(consolidated(bob_session), timeout=10)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{_logs(procs)}") from None
        time.sleep(1)  # anything misrouted would arrive by now
    finally:
        for ws in sockets:
            ws.close()
        for proc in reversed(procs):
            proc.stop()
        redis_server.flush(db)

    assert done_a["data"]["session_id"] == alice_session and done_b["data"]["session_id"] == bob_session
    sessions_seen = {
        "alice": {e["data"].get("session_id") for e in alice_ws.snapshot()} - {None},
        "bob": {e["data"].get("session_id") for e in bob_ws.snapshot()} - {None},
    }
    assert sessions_seen == {"alice": {alice_session}, "bob": {bob_session}}
    assert {e["owner_id"] for e in root_ws.snapshot()} == {str(alice.pk), str(bob.pk)}
    assert all("owner_id" not in e for e in alice_ws.snapshot() + bob_ws.snapshot())
    assert Memory.objects.filter(owner=alice).exists() and Memory.objects.filter(owner=bob).exists()
    for ws, owner in ((alice_ws, alice), (bob_ws, bob)):
        written = {
            m["id"]
            for e in ws.snapshot()
            if e["type"] == "extraction.completed"
            for bucket in ("added", "updated", "superseded", "reinforced")
            for m in e["data"][bucket]
        }
        assert written
        assert set(Memory.objects.filter(pk__in=written).values_list("owner_id", flat=True)) == {owner.pk}
    for session_id in (alice_session, bob_session):
        job = ExtractionJob.objects.get(session_id=session_id, kind="session_end")
        assert (job.status, job.attempts) == ("done", 1)
        assert Episode.objects.filter(session_id=session_id).count() == 1


def test_broker_down_when_a_session_ends_then_the_sweeper_sends_the_job_once(redis_server, log_dir, procs):
    db = 10
    redis_server.flush(db)
    owner = UserFactory(username="alice")
    key = api_key_for(owner)
    broker = TcpProxy(redis_server.port)  # nothing listens on its port until start()
    try:
        web, base = start_web(process_env(broker.url(db)), log_dir)
        procs.append(web)

        session_id = _create_session(base, key, ALICE_TURNS)
        status, body, took = http("POST", f"{base}/api/v1/sessions/{session_id}/end/", key)

        # the request succeeded and everything it accepted is stored, with its jobs pending
        assert status == 202, body
        assert took < 10, took
        assert ConversationTurn.objects.filter(session_id=session_id).count() == len(ALICE_TURNS)
        jobs = ExtractionJob.objects.filter(session_id=session_id)
        assert jobs.filter(kind="session_end").count() == 1
        assert set(jobs.values_list("status", "attempts")) == {("pending", 0)}
        time.sleep(1)  # let the jobs age past EXTRACTION_SWEEP_AFTER_SECONDS

        broker.start()
        back = process_env(broker.url(db), EXTRACTION_SWEEP_AFTER_SECONDS=1, PERIODIC_SWEEP_SECONDS=1)
        procs.append(start_worker(back, log_dir))
        procs.append(start_beat(back, log_dir))
        try:
            wait_until(lambda: _jobs_done([session_id]), timeout=90, message="jobs done")
        except AssertionError as error:
            raise AssertionError(f"{error}\n{_logs(procs)}") from None
        time.sleep(2)  # a few more sweeps: none may run a finished job again
    finally:
        for proc in reversed(procs):
            proc.stop()
        redis_server.flush(db)
        broker.stop()

    jobs = ExtractionJob.objects.filter(session_id=session_id)
    assert set(jobs.values_list("status", "attempts")) == {("done", 1)}
    assert Episode.objects.filter(session_id=session_id).count() == 1
    assert ConversationTurn.objects.filter(session_id=session_id).count() == len(ALICE_TURNS)
    contents = list(Memory.objects.filter(owner=owner).values_list("content", flat=True))
    assert contents and len(contents) == len(set(contents))
    assert get_user_model().objects.count() == 1
