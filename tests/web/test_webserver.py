"""Gunicorn's worker hooks: each web worker warms the embedder and, without a broker, starts the
periodic runner; a stopped worker writes what it still buffered before it exits."""

import os
import signal
import subprocess
import sys

import pytest

from accesslog.models import QueryLog
from analytics.models import RequestDaily
from memories.models import Memory
from tests.factories import MemoryFactory, api_key_for
from tests.integration.harness import ROOT, answers_health, command_env, free_port, http, wait_until
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
    base = f"http://127.0.0.1:{port}"
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
        wait_until(lambda: server.poll() is not None or answers_health(base), 180, message="the server up")

        # when a search finds the memory
        status, body, _ = http("POST", f"{base}/api/v1/search/", key, {"query": "who keeps bees?"})
        found = [r["id"] for r in body["results"]]

        # then the worker holds its writes for now
        assert (status, found) == (200, [str(memory.pk)])
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
