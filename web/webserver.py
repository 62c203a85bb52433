"""The production web server: gunicorn supervising uvicorn worker processes (HTTP and WebSockets).

One Python process runs one request's Python at a time, so the service scales over cores with
processes: gunicorn forks WEB_CONCURRENCY workers (default: one per core), restarts one that dies or
hangs, and shuts them down gracefully. Each worker runs the ASGI application under uvicorn (uvloop,
httptools, websockets). Settings: WEB_CONCURRENCY, WEB_TIMEOUT, WEB_GRACEFUL_TIMEOUT, WEB_KEEPALIVE,
WEB_ACCESS_LOG (see memory_project/settings/web.py).

Without a broker, live events reach the WebSockets of every worker through PostgreSQL
(memory_project.pg_layer), and the master also supervises one background process at a lower CPU
priority, which takes the turn vectors, the extraction jobs and the periodic runner off the workers
(memory_project.background_process). With BACKGROUND_PROCESS=0 that work stays in the workers: each
starts the periodic runner, and a database lock lets exactly one of them run the schedule
(memory_project.celery.PeriodicRunner).
"""

import logging
import os
import signal
import sys

from django.conf import settings
from gunicorn.app.base import BaseApplication
from uvicorn_worker import UvicornWorker

from memories.providers.embeddings import embedder_warm_up
from memory_project.background import background_process_attach
from memory_project.background_process import BackgroundProcess
from memory_project.batching import batch_buffers_flush
from memory_project.celery import periodic_runner_start

logger = logging.getLogger(__name__)

_runner = None
# The master's background process (embedded mode), started before the workers fork.
_background = None


def _post_worker_init(worker) -> None:
    """In each worker, once the application is loaded and before it serves its first request."""
    global _runner
    if _background is not None:
        background_process_attach()
    # The first search of a worker should not pay for loading the model.
    embedder_warm_up()
    if not settings.REDIS_URL and _background is None:
        _runner = periodic_runner_start()


def _worker_exit(server, worker) -> None:
    if _runner is not None:
        _runner.stop()  # lets go of the periodic lock at once, so another worker can take over
    # What the worker buffered in its last seconds (access counts, the access log, request analytics).
    batch_buffers_flush()


class Worker(UvicornWorker):
    """uvicorn's gunicorn worker, without its proxy-header handling: X-Forwarded-For and -Proto are
    read by the application, from TRUSTED_PROXIES only (memory_project/proxies.py)."""

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "proxy_headers": False}

    def init_signals(self) -> None:
        super().init_signals()
        # uvicorn stops gracefully on SIGTERM / SIGINT, then raises the signal again under the
        # handler it found: the default one killed the worker there, before gunicorn's worker_exit
        # hook (and atexit) ran, and the access counts, access log and request analytics the worker
        # still held were lost. Exiting normally runs them.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _exit_normally)


def _exit_normally(signum, frame) -> None:
    sys.exit(0)


class WebServer(BaseApplication):
    def __init__(self, *, host: str, port: int, workers: int):
        self.options = {
            "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "workers": workers,
            "worker_class": "web.webserver.Worker",
            "timeout": settings.WEB_TIMEOUT,
            "graceful_timeout": settings.WEB_GRACEFUL_TIMEOUT,
            "keepalive": settings.WEB_KEEPALIVE,
            # Logs, the access log included, go to stderr: stdout is the command's own output (the banner).
            "accesslog": "/dev/stderr" if settings.WEB_ACCESS_LOG else None,
            "errorlog": "-",
            "loglevel": settings.LOG_LEVEL.lower(),
            "post_worker_init": _post_worker_init,
            "worker_exit": _worker_exit,
            # The application is loaded in each worker after the fork, never in the master, so no
            # connection, thread or model of the master is shared by the workers.
            "preload_app": False,
            # gunicorn's runtime control socket has one default path per machine, which a second
            # service (or a test server) would fight over; nothing here uses it.
            "control_socket_disable": True,
        }
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        # Loaded in each worker after the fork: the ASGI app sets Django up and opens connections.
        from web.asgi import application

        return application


def web_server_run(*, host: str, port: int, workers: int | None = None) -> None:
    """Serve until stopped (SIGTERM or SIGINT: finish the requests under way, then exit)."""
    from django.db import connections

    # Whatever the caller (migrate, the demo owner) opened stays in this process: the workers fork
    # from it, and must not share its sockets.
    global _background
    for connection in connections.all(initialized_only=True):
        connection.close()
        if hasattr(connection, "close_pool"):
            connection.close_pool()
    if not settings.REDIS_URL and settings.BACKGROUND_PROCESS:
        manage = str(settings.BASE_DIR / "manage.py")
        _background = BackgroundProcess(
            command=[sys.executable, manage, "serve_background", "--parent", str(os.getpid())]
        )
        _background.start()
    try:
        WebServer(host=host, port=port, workers=workers or settings.WEB_CONCURRENCY).run()
    finally:
        if _background is not None:
            _background.stop()
