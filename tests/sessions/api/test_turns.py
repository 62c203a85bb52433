from datetime import UTC, datetime, timedelta

from sessions.models import ChatSession, ConversationTurn
from tests.factories import ChatSessionFactory, ConversationTurnFactory

TURN_FIELDS = {
    "id",
    "session_id",
    "sequence",
    "role",
    "speaker",
    "content",
    "tool_name",
    "tool_calls",
    "tool_error",
    "token_count",
    "metadata",
    "created_at",
}

NESTED_METADATA = {
    "source": {"platform": "telegram", "chat": {"id": -100123, "title": "Família 🏡"}},
    "tags": ["日本語", "中文", "한국어", "emoji 🎉"],
    "flags": {"pinned": True, "deleted": False, "score": 0.125, "nothing": None},
    "matrix": [[1, 2], [3, [4, {"deep": "值"}]]],
    "empty": {},
    "quote": 'she said "hi" \\ bye',
}


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def test_post_one_turn_returns_the_stored_turn(api, user):
    # given an open session of alice
    session = ChatSessionFactory(owner=user)

    # when she posts one turn with every optional field
    response = api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {
            "role": "assistant",
            "content": "  Here is the weather  ",
            "speaker": "bot",
            "created_at": "2021-03-04T05:06:07.123456Z",
            "metadata": NESTED_METADATA,
            "tool_name": "weather",
            "tool_calls": [{"name": "weather", "arguments": {"city": "Lisbon"}}],
            "tool_error": "",
        },
        format="json",
    )

    # then the turn is stored and returned as sent (content trimmed), numbered 1
    assert response.status_code == 201
    body = response.json()
    assert set(body) == TURN_FIELDS | {"ids", "turns", "attachments"}
    turn = ConversationTurn.objects.get(session=session)
    assert body["ids"] == [str(turn.id)]
    assert body["turns"] == [{"id": str(turn.id), "sequence": 1}]
    assert body["id"] == str(turn.id)
    assert body["session_id"] == str(session.id)
    assert body["sequence"] == 1
    assert body["role"] == "assistant"
    assert body["speaker"] == "bot"
    assert body["content"] == "Here is the weather"
    assert body["metadata"] == NESTED_METADATA
    assert body["created_at"] == "2021-03-04T05:06:07.123456Z"
    assert body["tool_calls"] == [{"name": "weather", "arguments": {"city": "Lisbon"}}]
    assert turn.owner == user
    assert turn.metadata == NESTED_METADATA
    assert turn.created_at == datetime(2021, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)
    session.refresh_from_db()
    assert session.turn_count == 1


def test_bulk_of_300_turns_keeps_order_timestamps_and_metadata(api, user):
    # given an open session and 300 turns with past, out-of-order timestamps and rich metadata
    session = ChatSessionFactory(owner=user)
    base = datetime(2019, 6, 1, 12, 0, tzinfo=UTC)
    turns = []
    for i in range(300):
        # every third turn is dated before the previous one: order must follow the list, not the clock
        offset = timedelta(minutes=i) if i % 3 else timedelta(days=-i)
        turns.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"message {i} — 第{i}条消息",
                "speaker": f"speaker-{i % 4}",
                "created_at": _iso(base + offset),
                "metadata": {"i": i, "nested": {"cjk": f"消息{i}", "list": [i, str(i), None]}, **NESTED_METADATA},
            }
        )

    # when they are posted in one bulk request
    response = api.post(f"/api/v1/sessions/{session.id}/turns/", {"turns": turns}, format="json")

    # then all are stored, numbered 1..300 in the order given, each as sent
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"ids", "turns", "attachments"}
    assert [t["sequence"] for t in body["turns"]] == list(range(1, 301))
    assert [t["id"] for t in body["turns"]] == body["ids"]
    stored = list(ConversationTurn.objects.filter(session=session).order_by("sequence"))
    assert [str(t.id) for t in stored] == body["ids"]
    assert [t.content for t in stored] == [t["content"] for t in turns]
    assert [t.role for t in stored] == [t["role"] for t in turns]
    assert [t.speaker for t in stored] == [t["speaker"] for t in turns]
    assert [_iso(t.created_at) for t in stored] == [t["created_at"] for t in turns]
    assert [t.metadata for t in stored] == [t["metadata"] for t in turns]
    session.refresh_from_db()
    assert session.turn_count == 300

    # and the list endpoint returns them exactly as sent, in sequence order
    listed = api.get(f"/api/v1/sessions/{session.id}/turns/?page_size=500")
    assert listed.status_code == 200
    assert listed.json()["count"] == 300
    results = listed.json()["results"]
    assert [r["sequence"] for r in results] == list(range(1, 301))
    assert [r["created_at"] for r in results] == [t["created_at"] for t in turns]
    assert [r["metadata"] for r in results] == [t["metadata"] for t in turns]
    assert [r["content"] for r in results] == [t["content"] for t in turns]


