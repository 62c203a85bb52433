"""bench/load.py with --rate times each request from when it was due, not from when it was sent."""

import json
import threading
import time
from argparse import Namespace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.bench.support import bench_script


@pytest.fixture
def load():
    return bench_script("load")


class _Answer(BaseHTTPRequestHandler):
    """The service's answer to a session create, over a real socket; counts the requests it gets."""

    received = 0

    def do_POST(self):
        type(self).received += 1
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"id": "s1"}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Answer.received = 0
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_paced_request_sent_late_is_timed_from_when_it_was_due(load, server):
    # given a paced client whose next request fell due a second ago (a server that fell behind)
    recorder = load.Recorder()
    args = Namespace(seed=11, turns=8)
    agent = load.Agent(0, server, "key", args, recorder, time.monotonic() + 60, gap=0.001)
    agent.due = time.monotonic() - 1.0

    # when it sends it
    status, body = agent.call("session_create", "POST", "/api/v1/sessions/", {"agent": "load"})

    # then the answer is the server's, and the recorded time includes the second it waited to go out
    assert (status, body) == (201, {"id": "s1"})
    [(op, recorded_status, seconds, _)] = recorder.rows
    assert (op, recorded_status) == ("session_create", 201)
    assert seconds >= 1.0


def test_a_paced_request_due_after_the_window_is_not_sent(load, server):
    # given a paced client whose window has closed (its next request falls due after it)
    recorder = load.Recorder()
    args = Namespace(seed=11, turns=8)
    agent = load.Agent(0, server, "key", args, recorder, time.monotonic(), gap=0.5)

    # when it would send its next request
    status, body = agent.call("session_create", "POST", "/api/v1/sessions/", {"agent": "load"})

    # then nothing went out and nothing was recorded
    assert (status, body) == (0, None)
    assert recorder.rows == []
    assert _Answer.received == 0
