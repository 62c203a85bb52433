"""The pool's health check (memory_project/postgresql): skipped for a connection given back moments
ago, made for one idle longer, on real connections to the test database; statements prepared on
the pooled connections (DB_PREPARED_STATEMENTS)."""

import json
import os
import subprocess
import sys
import time
import uuid

import psycopg
import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from memory_project.dbconn import direct_connection_params
from memory_project.postgresql.base import (
    MAX_BOUND_PARAMETERS,
    _check_unless_just_returned,
    _mark_returned,
    _returned_at,
)
from memory_project.postgresql.prepared import prepared_cursor
from sessions.models import ChatSession, ConversationTurn
from tests.factories import ChatSessionFactory
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


def test_a_statement_run_often_on_a_pooled_connection_is_prepared_once_on_the_server(settings, user):
    # given the connection settings (parameters bound on the server, prepared after a few runs)
    options = connection.settings_dict["OPTIONS"]
    assert (options["server_side_binding"], options["prepare_threshold"]) == (True, settings.DB_PREPARE_THRESHOLD)

    # when one ORM query runs past the threshold on one connection, with a different value each time
    with transaction.atomic():
        found = [User.objects.filter(pk=user.pk + n).exists() for n in range(settings.DB_PREPARE_THRESHOLD + 2)]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = %s",
                ['SELECT $1 AS "a" FROM "auth_user" WHERE "auth_user"."id" = $2 LIMIT 1'],
            )
            prepared = cursor.fetchone()[0]

    # then it answered right each time, and the server holds it as one prepared statement
    assert found == [True] + [False] * (settings.DB_PREPARE_THRESHOLD + 1)
    assert prepared == 1


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, [True, 5, True]),
        ({"DB_PREPARED_STATEMENTS": "false"}, [None, None, False]),
        ({"DB_PREPARED_STATEMENTS": "false", "RETRIEVAL_PREPARED_STATEMENTS": "true"}, [None, None, True]),
        ({"DB_PREPARE_THRESHOLD": "0"}, [True, 0, True]),
    ],
)
def test_prepared_statements_follow_one_setting_search_included(environment, expected):
    # given the settings read in a fresh process with these variables
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "o = s.DATABASES['default']['OPTIONS']; "
        "print(json.dumps([o.get('server_side_binding'), o.get('prepare_threshold'), "
        "s.MEMORY_RETRIEVAL['PREPARED_STATEMENTS']]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("PREPARED_STATEMENTS") and k != "DB_PREPARE_THRESHOLD"}
    env.update(environment, DJANGO_SETTINGS_MODULE="memory_project.settings")

    # when they are printed
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)

    # then the connection options and search's statements follow DB_PREPARED_STATEMENTS
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected


def test_a_statement_with_more_parameters_than_the_server_binds_still_runs(user):
    # given five of alice's sessions and 70,000 ids that name no session
    kept = [ChatSessionFactory(owner=user).pk for _ in range(5)]
    ids = kept + [uuid.uuid4() for _ in range(70_000)]

    # when a lookup and a bulk insert carry more parameters than the protocol's 65,535
    found = ChatSession.objects.filter(pk__in=ids).count()
    stored = ConversationTurn.objects.bulk_create(
        [
            ConversationTurn(owner=user, session_id=kept[0], sequence=n, role="user", content=f"turn {n}")
            for n in range(1, 5_001)
        ]
    )

    # then both ran, with their values sent inline
    assert len(ids) > MAX_BOUND_PARAMETERS
    assert found == 5
    assert len(stored) == 5_000
    assert ConversationTurn.objects.filter(session_id=kept[0]).count() == 5_000


def test_searchs_preparing_cursor_also_inlines_a_statement_past_the_parameter_limit():
    # given search's cursor, which prepares every statement on its first run
    values = list(range(MAX_BOUND_PARAMETERS + 10))
    sql = "SELECT count(*), sum(v) FROM (VALUES " + ", ".join(["(%s::int)"] * len(values)) + ") AS t(v)"

    # when it runs a statement with more parameters than the protocol carries
    with transaction.atomic(), prepared_cursor() as cursor:
        cursor.execute(sql, values)
        counted = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%(VALUES (0::int), (1::int)%"]
        )
        prepared = cursor.fetchone()[0]

    # then it ran with its values written in, and was not kept as a prepared statement
    assert counted == (len(values), sum(values))
    assert prepared == 0
