"""Work that must not hold its caller (access statistics, search statistics).

With a broker it is a Celery task, sent after commit. Without one tasks run eagerly, so the same
task runs in a one-thread pool beside the caller instead of inside its request.
"""

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

from celery.exceptions import Retry
from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")


def _new_pool_after_fork() -> None:
    # A forked child inherits the executor but not its thread: work sent to it would never run.
    global _pool
    _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")


os.register_at_fork(after_in_child=_new_pool_after_fork)


# True in the web workers of an embedded `serve` that runs a background process (memory_project.
# background_process): they leave turn vectors and extraction jobs to it.
_attached = False


def background_process_attach(attached: bool = True) -> None:
    """From now on this process leaves turn vectors and extraction jobs to the background process,
    which finds them in the database (stored turns without a vector, pending jobs)."""
    global _attached
    _attached = attached


def background_process_attached() -> bool:
    return _attached


def background_send(task, *args) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _pool.submit(_run, task, args)
    elif connection.in_atomic_block:
        transaction.on_commit(lambda: task.delay(*args))
    else:
        # Outside a transaction, sent now. on_commit would do the same, but first borrows a
        # connection to ask whether autocommit is on: from a thread that then ends (a batch
        # buffer's timer) that pooled connection was never given back, and after DB_POOL_MAX_SIZE
        # such sends every request of the process waited DB_POOL_TIMEOUT and got 503.
        task.delay(*args)


def background_drain(timeout: float = 30) -> None:
    """Wait until what was sent so far has run (in-process pool only; for tests and shutdown)."""
    _pool.submit(lambda: None).result(timeout=timeout)


def background_close(timeout: float = 30) -> None:
    """Close the pool thread's connection (test teardown, before the test database is dropped)."""
    # `connection` is looked up in the pool's thread: it is that thread's connection.
    _pool.submit(lambda: connection.close()).result(timeout=timeout)


def _run(task, args) -> None:
    # The thread keeps its connection between tasks: one per search (access statistics) made each
    # search open a PostgreSQL connection, ~7 ms for a ten-row UPDATE. A failed one is not kept.
    retries = 0
    while True:
        try:
            task.apply(args=args, retries=retries, throw=True)
            return
        except Retry as retry:
            # What a worker would do with the task's autoretry (a deadlock with a concurrent write,
            # a dropped connection): run it again, on a fresh connection, after its countdown.
            connection.close()
            if retries >= (task.max_retries or 0):
                logger.error("background task %s failed after %s retries: %s", task.name, retries, retry.exc)
                return
            retries += 1
            logger.warning("background task %s: retry %s after %s", task.name, retries, retry.exc)
            time.sleep(min(_countdown(retry), MAX_RETRY_WAIT))
        except Exception:
            logger.exception("background task %s failed", task.name)
            connection.close()
            return


MAX_RETRY_WAIT = 5.0


def _countdown(retry: Retry) -> float:
    return float(retry.when) if isinstance(retry.when, int | float) else 0.0