def test_second_bulk_continues_the_numbering(api, user):
    # given a session that already holds two turns posted through the API
    session = ChatSessionFactory(owner=user)
    first = api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"turns": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
        format="json",
    )

    # when a second bulk and then a single turn are posted
    second = api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"turns": [{"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}]},
        format="json",
    )
    single = api.post(f"/api/v1/sessions/{session.id}/turns/", {"role": "user", "content": "e"}, format="json")

    # then numbering continues where it stopped
    assert [t["sequence"] for t in first.json()["turns"]] == [1, 2]
    assert [t["sequence"] for t in second.json()["turns"]] == [3, 4]
    assert single.json()["sequence"] == 5
    assert list(ConversationTurn.objects.filter(session=session).order_by("sequence").values_list("content")) == [
        ("a",),
        ("b",),
        ("c",),
        ("d",),
        ("e",),
    ]
    assert ChatSession.objects.get(pk=session.pk).turn_count == 5


def test_turn_without_created_at_is_stamped_now_and_metadata_defaults_to_empty(api, user):
    # given an open session
    session = ChatSessionFactory(owner=user)
    before = datetime.now(UTC)

    # when a turn is posted with only its role and content
    response = api.post(f"/api/v1/sessions/{session.id}/turns/", {"role": "user", "content": "hi"}, format="json")

    # then it is stamped with the time of the request and has empty metadata
    assert response.status_code == 201
    turn = ConversationTurn.objects.get(session=session)
    assert before <= turn.created_at <= datetime.now(UTC)
    assert turn.metadata == {}
    assert response.json()["metadata"] == {}
    assert response.json()["speaker"] == ""


def test_turn_with_an_offset_timestamp_is_stored_as_the_same_instant(api, user):
    # given an open session
    session = ChatSessionFactory(owner=user)

    # when a turn is posted with a +09:00 timestamp in the past
    response = api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"role": "user", "content": "おはよう", "created_at": "2001-02-03T13:00:00+09:00"},
        format="json",
    )

    # then the same instant is stored and returned in UTC
    assert response.status_code == 201
    assert response.json()["created_at"] == "2001-02-03T04:00:00Z"
    assert ConversationTurn.objects.get(session=session).created_at == datetime(2001, 2, 3, 4, 0, tzinfo=UTC)


def test_list_turns_of_a_session_in_sequence_order(api, user):
    # given two sessions of alice with turns
    session = ChatSessionFactory(owner=user)
    other = ChatSessionFactory(owner=user)
    third = ConversationTurnFactory(session=session, sequence=3, content="three")
    first = ConversationTurnFactory(session=session, sequence=1, content="one")
    second = ConversationTurnFactory(session=session, sequence=2, content="two")
    ConversationTurnFactory(session=other, sequence=1, content="elsewhere")

    # when she lists the first session's turns
    response = api.get(f"/api/v1/sessions/{session.id}/turns/")

    # then only that session's turns come back, by sequence
    assert response.status_code == 200
    assert response.json()["count"] == 3
    assert [t["id"] for t in response.json()["results"]] == [str(first.id), str(second.id), str(third.id)]
    assert set(response.json()["results"][0]) == TURN_FIELDS
