"""Work that must not hold its caller (access statistics, search statistics).

With a broker it is a Celery task, sent after commit. Without one tasks run eagerly, so the same
task runs in a one-thread pool beside the caller instead of inside its request.
"""

import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")


def background_send(task, *args) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _pool.submit(_run, task, args)
    else:
        transaction.on_commit(lambda: task.delay(*args))


def background_drain(timeout: float = 30) -> None:
    """Wait until what was sent so far has run (in-process pool only; for tests and shutdown)."""
    _pool.submit(lambda: None).result(timeout=timeout)


def _run(task, args) -> None:
    try:
        task.apply(args=args, throw=True)
    except Exception:
        logger.exception("background task %s failed", task.name)
    finally:
        # A pool thread's connection would otherwise outlive its use (and block test teardown).
        connection.close()
