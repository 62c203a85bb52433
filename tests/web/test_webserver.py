"""Gunicorn's worker hook: each web worker warms the embedder and, without a broker, starts the periodic runner."""

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
