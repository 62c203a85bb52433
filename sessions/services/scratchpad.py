from datetime import UTC, datetime

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


def scratchpad_complete(*, owner, agent: str = "", task: str, completed_at: datetime | None = None) -> Scratchpad:
    """Archive a finished task into recent completions (at most 5, timestamped, oldest first).

    The same task reported again (a session re-read, or said twice) keeps one entry, the latest."""
    pad, _ = Scratchpad.objects.get_or_create(owner=owner, agent=agent)
    entry = {"task": task, "completed_at": (completed_at or timezone.now()).isoformat()}
    kept = [e for e in pad.recent_completions if e.get("task", "").casefold() != task.casefold()]
    pad.recent_completions = sorted(kept + [entry], key=_completed_at)[-MAX_RECENT_COMPLETIONS:]
    if pad.current_focus == task:
        pad.current_focus = ""
    pad.save()
    return pad


def _completed_at(entry: dict) -> datetime:
    try:
        when = datetime.fromisoformat(entry.get("completed_at") or "")
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)
