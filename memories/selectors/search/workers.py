"""The BM25 statement beside the vector one.

A search outside any transaction sends its BM25 statement to one of these threads, which runs it
on its own connection while the caller runs the vector statement: the two take similar time, so
the search takes about the longer of them instead of their sum. Each thread keeps its connection
(and the statements prepared on it); when every thread is busy the caller runs the statement itself.
"""

import os
import queue
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.db import connection

from memories.selectors.search.statements import fetch_rows
from memory_project.postgresql.prepared import prepared_cursor

# Each worker is a one-thread executor, so that its connection can be closed in its own thread.
_workers: list[ThreadPoolExecutor] = []
_idle: queue.SimpleQueue = queue.SimpleQueue()
_workers_lock = threading.Lock()


def _forget_workers_after_fork() -> None:
    # A forked child (a prefork Celery worker) inherits the executors but not their threads: work
    # sent to them would never run. It starts its own on first use.
    global _workers, _idle, _workers_lock
    _workers, _idle, _workers_lock = [], queue.SimpleQueue(), threading.Lock()


os.register_at_fork(after_in_child=_forget_workers_after_fork)


def lexical_submit(sql: str, params: list) -> Future | None:
    """Hand the statement to an idle worker; None when every one is busy."""
    with _workers_lock:
        while len(_workers) < settings.MEMORY_RETRIEVAL["PARALLEL_WORKERS"]:
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-lexical")
            _workers.append(worker)
            _idle.put(worker)
    try:
        worker = _idle.get_nowait()
    except queue.Empty:
        return None
    future = worker.submit(_lexical_run, sql, params)
    future.add_done_callback(lambda _: _idle.put(worker))
    return future


# The worker connections whose session already plans prepared statements generically.
_generic_plans: weakref.WeakSet = weakref.WeakSet()


def _lexical_run(sql: str, params: list) -> list[dict]:
    try:
        with prepared_cursor() as cursor:
            if connection.connection not in _generic_plans:
                # A worker only runs BM25 statements, whose plan has the same shape for any query
                # (the postings' index, the aggregate, the lookups); planning each anew cost ~0.5 ms.
                cursor.execute("SET plan_cache_mode = force_generic_plan")
                _generic_plans.add(connection.connection)
            return fetch_rows(cursor, sql, params)
    except BaseException:
        # A failed connection is not kept for the next search.
        connection.close()
        raise


def search_workers_close() -> None:
    """Close the connections the BM25 threads keep (test teardown, process shutdown)."""
    for worker in list(_workers):
        # `connection` must be looked up in the worker's thread: it is that thread's connection.
        worker.submit(lambda: connection.close()).result()
