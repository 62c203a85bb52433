from django.utils import timezone

from sessions.models import Scratchpad

MAX_RECENT_COMPLETIONS = 5


def scratchpad_update(*, owner, agent: str = "", **fields) -> Scratchpad:
    pad, _ = Scratchpad.objects.get_or_create(owner=owner, agent=agent)
    for name in ("current_focus", "active_projects", "recent_completions"):
        if name in fields:
            setattr(pad, name, fields[name])
    pad.recent_completions = pad.recent_completions[-MAX_RECENT_COMPLETIONS:]
    pad.save()
    return pad


def scratchpad_complete(*, owner, agent: str = "", task: str) -> Scratchpad:
    """Archive a finished task into recent completions (at most 5, timestamped)."""
    pad, _ = Scratchpad.objects.get_or_create(owner=owner, agent=agent)
    entry = {"task": task, "completed_at": timezone.now().isoformat()}
    pad.recent_completions = (pad.recent_completions + [entry])[-MAX_RECENT_COMPLETIONS:]
    if pad.current_focus == task:
        pad.current_focus = ""
    pad.save()
    return pad
