from sessions.models import ChatSession, ConversationTurn, ExtractionJob


def test_create_session_post_turn_and_end_it(api, user):
    # given a new session
    response = api.post("/api/v1/sessions/", {"agent": "helper", "title": "first"}, format="json")
    assert response.status_code == 201
    session_id = response.json()["id"]

    # when a turn is posted and the session ended
    turn = api.post(
        f"/api/v1/sessions/{session_id}/turns/",
        {"role": "user", "content": "I live in Lisbon", "metadata": {"k": [1, 2]}},
        format="json",
    )
    ended = api.post(f"/api/v1/sessions/{session_id}/end/")

    # then the turn is stored as sent and the session is ended with its job
    assert turn.status_code == 201
    assert turn.json()["metadata"] == {"k": [1, 2]}
    assert ended.status_code == 202
    assert ended.json()["status"] == "ended"
    session = ChatSession.objects.get(pk=session_id)
    assert session.owner == user
    assert session.status == "ended"
    assert ConversationTurn.objects.filter(session=session).count() == 1
    assert ExtractionJob.objects.filter(session=session, kind="session_end").count() == 1
