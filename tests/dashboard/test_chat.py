"""The web chat endpoints and the responder (offline, and OpenAI-compatible with tools)."""

import json

import pytest

from dashboard import responder
from memories.services.memories import memory_create
from sessions.models import ChatSession, ConversationTurn
from tests.fakes.openai_server import FakeOpenAIServer, FakeReply

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_offline_chat_stores_turns_answers_from_memory_and_says_it_is_offline(alice, alice_client, settings):
    settings.OPENAI_API_KEY = ""
    memory_create(owner=alice, content="Sister Ana lives in Porto", actor="t", category="fact")
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
        {"message": "x" * 9000},
        {"message": "hi", "session_id": 3},
    ],
)
def test_bad_chat_input_is_400(alice_client, body):
    response = post(alice_client, "/dashboard/api/chat/send/", body)
    assert response.status_code == 400, response.content
    assert ConversationTurn.objects.count() == 0


def test_unknown_session_is_404(alice_client):
    assert post(alice_client, "/dashboard/api/chat/send/", {"session_id": "nope", "message": "hi"}).status_code == 404
    assert post(alice_client, "/dashboard/api/chat/end/", {"session_id": "nope"}).status_code == 404


def _tool_call_body(name: str, arguments: dict) -> dict:
    return {
        "id": "chatcmpl-tool",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
            }
        ],
    }


def test_llm_responder_uses_the_context_as_system_prompt_and_runs_tools(alice, alice_client, settings):
    memory_create(owner=alice, content="Sister Ana lives in Porto", actor="t", category="fact", importance=0.9)
    with FakeOpenAIServer() as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MAX_RETRIES = 0
        server.reply(FakeReply(body=_tool_call_body("search_memory", {"query": "sister"})))
        server.reply_text("Your sister Ana lives in Porto.")
        result = post(alice_client, "/dashboard/api/chat/send/", {"message": "Where does my sister live?"}).json()
        requests = server.chat_requests
    assert result["responder"] == "openai" and result["tools_used"] == ["search_memory"]
    assert result["reply"] == "Your sister Ana lives in Porto."
    system = requests[0].messages[0]
    assert system["role"] == "system" and "Sister Ana lives in Porto" in system["content"]
    assert {t["function"]["name"] for t in requests[0].body["tools"]} >= {"search_memory", "memory_write"}
    tool_message = requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "Porto" in tool_message["content"]
    turn = ConversationTurn.objects.filter(role="assistant").get()
    assert turn.metadata == {"responder": "openai", "tools_used": ["search_memory"]}


def test_llm_failure_falls_back_to_the_offline_responder(alice, alice_client, settings):
    with FakeOpenAIServer() as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MAX_RETRIES = 0
        server.reply_error(500)
        result = post(alice_client, "/dashboard/api/chat/send/", {"message": "Hello there"}).json()
    assert result["responder"] == "offline"
    assert "could not answer" in result["reply"] and responder.OFFLINE_NOTICE in result["reply"]
    assert ConversationTurn.objects.filter(role="user", content="Hello there").exists()
