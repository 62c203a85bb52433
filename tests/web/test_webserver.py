"""Gunicorn's worker hooks: each web worker warms the embedder and, without a broker, starts the
periodic runner; a stopped worker writes what it still buffered before it exits."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress

import pytest

from accesslog.models import QueryLog
from analytics.models import RequestDaily
from memories.models import Memory
from tests.factories import MemoryFactory, api_key_for
from tests.integration.harness import ROOT, command_env, free_port
from web import webserver


def test_web_workers_start_the_runner_only_without_redis(settings, monkeypatch):
    started = []
    monkeypatch.setattr(webserver, "embedder_warm_up", lambda: None)
    monkeypatch.setattr(webserver, "periodic_runner_start", lambda: started.append(True))

    settings.REDIS_URL = ""
    webserver._post_worker_init(worker=None)
    settings.REDIS_URL = "redis://127.0.0.1:6379/9"
    webserver._post_worker_init(worker=None)

    assert started == [True]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_stopped_worker_writes_what_it_still_buffered_before_it_exits(user):
    # given a memory, and a server whose workers would hold a search's off-path writes for an hour
    memory = MemoryFactory(owner=user, content="Lena keeps bees on her roof in Porto")
    key, port, hour = api_key_for(user), free_port(), "3600"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-demo", "--workers", "1", "--port", str(port)],
        cwd=ROOT,
        env=command_env(
            LOG_LEVEL="WARNING",
            ACCESS_COUNT_FLUSH_SECONDS=hour,
            ACCESS_LOG_FLUSH_SECONDS=hour,
            REQUEST_ANALYTICS_FLUSH_SECONDS=hour,
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_healthy(server, port)

        # when a search finds the memory
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/search/",
            data=json.dumps({"query": "who keeps bees?"}).encode(),
            headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            found = [r["id"] for r in json.load(response)["results"]]

        # then the worker holds its writes for now
        assert found == [str(memory.pk)]
        assert Memory.objects.get(pk=memory.pk).access_count == 0
        assert (QueryLog.objects.count(), RequestDaily.objects.count()) == (0, 0)

        # when the server is stopped as `docker stop` stops it
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

    # then the worker exited normally, having written them first
    assert server.returncode == 0
    assert Memory.objects.get(pk=memory.pk).access_count == 1
    assert list(QueryLog.objects.values_list("owner_id", "kind", "query")) == [(user.pk, "search", "who keeps bees?")]
    assert list(RequestDaily.objects.values_list("owner_id", "kind", "count")) == [(user.pk, "search", 1)]


def _wait_healthy(server: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and server.poll() is None:
        with suppress(OSError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        time.sleep(0.3)
    raise AssertionError(f"the server did not answer: {server.stderr.read() if server.poll() is not None else ''}")
