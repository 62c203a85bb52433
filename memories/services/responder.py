"""The agent behind the chats (the dashboard's web chat and Telegram): `chat_answer` answers the
message just stored in a session and stores the answer as the assistant's turn.

With OPENAI_API_KEY it is an OpenAI-compatible chat completion whose system prompt is the memory
context block (memories.services.search.context_deliver) and which may call the memory tools
(memories.tools) a few rounds before answering. Without a key, or when the server cannot be
reached, the offline responder answers from recalled memories and says plainly that it is the
offline responder: the chat, and the memory it feeds, keep working with no network.
"""

import json
import logging
from dataclasses import dataclass, field

from django.conf import settings
from rest_framework.exceptions import ValidationError

from memories.services.search import context_deliver, memory_search_run
from memories.services.tools import tool_execute
from memories.tools import TOOL_SCHEMAS
from memory_project.exceptions import ServiceError
from sessions.choices import Role
from sessions.models import ChatSession, ConversationTurn
from sessions.selectors.sessions import turn_list
from sessions.services.sessions import turn_append_many

logger = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 4
HISTORY_TURNS = 20
OFFLINE_RECALL = 3
OFFLINE_NOTICE = "Offline responder (no language model is configured): I can only tell you what I remember."


@dataclass
class Reply:
    text: str
    responder: str  # "openai" or "offline"
    tools_used: list[str] = field(default_factory=list)
    recalled: list[dict] = field(default_factory=list)


@dataclass
class Answer:
    reply: Reply
    context: dict  # the memory context block the answer was given with
    turn: ConversationTurn  # the assistant's turn that holds it


def chat_answer(*, owner, session: ChatSession, message: str, actor: str) -> Answer:
    """Answer `message`, the user's turn just stored in `session` (stored first, so nothing they
    said is lost whatever fails here), and store the answer as the assistant's turn."""
    recent = turn_list(session=session).filter(role__in=(Role.USER, Role.ASSISTANT)).order_by("-sequence")
    history = [{"role": t.role, "content": t.content} for t in reversed(recent[:HISTORY_TURNS])]
    context = context_deliver(owner=owner, query=message, agent=session.agent, session_id=session.pk)
    reply = respond(owner=owner, message=message, history=history, context=context, actor=actor, agent=session.agent)
    reply.text = (reply.text or "(no answer)")[: settings.MAX_CONTENT_CHARS]
    (turn,) = turn_append_many(
        session=session,
        turns=[
            {
                "role": Role.ASSISTANT,
                "content": reply.text,
                "speaker": "assistant",
                "metadata": {"responder": reply.responder, "tools_used": reply.tools_used},
            }
        ],
    )
    return Answer(reply=reply, context=context, turn=turn)


def respond(*, owner, message: str, history: list[dict], context: dict, actor: str, agent: str = "") -> Reply:
    """Answer `message`; `history` is the session's turns so far (oldest first, `message` last)."""
    if settings.OPENAI_API_KEY:
        try:
            return _openai_reply(owner=owner, history=history, context=context, actor=actor, agent=agent)
        except Exception as error:  # the user's turn is stored already; they still get an answer
            logger.warning("chat completion failed, answering offline", exc_info=True)
            reply = _offline_reply(owner=owner, message=message, agent=agent)
            reply.text = (
                f"The language model could not answer ({error.__class__.__name__}), so the offline responder "
                f"does.\n{reply.text}"
            )
            return reply
    return _offline_reply(owner=owner, message=message, agent=agent)


def _offline_reply(*, owner, message: str, agent: str) -> Reply:
    found = memory_search_run(
        owner=owner, query=message, top_k=OFFLINE_RECALL, scope="memories", include_archived=False, agent=agent
    )["results"]
    if not found:
        text = (
            f"{OFFLINE_NOTICE}\nI don't remember anything about that yet. Tell me more — when you start a new "
            "chat, what is worth keeping from this one becomes a memory."
        )
        return Reply(text=text, responder="offline")
    lines = [f"- {r['content']}" for r in found]
    text = f"{OFFLINE_NOTICE}\nWhat I remember that may be relevant:\n" + "\n".join(lines)
    recalled = [{"id": r["id"], "content": r["content"], "category": r.get("category", "")} for r in found]
    return Reply(text=text, responder="offline", recalled=recalled)


def _client():
    from openai import OpenAI

    return OpenAI(
        api_key=settings.OPENAI_API_KEY,
        base_url=settings.OPENAI_BASE_URL,
        timeout=settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )


def _openai_reply(*, owner, history: list[dict], context: dict, actor: str, agent: str) -> Reply:
    client = _client()
    messages = [{"role": "system", "content": context["system_prompt"]}]
    messages += [{"role": t["role"], "content": t["content"]} for t in history[-HISTORY_TURNS:]]
    tools_used: list[str] = []
    for round_number in range(MAX_TOOL_ROUNDS + 1):
        # The last round offers no tools, so the model has to answer.
        tools = TOOL_SCHEMAS if round_number < MAX_TOOL_ROUNDS else None
        kwargs = {"model": settings.LLM_MODEL, "messages": messages}
        if tools:
            kwargs["tools"] = tools
        completion = client.chat.completions.create(**kwargs)
        choice = completion.choices[0].message
        calls = choice.tool_calls or []
        if not calls:
            return Reply(text=(choice.content or "").strip(), responder="openai", tools_used=tools_used)
        messages.append(
            {
                "role": "assistant",
                "content": choice.content or "",
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ],
            }
        )
        for call in calls:
            tools_used.append(call.function.name)
            result = _run_tool(
                owner=owner, name=call.function.name, raw=call.function.arguments, actor=actor, agent=agent
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result, default=str)})
    return Reply(text="", responder="openai", tools_used=tools_used)


def _run_tool(*, owner, name: str, raw: str, actor: str, agent: str) -> dict:
    """A tool's result, or an error the model can read and recover from (bad arguments are its mistake)."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        return {"error": "arguments were not valid JSON"}
    if not isinstance(arguments, dict):
        return {"error": "arguments must be a JSON object"}
    try:
        return tool_execute(owner=owner, name=name, arguments=arguments, actor=actor, agent=agent)
    except ServiceError as error:
        return {"error": error.message}
    except ValidationError as error:
        return {"error": str(error.detail)}
