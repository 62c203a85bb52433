"""The pool's health check (memory_project/postgresql): skipped for a connection given back moments
ago, made for one idle longer, on real connections to the test database."""

import time

import psycopg
import pytest
from django.db import connection

from memory_project.dbconn import direct_connection_params
from memory_project.postgresql.base import _check_unless_just_returned, _mark_returned, _returned_at
from tests.support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _broken_connection():
    """A connection whose server process was ended from outside, as a database restart does."""
    conn = psycopg.connect(autocommit=True, **direct_connection_params("pool-check-test"))
    pid = conn.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert wait_for(lambda: not _backend_alive(cursor, pid))
    return conn


def _backend_alive(cursor, pid: int) -> bool:
    cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
    return cursor.fetchone()[0] == 1


def test_a_connection_given_back_within_the_window_is_lent_unchecked(settings):
    # given a connection given back to the pool just now, broken since
    settings.DB_POOL_CHECK_AFTER_SECONDS = 60
    conn = _broken_connection()
    _mark_returned(conn)

    # when the pool checks it before lending it, then it passes: a round trip would have failed
    try:
        _check_unless_just_returned(conn)
    finally:
        conn.close()


def test_a_connection_idle_past_the_window_is_checked_and_a_broken_one_refused(settings):
    # given a broken connection given back longer ago than the window (0: always)
    settings.DB_POOL_CHECK_AFTER_SECONDS = 0
    conn = _broken_connection()
    _mark_returned(conn)

    # when the pool checks it, then the check reaches the server and fails, so the pool replaces it
    with pytest.raises(psycopg.OperationalError):
        _check_unless_just_returned(conn)
    conn.close()


def test_a_connection_never_given_back_is_checked(settings):
    # given a broken connection the pool has not lent before
    settings.DB_POOL_CHECK_AFTER_SECONDS = 60
    conn = _broken_connection()

    # then it is checked whatever the window
    with pytest.raises(psycopg.OperationalError):
        _check_unless_just_returned(conn)
    conn.close()


def test_the_pool_notes_when_each_connection_comes_back_and_lends_working_ones():
    # given a request's connection, borrowed from the pool and used
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    borrowed = connection.connection

    # when Django gives it back (the end of a request)
    given_back = time.monotonic()
    connection.close()
    noted = _returned_at.get(borrowed)

    # then the time it came back was noted, at once, and the pool goes on lending working connections
    assert noted is not None
    assert given_back <= noted <= time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
