"""The web chat: turns go to a "web" session, the answer comes from memories.services.responder (as
Telegram's does); "New chat" ends the session, which consolidates it (in-process in embedded mode)."""

from django.conf import settings

from memories.models import Memory
from memories.services.responder import chat_answer
from memory_project.exceptions import ServiceError
from memory_project.text import storable
from sessions.choices import Channel
from sessions.models import ChatSession
from sessions.selectors.sessions import session_get
from sessions.services.sessions import session_create, session_end, turn_append_many

MAX_MESSAGE_CHARS = 8000


def chat_message_clean(message) -> str:
    if not isinstance(message, str) or not storable(message):
        raise ServiceError("message must be text without NUL bytes or lone surrogates.")
    message = message.strip()
    if not message:
        raise ServiceError("message may not be empty.")
    if len(message) > min(MAX_MESSAGE_CHARS, settings.MAX_CONTENT_CHARS):
        raise ServiceError(f"message is longer than {MAX_MESSAGE_CHARS} characters.")
    return message


def chat_session_for(*, owner, session_id) -> ChatSession:
    """The owner's open web session `session_id`, or a new one when there is none (or it has ended)."""
    if session_id:
        session = session_get(owner=owner, session_id=session_id)
        if session.status == ChatSession.SessionStatus.OPEN:
            return session
    return session_create(owner=owner, channel=Channel.WEB, title="Web chat")


def chat_send(*, owner, session_id, message: str, actor: str) -> dict:
    session = chat_session_for(owner=owner, session_id=session_id)
    # The user's turn is stored before anything can fail, so nothing they said is lost.
    turn_append_many(session=session, turns=[{"role": "user", "content": message, "speaker": owner.get_username()}])
    answer = chat_answer(owner=owner, session=session, message=message, actor=actor)
    return {
        "session_id": str(session.pk),
        "reply": answer.reply.text,
        "responder": answer.reply.responder,
        "tools_used": answer.reply.tools_used,
        "context_memories": answer.context["memories"],
        "recalled": answer.reply.recalled,
        "turn_id": str(answer.turn.pk),
    }


def chat_end(*, owner, session_id) -> dict:
    session = session_get(owner=owner, session_id=session_id)
    job = session_end(session=session)
    if job is not None:
        job.refresh_from_db()
    return {
        "session_id": str(session.pk),
        "status": session.status,
        "consolidation": job.status if job is not None else None,
        "turn_count": session.turn_count,
    }


def chat_extracted(*, owner, session_id) -> dict:
    """What the session's consolidation left, for a page that has no live socket to hear it from."""
    session = session_get(owner=owner, session_id=session_id)
    memories = (
        Memory.objects.filter(owner=owner, source_session=session)
        .order_by("created_at")
        .values("id", "content", "category", "status")[:100]
    )
    return {
        "session_id": str(session.pk),
        "consolidated": session.consolidated,
        "memories": [dict(m, id=str(m["id"])) for m in memories],
    }
