"""USER.md as an editable view of an owner's active memories (seed 001's profile).

GET renders USER.md as the export does (one bullet per memory, grouped by category) with a
`version`, a hash of what it shows. PUT sends the edited text back with that version, and the
difference is applied line by line, as memory_md_edit does for MEMORY.md:

- a bullet whose text changed in place → `memory_update` of that memory's content;
- a bullet moved under another heading → `memory_update` of its category;
- a bullet removed → `memory_forget`;
- a bullet added → `memory_write`, the merge decision (it may reinforce or supersede what is known).

USER.md has no ids, so bullets are matched to memories by their text: identical lines first, then
the most alike old and new lines (an edited bullet), see `_match`. A PUT made from an
older version is refused whole with 409, nothing applied.
"""

import difflib
import hashlib
import json

from django.db import connection, transaction
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.formats.memory_md import USER_MD_SECTIONS, render_user_md
from memories.formats.user_profile import category_for_section, parse_user_profile
from memories.models import EventType, Memory, Source, Status
from memories.moderation import looks_like_instruction
from memories.services.actions import memory_forget
from memories.services.decisions import memory_write
from memories.services.memories import memory_update
from memories.services.memory_md_edit import strongest_shown
from memories.services.transfer import memory_md_entries
from memory_project.exceptions import Conflict, ServiceError

FILE = "USER.md"


def _line_text(content: str) -> str:
    """A memory as its USER.md bullet shows it: one line."""
    return " ".join(part.strip() for part in content.splitlines() if part.strip())


def _state(owner, agent: str) -> dict:
    qs = Memory.objects.filter(owner=owner, agent=agent, status=Status.ACTIVE).defer(
        "embedding", "search_vector", "search_ngrams"
    )
    memories, hidden = strongest_shown(qs)
    entries = memory_md_entries(memories)
    content = render_user_md(
        entries,
        name=owner.get_full_name() or owner.get_username(),
        updated_at=timezone.localtime(),
        per_section=max(1, len(entries)),
    )
    # The rendered order (by section, then as render_user_md sorts within one) is the order the
    # parser reads the file back in, which the line matching relies on.
    by_id = {e.id: m for e, m in zip(entries, memories)}
    shown = [
        (category_for_section(item.section), item.text)
        for item in parse_user_profile(content)
        if item.section  # the "Nothing is known…" line of an empty profile is no bullet
    ]
    ordered = _in_rendered_order(entries, by_id, shown)
    version = hashlib.sha256(
        json.dumps(sorted([str(m.pk), m.category, _line_text(m.content)] for m in memories)).encode()
    ).hexdigest()[:32]
    return {"content": content, "shown": ordered, "version": version, "hidden": hidden}


def _in_rendered_order(entries, by_id, shown) -> list[tuple[str, str, Memory]]:
    """(category, bullet text, memory) in the order the bullets appear in the file."""
    pool: dict[tuple[str, str], list[Memory]] = {}
    for entry in entries:
        memory = by_id[entry.id]
        pool.setdefault((memory.category, _line_text(memory.content)), []).append(memory)
    ordered = []
    for category, text in shown:
        candidates = pool.get((category, text))
        if candidates:
            ordered.append((category, text, candidates.pop(0)))
    return ordered


# How alike an old and a new line must be to count as that memory edited rather than one forgotten
# and another added (difflib's ratio: 2 × matching characters / total characters).
EDIT_SIMILARITY = 0.6


def _match(old: list, new: list) -> tuple[list, list, list]:
    """Pair the file's lines before and after the edit: (pairs, removed, added).

    Identical lines pair first, wherever they moved (a move under another heading is a category
    change). Of the rest, the most alike old and new lines pair as an edit, as long as they are
    alike enough; what is left was removed or added.
    """
    remaining = list(old)
    pairs, unmatched = [], []
    for item in new:
        same = next((o for o in remaining if o[1] == item[1]), None)
        if same is None:
            unmatched.append(item)
        else:
            remaining.remove(same)
            pairs.append((same, item))
    scored = sorted(
        (
            (difflib.SequenceMatcher(a=o[1], b=n[1], autojunk=False).ratio(), i, j)
            for i, o in enumerate(remaining)
            for j, n in enumerate(unmatched)
        ),
        reverse=True,
    )
    used_old, used_new = set(), set()
    for ratio, i, j in scored:
        if ratio < EDIT_SIMILARITY:
            break
        if i in used_old or j in used_new:
            continue
        used_old.add(i)
        used_new.add(j)
        pairs.append((remaining[i], unmatched[j]))
    removed = [o for i, o in enumerate(remaining) if i not in used_old]
    added = [n for j, n in enumerate(unmatched) if j not in used_new]
    return pairs, removed, added


def _view(state: dict, agent: str, **extra) -> dict:
    """The view's answer: the file as shown and its version, with what the caller adds."""
    return {
        "view": "user-md",
        "file": FILE,
        "agent": agent,
        "content": state["content"],
        "version": state["version"],
        **extra,
    }


def user_md_get(*, owner, agent: str = "") -> dict:
    state = _state(owner, agent)
    return _view(state, agent, entries=len(state["shown"]), hidden=state["hidden"])


def _lock(owner, agent: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"user-md-edit:{owner.pk}:{agent}"])


def _known_heading(section: str) -> bool:
    title = section.strip().lower()
    return any(title == t.lower() for t in USER_MD_SECTIONS.values()) or title in USER_MD_SECTIONS


@transaction.atomic
def user_md_apply(*, owner, content: str, version: str, actor: str, agent: str = "") -> dict:
    _lock(owner, agent)
    state = _state(owner, agent)
    if version != state["version"]:
        raise Conflict(
            f"{FILE} changed since you loaded it (your version {version[:12]}…, current {state['version'][:12]}…). "
            "Nothing was applied: reload it, redo your edit and save again.",
            code="stale_version",
            details={"your_version": version, "current_version": state["version"]},
        )
    items = [item for item in parse_user_profile(content) if item.section or item.text]
    unknown = sorted({item.section for item in items if item.section and not _known_heading(item.section)})
    if unknown:
        raise ServiceError(
            f"{FILE} has sections this view does not know ({', '.join(unknown)}), so nothing was applied; use "
            f"one of: {', '.join(USER_MD_SECTIONS.values())}.",
            code="unknown_section",
        )
    pairs, removed, added = _match(state["shown"], [(category_for_section(i.section), i.text) for i in items])
    changes = {"updated": [], "forgotten": [], "added": []}
    reason = f"edited in {FILE}"
    for (old_category, old_text, memory), (category, text) in pairs:
        fields = {}
        if text != old_text:
            fields["content"] = text
            if looks_like_instruction(text):
                fields["status"] = Status.PENDING_REVIEW
        if category != old_category:
            fields["category"] = category
        if fields:
            memory_update(memory=memory, actor=actor, event_type=EventType.UPDATE, reason=reason, **fields)
            changes["updated"].append({"id": str(memory.pk), "fields": sorted(fields)})
    for _, _, memory in removed:
        memory_forget(memory=memory, actor=actor, reason=f"removed from {FILE}")
        changes["forgotten"].append(str(memory.pk))
    for category, text in added:
        draft = MemoryDraft(content=text, category=category, agent=agent, source=Source.USER_EXPLICIT)
        result = memory_write(owner=owner, draft=draft, actor=actor)
        changes["added"].append({"id": str(result.memory.pk), "action": result.action})
    return _view(_state(owner, agent), agent, changes=changes, warnings=[])
