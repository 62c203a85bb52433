"""memories.services.responder: the answer of the chats (web and Telegram), offline or from an
OpenAI-compatible server that may call the memory tools."""

import json

import pytest

from memories.drafts import MemoryDraft
from memories.services.memories import memory_create
from memories.services.responder import OFFLINE_NOTICE, chat_answer
from sessions.choices import Channel
from sessions.models import ConversationTurn
from sessions.services.sessions import session_create, turn_append_many
from tests.fakes.openai_server import FakeOpenAIServer, FakeReply

pytestmark = pytest.mark.django_db


def _asked(owner, message: str):
    """A web session whose last turn is the user's `message`."""
    session = session_create(owner=owner, channel=Channel.WEB, title="Web chat")
    turn_append_many(session=session, turns=[{"role": "user", "content": message, "speaker": owner.username}])
    return session


@pytest.fixture
def llm(settings):
    with FakeOpenAIServer() as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MAX_RETRIES = 0
        yield server


def test_offline_answer_recalls_memories_and_is_stored_as_the_assistants_turn(user, settings):
    # given no language model, and a memory about the question
    settings.OPENAI_API_KEY = ""
    memory = memory_create(owner=user, draft=MemoryDraft(content="Sister Ana lives in Porto"), actor="t")
    session = _asked(user, "Where does my sister Ana live?")

    # when the question is answered
    answer = chat_answer(owner=user, session=session, message="Where does my sister Ana live?", actor="t")

    # then the offline responder says what it recalled, and its answer is the session's last turn
    assert answer.reply.responder == "offline"
    assert answer.reply.text == f"{OFFLINE_NOTICE}\nWhat I remember that may be relevant:\n- Sister Ana lives in Porto"
    assert [r["id"] for r in answer.reply.recalled] == [str(memory.pk)]
    assert list(
        ConversationTurn.objects.filter(session=session).order_by("sequence").values_list("role", "content")
    ) == [
        ("user", "Where does my sister Ana live?"),
        ("assistant", answer.reply.text),
    ]
    assert answer.turn.metadata == {"responder": "offline", "tools_used": []}


def test_llm_answer_uses_the_context_as_system_prompt_and_runs_tools(user, llm):
    # given a memory, and a model that calls search_memory before answering
    memory_create(
        owner=user, draft=MemoryDraft(content="Sister Ana lives in Porto", category="fact", importance=0.9), actor="t"
    )
    llm.reply(FakeReply(body=_tool_call_body("search_memory", {"query": "sister"})))
    llm.reply_text("Your sister Ana lives in Porto.")
    session = _asked(user, "Where does my sister live?")

    # when the question is answered
    answer = chat_answer(owner=user, session=session, message="Where does my sister live?", actor="t")

    # then the model saw the memory in its system prompt and the tool's result, and answered
    requests = llm.chat_requests
    assert (answer.reply.responder, answer.reply.tools_used) == ("openai", ["search_memory"])
    assert answer.reply.text == "Your sister Ana lives in Porto."
    system = requests[0].messages[0]
    assert system["role"] == "system" and "Sister Ana lives in Porto" in system["content"]
    assert {t["function"]["name"] for t in requests[0].body["tools"]} >= {"search_memory", "memory_write"}
    tool_message = requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "Porto" in tool_message["content"]
    assert answer.turn.metadata == {"responder": "openai", "tools_used": ["search_memory"]}


def test_llm_failure_falls_back_to_the_offline_responder(user, llm):
    llm.reply_error(500)
    session = _asked(user, "Hello there")

    answer = chat_answer(owner=user, session=session, message="Hello there", actor="t")

    assert answer.reply.responder == "offline"
    assert answer.reply.text.startswith("The language model could not answer (")
    assert OFFLINE_NOTICE in answer.reply.text
    assert ConversationTurn.objects.filter(session=session, role="user", content="Hello there").exists()


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
