import pytest
from django.db import connection

from tests.fixtures import dispatched, fast_password_hasher, staff_api, staff_user

__all__ = ["dispatched", "fast_password_hasher", "refuse_session_end_jobs", "staff_api", "staff_user"]


@pytest.fixture
def refuse_session_end_jobs(transactional_db):
    """A PostgreSQL trigger that makes every insert of a session_end ExtractionJob fail."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE OR REPLACE FUNCTION test_refuse_session_end_job() RETURNS trigger AS $$ "
            "BEGIN IF NEW.kind = 'session_end' THEN RAISE EXCEPTION 'session_end job refused by the test'; END IF; "
            "RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER test_refuse_session_end_job BEFORE INSERT ON chat_sessions_extractionjob "
            "FOR EACH ROW EXECUTE FUNCTION test_refuse_session_end_job()"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS test_refuse_session_end_job ON chat_sessions_extractionjob")
        cursor.execute("DROP FUNCTION IF EXISTS test_refuse_session_end_job()")
