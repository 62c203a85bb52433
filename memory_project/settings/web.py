"""The web server (web/webserver.py: gunicorn with uvicorn workers) and its background process."""

import os

from memory_project.env import env_bool, env_float, env_int
from memory_project.settings.database import DB_POOL_MAX_SIZE

WEB_CONCURRENCY = env_int("WEB_CONCURRENCY", os.cpu_count() or 1, minimum=1, maximum=256)
# A worker that does not report for this long is restarted; a stop waits this long for requests.
WEB_TIMEOUT = env_int("WEB_TIMEOUT", 60, minimum=1)
WEB_GRACEFUL_TIMEOUT = env_int("WEB_GRACEFUL_TIMEOUT", 30, minimum=1)
WEB_KEEPALIVE = env_int("WEB_KEEPALIVE", 5, minimum=1)
WEB_ACCESS_LOG = env_bool("WEB_ACCESS_LOG", True)
# Threads per worker process that run requests (web/asgi_handler.py); more requests wait for one.
# Each borrows a pooled connection for its request, beside those the search's BM25 threads and the
# background thread keep: together under DB_POOL_MAX_SIZE (system check web.W001).
WEB_THREADS = env_int("WEB_THREADS", 8, minimum=1, maximum=256)
# Embedded mode (no broker): `serve` runs the work a Celery worker would do per turn (turn vectors,
# extraction jobs) in one process of its own at a lower CPU priority (memory_project/
# background_process.py), so it yields the cores to requests; 0 runs it on each web process's
# background thread and in the request after commit, as tests and management commands do.
BACKGROUND_PROCESS = env_bool("BACKGROUND_PROCESS", True)
# The niceness of that process.
BACKGROUND_NICE = env_int("BACKGROUND_NICE", 10, minimum=0, maximum=19)
# A Celery worker's (memory_project/celery.py). 0 by default: with the worker on the web tier's two
# cores, 10 gave no more requests per second under bench/load.py, and twice the turns left waiting
# for a vector (distributed mode has no lag bound).
WORKER_NICE = env_int("WORKER_NICE", 0, minimum=0, maximum=19)
# How often that process looks for work when it found none the last time.
BACKGROUND_POLL_SECONDS = env_float("BACKGROUND_POLL_SECONDS", 0.2, minimum=0.01)
# A turn waiting longer than this for its vector (that process starved of CPU by the requests) is
# embedded by the web worker storing the next turn: the bound on vector search's lag under load
# (0: no bound, the web workers never embed).
BACKGROUND_MAX_LAG_SECONDS = env_float("BACKGROUND_MAX_LAG_SECONDS", 10.0, minimum=0.0)
# Each web process may hold a pool's worth of connections plus its own lock and LISTEN connections;
# the embedded server is started with room for all of them, a worker tier and the test runs.
EMBEDDED_PG_MAX_CONNECTIONS = env_int(
    "EMBEDDED_PG_MAX_CONNECTIONS", max(100, WEB_CONCURRENCY * (DB_POOL_MAX_SIZE + 3) + 40), minimum=20
)
