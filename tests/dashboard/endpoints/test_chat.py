"""The web chat endpoints (the responder behind them: tests/memories/services/test_responder.py)."""

import json

import pytest

from memories.drafts import MemoryDraft
from memories.services import responder
from memories.services.memories import memory_create
from sessions.models import ChatSession, ConversationTurn

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_offline_chat_stores_turns_answers_from_memory_and_says_it_is_offline(alice, alice_client, settings):
    settings.OPENAI_API_KEY = ""
    memory_create(owner=alice, draft=MemoryDraft(content="Sister Ana lives in Porto", category="fact"), actor="t")
    first = post(alice_client, "/dashboard/api/chat/send/", {"message": "Where does my sister Ana live?"}).json()
    assert first["responder"] == "offline"
    assert first["reply"].startswith(responder.OFFLINE_NOTICE)
    assert "Sister Ana lives in Porto" in first["reply"]
    second = post(
        alice_client, "/dashboard/api/chat/send/", {"session_id": first["session_id"], "message": "Thanks!"}
    ).json()
    assert second["session_id"] == first["session_id"]
    session = ChatSession.objects.get(pk=first["session_id"])
    assert session.channel == "web" and session.owner == alice
    roles = list(ConversationTurn.objects.filter(session=session).order_by("sequence").values_list("role", flat=True))
    assert roles == ["user", "assistant", "user", "assistant"]


def test_new_chat_ends_the_session_and_its_memories_are_extracted(
    alice, alice_client, settings, django_capture_on_commit_callbacks
):
    settings.OPENAI_API_KEY = ""
    with django_capture_on_commit_callbacks(execute=True):
        sent = post(alice_client, "/dashboard/api/chat/send/", {"message": "I prefer green tea over coffee."}).json()
        post(alice_client, "/dashboard/api/chat/send/", {"session_id": sent["session_id"], "message": "Good night."})
        ended = post(alice_client, "/dashboard/api/chat/end/", {"session_id": sent["session_id"]})
    assert ended.status_code == 200, ended.content
    assert ended.json()["status"] == "ended"
    extracted = alice_client.get(f"/dashboard/api/chat/{sent['session_id']}/extracted/").json()
    assert extracted["consolidated"] is True
    assert any("green tea" in m["content"].lower() for m in extracted["memories"])
    # a message to the ended session starts a new one instead of failing
    again = post(alice_client, "/dashboard/api/chat/send/", {"session_id": sent["session_id"], "message": "Hi"}).json()
    assert again["session_id"] != sent["session_id"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"message": ""},
        {"message": "  "},
        {"message": 5},
        {"message": "a\x00"},
        {"message": "\ud800"},
        {"message": "x" * 9000},
        {"message": "hi", "session_id": 3},
    ],
)
def test_bad_chat_input_is_400(alice_client, body):
    response = post(alice_client, "/dashboard/api/chat/send/", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert (ChatSession.objects.count(), ConversationTurn.objects.count()) == (0, 0)


def test_unknown_session_is_404(alice_client):
    assert post(alice_client, "/dashboard/api/chat/send/", {"session_id": "nope", "message": "hi"}).status_code == 404
    assert post(alice_client, "/dashboard/api/chat/end/", {"session_id": "nope"}).status_code == 404
