"""`manage.py serve` in embedded mode (no Redis) with two worker processes, over real sockets.

Which worker holds a connection is read from the operating system (psutil), so the test knows that
an event went from one process to a WebSocket held by the other, and which process holds the
periodic tasks' lock.
"""

import http.client
import json
import os
import signal
import time

import psutil
import pytest

from tests.factories import UserFactory, api_key_for
from tests.integration.harness import BIN, EventSocket, Proc, database_env, free_port, wait_until
from tests.support import periodic_leaders

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

NAMES = "Bob Priya Marta Kenji Amara Liam Sofia Omar Yuki Pedro".split()
THINGS = "stamps vinyl records old maps seashells comics teapots fossils postcards".split(" ")
CITIES = "Leeds Porto Osaka Nairobi Denver Tallinn Lyon Bogota Oslo Dublin".split()


def _contents():
    """Distinct statements (no two merge into one memory), as many as wanted."""
    for n in range(60):
        yield f"{NAMES[n % 10]} collects {THINGS[n % 9]} in {CITIES[(n * 3) % 10]}."


def _serve(log_dir) -> tuple[Proc, int]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "DATABASE_URL", "EMBEDDED_PG"))}
    env.update(database_env())
    env.update(EMBEDDING_PROVIDER="hashing", PYTHONUNBUFFERED="1", LOG_LEVEL="INFO", PERIODIC_SWEEP_SECONDS="0.5")
    proc = Proc(
        "serve",
        [str(BIN / "python"), "manage.py", "serve", "--no-demo", "--workers", "2", "--port", str(port)],
        env,
        log_dir,
    )
    proc.wait_for_log(r"Booting worker[\s\S]*Booting worker", timeout=120)

    def ready():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            return conn.getresponse().status == 200
        except OSError:
            return False

    wait_until(ready, timeout=120, message="the server answering")
    return proc, port


def _children(proc: Proc) -> list[psutil.Process]:
    return [child for child in psutil.Process(proc.pid).children(recursive=True) if "python" in child.name()]


def _workers(proc: Proc) -> set[int]:
    return {child.pid for child in _children(proc) if "serve_background" not in child.cmdline()}


def _background(proc: Proc) -> set[int]:
    return {child.pid for child in _children(proc) if "serve_background" in child.cmdline()}


def _holder(workers: set[int], server_port: int, client_port: int) -> int | None:
    """The worker process holding the server side of the TCP connection from `client_port`."""
    for pid in workers:
        for conn in psutil.Process(pid).net_connections("tcp"):
            if conn.laddr.port == server_port and conn.raddr and conn.raddr.port == client_port:
                return pid
    return None


def _leaders() -> list[str]:
    return list(periodic_leaders().values())


def test_events_reach_sockets_held_by_either_worker_and_periodic_work_has_one_leader(log_dir, procs):
    owner = UserFactory(username="alice")
    key = api_key_for(owner)
    proc, port = _serve(log_dir)
    procs.append(proc)
    workers = _workers(proc)
    assert len(workers) == 2, proc.log()[-3000:]

    # given WebSockets of alice held by both workers (new connections until each worker has some)
    sockets, holders = [], []
    # (on a busy machine the worker that is running accepts most new connections: a pause lets the other one)
    while set(holders) != workers and len(sockets) < 60:
        if sockets:
            time.sleep(0.05)
        ws = EventSocket(f"http://127.0.0.1:{port}", key)
        sockets.append(ws)
        holders.append(wait_until(lambda ws=ws: _holder(workers, port, ws.local_port), 10, message="socket holder"))
    try:
        # when memories are written over HTTP, each on a new connection, until each worker has written some
        producers, written = [], []
        for content in _contents():
            if set(producers) == workers and len(written) >= 4:
                break
            written.append(content)
            time.sleep(0.05)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(
                "POST",
                "/api/v1/memories/",
                body=json.dumps({"content": content}),
                headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            assert response.status == 201, response.read()[:500]
            response.read()
            # the connection is kept alive after the answer: whoever holds it now handled the request
            producers.append(_holder(workers, port, conn.sock.getsockname()[1]))
            conn.close()

        # then every socket, whichever worker holds it, receives every memory's event exactly once
        def added(ws):
            return [e["data"]["memory"]["content"] for e in ws.snapshot() if e["type"] == "memory.changed"]

        for ws in sockets:
            wait_until(lambda ws=ws: len(added(ws)) >= len(written), 15, message="every event on every socket")
        time.sleep(0.5)
        received = [sorted(added(ws)) for ws in sockets]
    finally:
        for ws in sockets:
            ws.close()

    assert set(holders) == workers
    assert set(producers) == workers
    assert received == [sorted(written)] * len(sockets)

    # and the periodic tasks' lock is held by the server's one background process, not a worker;
    # when that process is killed, the server starts another, which takes over
    leaders = wait_until(_leaders, 20, message="a periodic leader")
    assert len(leaders) == 1
    leader_pid = int(leaders[0].rsplit(" ", 1)[1])
    assert _background(proc) == {leader_pid}
    os.kill(leader_pid, signal.SIGKILL)
    new_leaders = wait_until(lambda: [n for n in _leaders() if n != leaders[0]], 60, message="a new leader")
    assert len(new_leaders) == 1
    new_leader_pid = int(new_leaders[0].rsplit(" ", 1)[1])
    assert _background(proc) == {new_leader_pid}
    assert _workers(proc) == workers
    assert "Traceback" not in proc.log(), proc.log()[-3000:]
