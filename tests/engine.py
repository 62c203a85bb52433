"""Helpers shared by the memory-engine test campaign: event capture and conversation builders."""

from datetime import timedelta

from django.utils import timezone

from memories.models import Memory, MemoryEvent
from memories.services.extraction import session_consolidate
from sessions.models import ChatSession
from sessions.services.sessions import session_create, session_end, turn_append_many


def capture_events(monkeypatch) -> list[dict]:
    """Every event the engine publishes, as {"type", "data"}, in order (still delivered as usual)."""
    import memories.services.decisions
    import memories.services.extraction
    import memories.services.memories
    import sessions.services.sessions
    from memory_project import events

    original = events.event_publish
    seen: list[dict] = []

    def record(**kwargs):
        seen.append({"type": kwargs["type"], "data": kwargs["data"]})
        return original(**kwargs)

    for module in (
        memories.services.decisions,
        memories.services.memories,
        memories.services.extraction,
        sessions.services.sessions,
    ):
        monkeypatch.setattr(module, "event_publish", record)
    return seen


def of_type(events: list[dict], type_: str) -> list[dict]:
    return [e["data"] for e in events if e["type"] == type_]


def conversation(owner, *lines, agent: str = "", speaker: str = "", start=None) -> ChatSession:
    """A session holding `lines`, each "user: …" / "assistant: …", one minute apart."""
    session = session_create(owner=owner, agent=agent)
    start = start or timezone.now() - timedelta(minutes=len(lines))
    turns = []
    for index, line in enumerate(lines):
        role, _, content = line.partition(": ")
        turns.append(
            {
                "role": role,
                "content": content,
                "speaker": speaker if role == "user" else "",
                "created_at": start + timedelta(minutes=index),
            }
        )
    turn_append_many(session=session, turns=turns)
    session.refresh_from_db()
    return session


def end_and_consolidate(session: ChatSession):
    """End the session and consolidate it in this thread (what the eager job does after commit)."""
    session_end(session=session)
    return session_consolidate(session=session)


def rows(owner=None) -> list[tuple]:
    """(content, category, status, strength rounded to 6 places, hit_count) of every memory, oldest first."""
    qs = Memory.objects.all() if owner is None else Memory.objects.filter(owner=owner)
    return [
        (m.content, m.category, m.status, round(m.strength, 6), m.hit_count)
        for m in qs.order_by("created_at", "content")
    ]


def event_types(memory: Memory) -> list[str]:
    return list(MemoryEvent.objects.filter(memory=memory).order_by("id").values_list("event_type", flat=True))
