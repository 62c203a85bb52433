"""Data the dashboard tests look at, written through the services (so history rows exist)."""

from memories.drafts import MemoryDraft
from memories.models import Entity, MemoryEntity, MemoryRelation, Source
from memories.services.memories import memory_create
from sessions.models import Episode
from sessions.services.sessions import session_create, turn_append_many

XSS = "<img src=x onerror=alert(1)>"


def scene(owner, *, prefix: str = ""):
    """A session with turns and an episode, three memories (one from those turns), a relation of
    each kind that stands out, and an entity."""
    session = session_create(owner=owner, channel="web", title=f"{prefix}Morning routine")
    turns = turn_append_many(
        session=session,
        turns=[
            {"role": "user", "content": f"{prefix}I drink green tea every morning."},
            {"role": "assistant", "content": "Noted."},
        ],
    )
    tea = memory_create(
        owner=owner,
        draft=MemoryDraft(
            content=f"{prefix}Drinks green tea every morning",
            category="preference",
            importance=0.8,
            source=Source.EXTRACTION,
        ),
        actor="test",
        source_session=session,
        source_turns=[turns[0]],
    )
    coffee = memory_create(
        owner=owner,
        draft=MemoryDraft(content=f"{prefix}Drinks coffee every morning", category="preference"),
        actor="test",
    )
    porto = memory_create(
        owner=owner, draft=MemoryDraft(content=f"{prefix}Sister Ana lives in Porto", category="fact"), actor="test"
    )
    MemoryRelation.objects.create(owner=owner, source=tea, target=coffee, type="contradicts")
    MemoryRelation.objects.create(owner=owner, source=tea, target=porto, type="related")
    ana = Entity.objects.create(owner=owner, name=f"{prefix}Ana", normalized_name=f"{prefix}ana", kind="person")
    MemoryEntity.objects.create(owner=owner, memory=porto, entity=ana)
    Episode.objects.create(
        owner=owner,
        session=session,
        summary=f"{prefix}Talked about morning drinks.",
        started_at=turns[0].created_at,
        ended_at=turns[-1].created_at,
    )
    return {"session": session, "turns": turns, "tea": tea, "coffee": coffee, "porto": porto, "ana": ana}
