from django.shortcuts import get_object_or_404

from sessions.models import ChatSession, ConversationTurn, Episode, Scratchpad


def session_get(*, owner, session_id) -> ChatSession:
    """The owner's session or a 404: another owner's session does not exist for this caller."""
    return get_object_or_404(ChatSession, pk=session_id, owner=owner)


def session_list(*, owner, status: str | None = None, agent: str | None = None, channel: str | None = None):
    qs = ChatSession.objects.filter(owner=owner).order_by("-last_activity_at")
    if status:
        qs = qs.filter(status=status)
    if agent is not None:
        qs = qs.filter(agent=agent)
    if channel:
        qs = qs.filter(channel=channel)
    return qs


def turn_list(*, session: ChatSession):
    return ConversationTurn.objects.filter(session=session, owner_id=session.owner_id).order_by("sequence")


def episode_list(*, owner, agent: str | None = None):
    qs = Episode.objects.filter(owner=owner).order_by("-ended_at")
    if agent is not None:
        qs = qs.filter(agent=agent)
    return qs


def scratchpad_get(*, owner, agent: str = "") -> Scratchpad:
    pad, _ = Scratchpad.objects.get_or_create(owner=owner, agent=agent)
    return pad
