import pytest

from sessions.models import ChatSession
from tests.factories import ChatSessionFactory
from tests.support import assert_error, db_snapshot

SESSION_FIELDS = {
    "id",
    "agent",
    "channel",
    "external_id",
    "title",
    "status",
    "started_at",
    "ended_at",
    "last_activity_at",
    "turn_count",
    "rolling_summary",
    "consolidated",
    "consolidated_at",
    "memories_extracted",
}


def test_create_session_returns_201_with_its_fields(api, user):
    # given a client of alice
    # when she creates a session with every optional field
    response = api.post(
        "/api/v1/sessions/",
        {"agent": "helper", "channel": "telegram", "external_id": "chat-42", "title": "Groceries 🛒"},
        format="json",
    )

    # then it is stored for her with exactly those values
    assert response.status_code == 201
    body = response.json()
    assert set(body) == SESSION_FIELDS
    session = ChatSession.objects.get(pk=body["id"])
    assert session.owner == user
    assert (session.agent, session.channel, session.external_id, session.title) == (
        "helper",
        "telegram",
        "chat-42",
        "Groceries 🛒",
    )
    assert body["status"] == "open"
    assert body["turn_count"] == 0
    assert body["ended_at"] is None


def test_create_session_with_an_empty_body_uses_defaults(api, user):
    # when alice creates a session without a body
    response = api.post("/api/v1/sessions/", format="json")

    # then the defaults apply
    assert response.status_code == 201
    body = response.json()
    assert (body["agent"], body["channel"], body["external_id"], body["title"]) == ("", "api", "", "")
    assert ChatSession.objects.filter(owner=user).count() == 1


def test_list_sessions_is_paginated_newest_activity_first(api, user):
    # given three sessions with different last activity
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    old = ChatSessionFactory(owner=user, last_activity_at=now - timedelta(days=2))
    newest = ChatSessionFactory(owner=user, last_activity_at=now)
    middle = ChatSessionFactory(owner=user, last_activity_at=now - timedelta(days=1))

    # when alice lists them two per page
    first = api.get("/api/v1/sessions/?page_size=2")
    second = api.get("/api/v1/sessions/?page_size=2&page=2")

    # then the pages hold them by activity, newest first
    assert first.status_code == 200
    assert first.json()["count"] == 3
    assert [s["id"] for s in first.json()["results"]] == [str(newest.id), str(middle.id)]
    assert first.json()["previous"] is None
    assert first.json()["next"].endswith("page=2&page_size=2")
    assert [s["id"] for s in second.json()["results"]] == [str(old.id)]
    assert second.json()["next"] is None


@pytest.mark.parametrize(
    "query, expected",
    [
        ("status=ended", ["ended-web"]),
        ("status=open", ["open-web", "open-telegram-helper"]),
        ("channel=telegram", ["open-telegram-helper"]),
        ("agent=helper", ["open-telegram-helper"]),
        ("agent=", ["ended-web", "open-web"]),
    ],
)
def test_list_sessions_filters(api, user, query, expected):
    # given sessions differing in status, channel and agent
    ChatSessionFactory(owner=user, title="ended-web", channel="web", status="ended")
    ChatSessionFactory(owner=user, title="open-web", channel="web")
    ChatSessionFactory(owner=user, title="open-telegram-helper", channel="telegram", agent="helper")

    # when alice filters the list
    response = api.get(f"/api/v1/sessions/?{query}")

    # then only the matching sessions are listed
    assert response.status_code == 200
    assert sorted(s["title"] for s in response.json()["results"]) == sorted(expected)


@pytest.mark.parametrize(
    "query, message",
    [
        ("status=closed", 'status: "closed" is not a valid choice.'),
        ("channel=fax", 'channel: "fax" is not a valid choice.'),
        ("agent=%00", "agent: NUL bytes are not allowed in text."),
        ("channel=%00", 'channel: "\x00" is not a valid choice.'),
        ("agent=" + "a" * 101, "agent: Ensure this field has no more than 100 characters."),
    ],
)
def test_list_sessions_with_a_bad_filter_is_a_400(api, user, query, message):
    # given one session
    ChatSessionFactory(owner=user)
    before = db_snapshot()

    # when the list is filtered with a value no session can have
    response = api.get(f"/api/v1/sessions/?{query}")

    # then the filter is refused with its reason
    error = assert_error(response, 400, "invalid")
    assert error["message"] == message
    assert db_snapshot() == before


def test_session_detail(api, user):
    # given a session of alice
    session = ChatSessionFactory(owner=user, title="trip")

    # when she reads it
    response = api.get(f"/api/v1/sessions/{session.id}/")

    # then she gets it
    assert response.status_code == 200
    assert response.json()["id"] == str(session.id)
    assert response.json()["title"] == "trip"


@pytest.mark.parametrize(
    "body, message",
    [
        ({"channel": "fax"}, 'channel: "fax" is not a valid choice.'),
        ({"colour": "red"}, "colour: Unknown field."),
        ({"title": "t" * 201}, "title: Ensure this field has no more than 200 characters."),
        ({"title": "a\x00b"}, "title: NUL bytes are not allowed in text."),
        ({"agent": 7}, "agent: Must be a string."),
        ({"external_id": ["x"]}, "external_id: Must be a string."),
        (["agent"], "Expected a JSON object."),
    ],
)
def test_create_session_with_bad_input_is_a_400_and_writes_nothing(api, user, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a session is created with bad input
    response = api.post("/api/v1/sessions/", body, format="json")

    # then it is refused with its reason and nothing is written
    error = assert_error(response, 400, "invalid")
    assert error["message"] == message
    assert db_snapshot() == before
