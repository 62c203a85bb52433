"""Helpers shared by the API test campaign: database snapshots, error-shape checks, scene builders,
workers racing each other, forked children, waiting on a condition, ASGI request scopes and the
periodic leader lock's holders."""

import json
import os
import signal
import threading
import time
from collections.abc import Callable

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection

from memory_project.celery import PERIODIC_LEADER_KEY
from memory_project.dbconn import LEADER_LOCK_NAMESPACE

# Columns that change without any write through the API (vectors are large and derived; access
# statistics are updated off the query path by design; a key's last use is touched on every auth).
VOLATILE = {"embedding", "vector", "search_vector", "access_count", "last_accessed_at", "last_used_at"}


def _tracked():
    """The user table and every model of the two apps, new ones included."""
    models = [get_user_model()]
    for label in ("memories", "chat_sessions"):
        models += sorted(apps.get_app_config(label).get_models(), key=lambda m: m._meta.label)
    return models


def _table_sql(model, owner) -> tuple[str, list]:
    meta = model._meta
    columns = [f.column for f in meta.concrete_fields if f.attname not in VOLATILE]
    row = "json_build_array(" + ", ".join(f't."{c}"' for c in columns) + ")"
    where, params = "", []
    if owner is not None:
        names = {f.name for f in meta.concrete_fields}
        if model is get_user_model():
            where, params = "WHERE t.id = %s", [owner.pk]
        elif "owner" in names:
            where, params = f'WHERE t."{meta.get_field("owner").column}" = %s', [owner.pk]
        else:
            where = "WHERE false"  # shared, ownerless tables (the embedding cache)
    # pk_fields: every column of a composite primary key (search postings), or the one pk column.
    order = ", ".join(f't."{f.column}"' for f in meta.pk_fields)
    sql = f"(SELECT coalesce(json_agg({row} ORDER BY {order}), '[]') FROM \"{meta.db_table}\" t {where})"
    return sql, params


def db_snapshot(owner=None) -> dict[str, list]:
    """Every tracked row (of one owner, or of everyone), column by column, for before/after equality.

    One round trip: each table's rows come back as a JSON array of arrays, ordered by primary key.
    """
    parts, params = [], []
    for model in _tracked():
        sql, table_params = _table_sql(model, owner)
        parts.append(f"'{model._meta.label}', {sql}")
        params += table_params
    with connection.cursor() as cursor:
        cursor.execute("SELECT json_build_object(" + ", ".join(parts) + ")::text", params)
        return json.loads(cursor.fetchone()[0])


def assert_error(response, status: int, code: str, *fragments: str) -> dict:
    """The response is `status` with the error shape {"error": {"code", "message", "details"}}."""
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    for fragment in fragments:
        assert fragment in body["error"]["message"], body["error"]["message"]
    return body["error"]


def at_once(*calls: Callable[[], object], timeout: float = 60) -> tuple[list, list[Exception]]:
    """Run every call in its own thread, all released together; (what they returned, what they raised).

    Each thread closes the database connection Django opened for it, so the test database can be flushed.
    """
    barrier = threading.Barrier(len(calls))
    results, errors = [], []

    def run(call):
        try:
            barrier.wait(timeout=10)
            results.append(call())
        except Exception as exc:  # pragma: no cover - reported through `errors`
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return results, errors


def in_forked_child(run: Callable[[], int]) -> int:
    """Fork as a prefork Celery worker does, run `run` in the child, and return the child's exit code
    (`run`'s result; 1 if it raised, -14 if it hung past 20 s)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            # The child opens its own connection; the parent's socket is left alone (kept, never
            # closed here), and a hang ends the child after 20 s.
            parent_connection = connection.connection  # noqa: F841
            connection.connection = None
            signal.alarm(20)
            code = run()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Whether `predicate` came true within `timeout` seconds, asked every 50 ms."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def asgi_http_scope(method: str, path: str, *, query: bytes = b"", headers: list[tuple[bytes, bytes]]) -> dict:
    """The scope an ASGI server hands the application for one HTTP request from 127.0.0.1."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


def periodic_leaders() -> dict[int, str]:
    """The server processes holding the periodic tasks' lock in the test database, and their
    application_name ("memory leader-<key> <pid of the holding process>").

    Advisory locks are per database; other servers of the shared embedded cluster (another test
    run, a bench) hold the same key in their own databases.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT l.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [LEADER_LOCK_NAMESPACE, PERIODIC_LEADER_KEY],
        )
        return dict(cursor.fetchall())
