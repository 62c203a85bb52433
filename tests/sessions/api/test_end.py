import pytest

from sessions.models import ChatSession, ExtractionJob
from tests.factories import ChatSessionFactory, ConversationTurnFactory
from tests.support import assert_error, db_snapshot


def test_end_returns_202_with_the_ended_session_and_its_job(api, user):
    # given an open session of alice with two turns posted through the API
    session = ChatSessionFactory(owner=user)
    api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"turns": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
        format="json",
    )

    # when she ends it
    response = api.post(f"/api/v1/sessions/{session.id}/end/")

    # then it is accepted, ended, and its consolidation job is reported
    assert response.status_code == 202
    body = response.json()
    job = ExtractionJob.objects.get(session=session, kind="session_end")
    assert body["id"] == str(session.id)
    assert body["status"] == "ended"
    assert body["ended_at"] is not None
    assert body["turn_count"] == 2
    assert body["extraction_job"] == {"id": str(job.id), "status": "pending", "kind": "session_end"}
    assert (job.range_start, job.range_end) == (1, 2)


def test_ending_twice_through_the_api_is_idempotent(api, user):
    # given a session ended once
    session = ChatSessionFactory(owner=user)
    first = api.post(f"/api/v1/sessions/{session.id}/end/")
    before = db_snapshot()

    # when it is ended again
    second = api.post(f"/api/v1/sessions/{session.id}/end/")

    # then the answer is the same and nothing new is written
    assert second.status_code == 202
    assert second.json()["extraction_job"] == first.json()["extraction_job"]
    assert second.json()["ended_at"] == first.json()["ended_at"]
    assert db_snapshot() == before
    assert ExtractionJob.objects.filter(session=session, kind="session_end").count() == 1


def test_end_of_an_unknown_session_is_a_404(api, user):
    # given the database as it is
    before = db_snapshot()

    # when an id no session has is ended
    response = api.post("/api/v1/sessions/00000000-0000-4000-8000-000000000000/end/")

    # then it is a 404 and nothing is written
    assert_error(response, 404, "not_found")
    assert db_snapshot() == before


def test_end_ignores_a_body(api, user):
    # given an open session
    session = ChatSessionFactory(owner=user)

    # when it is ended with a stray JSON body
    response = api.post(f"/api/v1/sessions/{session.id}/end/", {"reason": "bye"}, format="json")

    # then it still ends
    assert response.status_code == 202
    assert ChatSession.objects.get(pk=session.pk).status == "ended"


@pytest.mark.django_db(transaction=True)
def test_end_through_the_api_dispatches_its_job_once_after_commit(dispatched):
    # given an open session of carol with three turns
    from tests.conftest import client_for
    from tests.factories import UserFactory

    owner = UserFactory(username="carol")
    session = ChatSessionFactory(owner=owner, turn_count=3)
    for i in (1, 2, 3):
        ConversationTurnFactory(session=session, sequence=i)
    client = client_for(owner)

    # when she ends it twice
    first = client.post(f"/api/v1/sessions/{session.id}/end/")
    second = client.post(f"/api/v1/sessions/{session.id}/end/")

    # then the job was handed to the worker exactly once
    assert first.status_code == second.status_code == 202
    job = ExtractionJob.objects.get(session=session, kind="session_end")
    assert dispatched == [str(job.id)]
