"""Core memory as the editor page shows it: MEMORY.md, learnings.md, USER.md, the rolling summary
and the scratchpad of one owner and agent, each with a version, and saves that refuse a version
someone else replaced in the meantime (409 `stale_version`) instead of overwriting their change.

MEMORY.md and learnings.md go through memories.services.memory_md_edit and USER.md through
user_md_edit, which apply the difference as memory changes; the rolling summary and the
scratchpad are plain text and fields, saved whole.
"""

import hashlib
import json

from django.db import transaction

from memories.models import CoreMemory
from memories.services.memory_md_edit import memory_md_apply, memory_md_get
from memories.services.user_md_edit import user_md_apply, user_md_get
from memory_project.exceptions import Conflict
from sessions.models import Scratchpad
from sessions.services.scratchpad import MAX_RECENT_COMPLETIONS

MARKDOWN_VIEWS = ("memory-md", "learnings-md", "user-md")


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:32]


def _stale(what: str, version: str, current: str):
    return Conflict(
        f"The {what} changed since you loaded it. Nothing was saved: reload it, redo your edit and save again.",
        code="stale_version",
        details={"your_version": version, "current_version": current},
    )


def rolling_summary_get(*, owner, agent: str = "") -> dict:
    core = CoreMemory.objects.filter(owner=owner, agent=agent).only("rolling_summary", "updated_at").first()
    text = core.rolling_summary if core else ""
    return {"content": text, "version": _digest(text), "updated_at": core.updated_at if core else None}


@transaction.atomic
def rolling_summary_save(*, owner, agent: str = "", content: str, version: str) -> dict:
    core, _ = CoreMemory.objects.select_for_update().get_or_create(owner=owner, agent=agent)
    current = _digest(core.rolling_summary)
    if version != current:
        raise _stale("rolling summary", version, current)
    core.rolling_summary = content.strip()
    core.save(update_fields=["rolling_summary", "updated_at"])
    return rolling_summary_get(owner=owner, agent=agent)


def _pad_state(pad: Scratchpad | None) -> dict:
    fields = {
        "current_focus": pad.current_focus if pad else "",
        "active_projects": list(pad.active_projects) if pad else [],
        "recent_completions": list(pad.recent_completions) if pad else [],
    }
    return {**fields, "version": _digest(fields), "updated_at": pad.updated_at if pad else None}


def scratchpad_state(*, owner, agent: str = "") -> dict:
    return _pad_state(Scratchpad.objects.filter(owner=owner, agent=agent).first())


@transaction.atomic
def scratchpad_save(*, owner, agent: str = "", version: str, **fields) -> dict:
    """Replace the fields given (current_focus, active_projects, recent_completions)."""
    pad, _ = Scratchpad.objects.select_for_update().get_or_create(owner=owner, agent=agent)
    current = _pad_state(pad)["version"]
    if version != current:
        raise _stale("scratchpad", version, current)
    for name, value in fields.items():
        setattr(pad, name, value)
    pad.recent_completions = pad.recent_completions[-MAX_RECENT_COMPLETIONS:]
    pad.save()
    return _pad_state(pad)


def markdown_get(*, owner, agent: str, view: str) -> dict:
    if view == "user-md":
        return user_md_get(owner=owner, agent=agent)
    return memory_md_get(owner=owner, agent=agent, view=view)


def markdown_apply(*, owner, agent: str, view: str, content: str, version: str, actor: str) -> dict:
    if view == "user-md":
        return user_md_apply(owner=owner, agent=agent, content=content, version=version, actor=actor)
    return memory_md_apply(owner=owner, agent=agent, view=view, content=content, version=version, actor=actor)


def core_memory_get(*, owner, agent: str = "") -> dict:
    """Everything the editor page opens with."""
    return {
        "agent": agent,
        **{view.replace("-", "_"): markdown_get(owner=owner, agent=agent, view=view) for view in MARKDOWN_VIEWS},
        "rolling_summary": rolling_summary_get(owner=owner, agent=agent),
        "scratchpad": scratchpad_state(owner=owner, agent=agent),
    }
