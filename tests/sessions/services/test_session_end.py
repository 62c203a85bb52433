"""Ending a session writes status=ended and exactly one session_end ExtractionJob, both or neither."""

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from sessions.models import ChatSession, ExtractionJob
from sessions.services.sessions import session_end
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, ConversationTurnFactory, UserFactory
from tests.support import at_once


def _session_with_turns(owner, n: int) -> ChatSession:
    session = ChatSessionFactory(owner=owner)
    for i in range(1, n + 1):
        ConversationTurnFactory(session=session, sequence=i)
    ChatSession.objects.filter(pk=session.pk).update(turn_count=n)
    session.refresh_from_db()
    return session


def test_end_writes_ended_status_and_one_job(user):
    # given an open session with three turns
    session = _session_with_turns(user, 3)

    # when it is ended
    job = session_end(session=session)

    # then it is ended and owes exactly one pending session_end job over its turns
    session.refresh_from_db()
    assert session.status == "ended"
    assert session.ended_at is not None
    jobs = list(ExtractionJob.objects.filter(session=session))
    assert jobs == [job]
    assert (job.kind, job.status, job.range_start, job.range_end, job.owner_id) == (
        "session_end",
        "pending",
        1,
        3,
        user.pk,
    )


def test_end_of_an_empty_session_covers_no_turns(user):
    # given an open session without turns
    session = ChatSessionFactory(owner=user)

    # when it is ended
    job = session_end(session=session)

    # then its job covers the empty range
    assert (job.range_start, job.range_end) == (0, 0)
    assert ChatSession.objects.get(pk=session.pk).status == "ended"


def test_ending_twice_is_idempotent(user):
    # given a session that has been ended once
    session = _session_with_turns(user, 2)
    first = session_end(session=session)
    ended_at = ChatSession.objects.get(pk=session.pk).ended_at

    # when it is ended again
    second = session_end(session=session)

    # then nothing changes: same job, same end time, still one job
    assert second == first
    assert ChatSession.objects.get(pk=session.pk).ended_at == ended_at
    assert ExtractionJob.objects.filter(session=session, kind="session_end").count() == 1


def test_ending_with_a_stale_object_still_sees_the_ended_row(user):
    # given two in-memory copies of the same open session
    session = _session_with_turns(user, 1)
    stale = ChatSession.objects.get(pk=session.pk)

    # when one copy ends it and then the stale copy ends it too
    first = session_end(session=session)
    second = session_end(session=stale)

    # then the second call reads the locked row, not its stale copy
    assert second == first
    assert ExtractionJob.objects.filter(session=session).count() == 1


def test_conflicting_job_row_makes_the_end_fail_and_the_session_stay_open(user):
    # given an open session whose session_end job row already exists (the unique range is taken)
    session = _session_with_turns(user, 3)
    squatter = ExtractionJob.objects.create(owner=user, session=session, kind="session_end", range_start=1, range_end=3)

    # when it is ended, creating the job fails on the unique constraint
    with pytest.raises(IntegrityError):
        session_end(session=session)

    # then the status change was rolled back with it
    session.refresh_from_db()
    assert session.status == "open"
    assert session.ended_at is None
    assert list(ExtractionJob.objects.filter(session=session)) == [squatter]


@pytest.mark.django_db(transaction=True)
def test_job_insert_failure_leaves_the_session_open_and_nothing_dispatched(refuse_session_end_jobs, dispatched):
    # given an open session with turns and a database that refuses session_end jobs
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 3)

    # when it is ended
    with pytest.raises(DatabaseError, match="session_end job refused by the test"):
        session_end(session=session)

    # then, read back from committed state, the session is still open, no job exists, none was dispatched
    fresh = ChatSession.objects.get(pk=session.pk)
    assert fresh.status == "open"
    assert fresh.ended_at is None
    assert ExtractionJob.objects.filter(session=session).count() == 0
    assert dispatched == []


@pytest.mark.django_db(transaction=True)
def test_end_after_a_failed_attempt_succeeds_once_the_database_accepts_it(dispatched):
    # given a session whose first end failed because the job insert was refused
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 3)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE OR REPLACE FUNCTION test_refuse_once() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION 'refused once'; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER test_refuse_once BEFORE INSERT ON chat_sessions_extractionjob "
            "FOR EACH ROW EXECUTE FUNCTION test_refuse_once()"
        )
    try:
        with pytest.raises(DatabaseError):
            session_end(session=session)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER test_refuse_once ON chat_sessions_extractionjob")
            cursor.execute("DROP FUNCTION test_refuse_once()")

    # when it is ended again
    job = session_end(session=session)

    # then it ends with exactly one job, dispatched once after commit
    assert ChatSession.objects.get(pk=session.pk).status == "ended"
    assert list(ExtractionJob.objects.filter(session=session)) == [job]
    assert dispatched == [str(job.id)]


@pytest.mark.django_db(transaction=True)
def test_job_is_dispatched_only_after_the_transaction_commits(dispatched):
    # given an open session
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 3)

    # when it is ended inside an outer transaction
    with transaction.atomic():
        job = session_end(session=session)
        # then nothing is handed to the worker before commit
        assert dispatched == []

    # and exactly its job is handed over after commit
    assert dispatched == [str(job.id)]


@pytest.mark.django_db(transaction=True)
def test_end_rolled_back_by_the_caller_leaves_no_job_and_dispatches_nothing(dispatched):
    # given an open session
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 2)

    # when it is ended inside an outer transaction that then fails
    with pytest.raises(RuntimeError), transaction.atomic():
        session_end(session=session)
        raise RuntimeError("caller failed")

    # then the end did not happen at all
    assert ChatSession.objects.get(pk=session.pk).status == "open"
    assert ExtractionJob.objects.filter(session=session).count() == 0
    assert dispatched == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_ends_create_one_job(dispatched):
    # given an open session and two workers ending it at the same time
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 3)

    def end():
        return session_end(session=ChatSession.objects.get(pk=session.pk))

    # when both run
    results, errors = at_once(end, end, timeout=30)

    # then both see the same single job, dispatched once
    assert errors == []
    assert len(results) == 2
    assert results[0] == results[1]
    assert ExtractionJob.objects.filter(session=session, kind="session_end").count() == 1
    assert dispatched == [str(results[0].id)]


@pytest.mark.django_db(transaction=True)
def test_end_endpoint_failure_is_a_json_500_and_the_session_stays_open(refuse_session_end_jobs, dispatched):
    # given an open session of carol and a database that refuses the job insert
    owner = UserFactory(username="carol")
    session = _session_with_turns(owner, 3)
    client = client_for(owner)
    client.raise_request_exception = False

    # when she ends it through the API
    response = client.post(f"/api/v1/sessions/{session.id}/end/")

    # then the failure is reported in the error shape and nothing was half-done
    assert response.status_code == 500
    assert response.json() == {"error": {"code": "server_error", "message": "Internal error.", "details": None}}
    assert ChatSession.objects.get(pk=session.pk).status == "open"
    assert ExtractionJob.objects.filter(session=session).count() == 0
    assert dispatched == []
