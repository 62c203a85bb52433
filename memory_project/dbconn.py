"""Connections of our own, outside Django's: for a lock that must outlive requests, or LISTEN.

Django hands a thread its connection from the pool and takes it back at the end of each request;
a session-level advisory lock or a LISTEN needs a connection that stays open as long as its holder.
"""

import logging
import os
import sys
from contextlib import contextmanager

from django.db import connection

logger = logging.getLogger(__name__)


def _forget_pools_after_fork() -> None:
    # A forked child (a prefork Celery worker, a test) inherits the connection pool without its
    # threads, holding sockets that belong to the parent: it must make a pool of its own.
    base = sys.modules.get("django.db.backends.postgresql.base")
    if base is not None:
        base.DatabaseWrapper._connection_pools.clear()


os.register_at_fork(after_in_child=_forget_pools_after_fork)


@contextmanager
def thread_work(log: logging.Logger, failure: str, *args):
    """Work on a thread of our own (a pool's, a heartbeat's): an error is logged with `failure` % args,
    as nobody waits on the thread to be told, and the thread's connection is closed after, as it
    would sit idle until the thread's next piece of work."""
    try:
        yield
    except Exception:
        log.exception(failure, *args)
    finally:
        connection.close()


def direct_connection_params(purpose: str) -> dict:
    """psycopg parameters of Django's default database (the embedded server is started if needed);
    `purpose` and the process id name the connection in pg_stat_activity."""
    from django.db import connections

    params = connections["default"].get_connection_params()
    for django_only in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(django_only, None)
    params["application_name"] = f"memory {purpose} {os.getpid()}"
    return params


# Advisory lock namespaces (the first of the two int4 keys); memories.services.extraction_jobs uses 0x4A0B for jobs.
LEADER_LOCK_NAMESPACE = 0x4C44


class Leadership:
    """Whether this process is the one that does some work: it holds a session-level advisory lock on
    a connection of its own. The lock goes with the connection, so a leader that dies (or loses the
    database) frees it, and another process takes over on its next `hold()`."""

    def __init__(self, key: int):
        self.key = key
        self._connection = None
        self._held = False

    def hold(self) -> bool:
        """Take the lock if it is free, or check it is still ours; False when another process has it."""
        import psycopg

        try:
            if self._connection is None or self._connection.closed:
                self._connection = psycopg.connect(autocommit=True, **direct_connection_params(f"leader-{self.key}"))
                self._held = False
            if self._held:
                self._connection.execute("SELECT 1")  # the lock lives exactly as long as this connection
            else:
                row = self._connection.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", [LEADER_LOCK_NAMESPACE, self.key]
                ).fetchone()
                self._held = bool(row[0])
            return self._held
        except psycopg.Error:
            logger.warning("lost the database connection that holds leadership %s", self.key, exc_info=True)
            self.release()
            return False

    def release(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            except Exception:  # closing a broken connection; the lock is gone either way
                logger.debug("closing the leadership connection failed", exc_info=True)
        self._connection = None
        self._held = False
