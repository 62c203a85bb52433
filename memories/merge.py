"""The merge decision itself, without a database: what a write does with a draft, and why.

`memories.services.decisions.memory_write` reads the memories near the draft (`Neighbourhood`),
asks `decide`, and applies the `Decision`: ADD, NOOP (reinforce the memory that absorbs the text),
UPDATE (merge into a closer statement) or DELETE (supersede what the draft makes stale).
"""

from dataclasses import dataclass, field

from memories import attributes, updates
from memories.contradiction import Slot, contradicts, negated
from memories.drafts import MemoryDraft
from memories.models import Memory, Status
from memories.moderation import looks_like_instruction
from memory_project.text import content_hash


@dataclass(frozen=True)
class Neighbourhood:
    """What the database holds near a draft, read before the decision."""

    # Nearest by meaning, best first: what replaced a superseded copy of the same text and the
    # memory the extractor named as replaced come first.
    candidates: list[tuple[Memory, float]] = field(default_factory=list)
    # Candidates plus the memories filling the same subject/predicate slot and those naming the
    # value a knowledge update retracts, wherever their vectors are.
    pool: list[tuple[Memory, float]] = field(default_factory=list)
    same: list[Memory] = field(default_factory=list)  # copies of the same text (content hash)
    superseded: frozenset = frozenset()  # ids, among all of the above, that something superseded
    restated: list[Memory] = field(default_factory=list)  # what replaced a superseded copy of the text
    replacers: list[Memory] = field(default_factory=list)  # what replaced the best candidate, if stale
    linked: frozenset = frozenset()  # ids already linked to the draft's source turns
    heard: frozenset = frozenset()  # ids of those that took this very text from those turns


@dataclass(frozen=True)
class Decision:
    action: str  # add | update | delete | noop
    reason: str = ""  # what the history row of the written memory says
    memory: Memory | None = None  # noop, update: the existing memory that takes the text in
    changed: bool = True  # False for a NOOP that only re-read turns already linked (nothing written)
    content: str = ""  # update: the text kept, carrying the values of both
    superseded: tuple[tuple[Memory, str], ...] = ()  # delete: each memory made stale, and why
    previous: Memory | None = None
    review: Memory | None = None  # add: the pinned memory it contradicts (it waits for review)
    related: tuple[Memory, ...] = ()


def decide(*, draft: MemoryDraft, near: Neighbourhood, cfg: dict) -> Decision:
    """Knowledge updates come first: every memory the statement makes stale is superseded at once.
    A near duplicate is absorbed only when it carries the same values (numbers, identifiers, names):
    otherwise it is another fact, or the same fact with a new value."""
    content = draft.content
    current = [m for m in near.same if m.pk not in near.superseded]
    if current:
        return _reinforce(current[0], near, "same content")
    if any(m.pk in near.linked for m in near.same):
        return Decision("noop", memory=near.same[0], changed=False)
    stale = near.superseded - {m.pk for m in near.restated}
    targets = []
    for existing, similarity in near.pool:
        if existing.status == Status.PENDING_REVIEW or existing.pk in stale:
            continue
        reason = _supersede_reason(existing, similarity, draft=draft, restated=near.restated, cfg=cfg)
        if reason:
            targets.append((existing, reason))
    pinned = next((m for m, _ in targets if m.pinned), None)
    if pinned is not None:
        # A person pinned the old memory: the contradiction waits for review instead of winning.
        return Decision("add", reason=f"contradicts pinned memory {pinned.pk}", review=pinned, related=(pinned,))
    if targets:
        olds = ", ".join(str(m.pk) for m, _ in targets)
        reason = f"supersedes {olds}: {targets[0][1]}"[:500]
        return Decision("delete", reason=reason, superseded=tuple(targets), previous=targets[0][0])

    best, similarity = near.candidates[0] if near.candidates else (None, 0.0)
    if best is not None and similarity >= cfg["DUPLICATE_SIMILARITY"] and _absorbs(best.content, content):
        if best.pk in stale:
            # Close to a statement that was superseded: the old state holds again, so what replaced it
            # is stale now. Reinforcing the archived copy would leave both values live.
            return Decision(
                "delete" if near.replacers else "add",
                reason=f"restates {best.pk}",
                superseded=tuple((m, "restated earlier value") for m in near.replacers),
                previous=best,
            )
        return _reinforce(best, near, "near duplicate")
    kept = (content if len(content) >= len(best.content) else best.content) if best else ""
    if (
        best is not None
        and _absorbs(kept, best.content)
        and _absorbs(kept, content)
        and best.pk not in stale
        and similarity >= cfg["UPDATE_SIMILARITY"]
        and best.category == draft.category
        # Instruction-like text must not slip into an active memory by way of a merge: it is added
        # on its own, where moderation sends it to review.
        and not looks_like_instruction(content)
    ):
        if best.pk in near.heard:
            return Decision("noop", memory=best, changed=False)
        return Decision("update", reason="refined by a closer statement", memory=best, content=kept, previous=best)
    related = tuple(m for m, s in near.candidates if s >= cfg["RELATED_SIMILARITY"])
    return Decision("add", related=related)


def _reinforce(existing: Memory, near: Neighbourhood, reason: str) -> Decision:
    """Saying it again reinforces it; re-reading the same turns (a repeated or overlapping
    extraction) must not, or replays would inflate strength."""
    if existing.pk in near.heard:
        return Decision("noop", memory=existing, changed=False)
    return Decision("noop", reason=reason, memory=existing)


def _absorbs(kept: str, other: str) -> bool:
    """May the text `kept` stand for both? Only when it carries every value of the other (numbers,
    identifiers, names) and says the same thing (not its negation): "db-01 … 10.0.0.11" never absorbs
    "db-02 … 10.0.0.12", "plays tennis on Mondays and Fridays" does absorb "… on Mondays"."""
    return updates.values(other) <= updates.values(kept) and negated(kept) == negated(other)


def _supersede_reason(existing: Memory, similarity: float, *, draft: MemoryDraft, restated: list, cfg: dict) -> str:
    """Why the draft makes `existing` stale, or "" when both stand."""
    if draft.replaces and existing.content_hash == content_hash(draft.replaces):
        return "the extractor named it as replaced"
    if existing in restated:
        return "restated earlier value"
    new_attribute, old_attribute = attributes.attribute_of(draft.content), attributes.attribute_of(existing.content)
    if new_attribute and old_attribute and attributes.new_value(old_attribute, new_attribute):
        return f"knowledge update: new {new_attribute.name}"
    min_similarity = cfg["CONTRADICTION_MIN_SIMILARITY"]
    subject, predicate = draft.subject, draft.predicate
    in_slot = bool(subject and predicate) and (existing.subject.lower(), existing.predicate.lower()) == (
        subject.lower(),
        predicate.lower(),
    )
    old_value = (existing.structured_data or {}).get("value", "")
    new_value = draft.structured_data.get("value", "")
    if (similarity >= min_similarity or in_slot) and contradicts(
        existing.content,
        draft.content,
        Slot(existing.subject, existing.predicate, old_value),
        Slot(subject, predicate, new_value),
    ):
        return f"contradicted: {subject} {predicate} changed" if in_slot else "contradicted by a negation"
    reason = _update_reason(draft.content, existing, similarity, min_similarity)
    if reason:
        return reason
    if (
        similarity >= min_similarity
        and updates.value_change(existing.content, draft.content)
        and not attributes.names_several(draft.content)
    ):
        return "knowledge update: new value for the same thing"
    return ""


def _update_reason(content: str, existing: Memory, similarity: float, min_similarity: float) -> str:
    """Why `content` replaces `existing` as a knowledge update, or "" when it does not.

    The cues are in the words: a stop ("quit coffee", "不再喝咖啡") retracts every positive statement
    naming the thing; a switch ("from vim to VS Code", "moved to Lisbon", "换成绿茶") retracts what held
    the same place; "these days only …" / "现在只…" retracts the other values of the same habit.
    """
    update = updates.update_of(content)
    if update is None or negated(existing.content) or updates.update_of(existing.content) == update:
        return ""
    existing_terms = updates.terms(existing.content)
    new_terms = updates.key_terms(update.new) if update.new else set()
    if new_terms and new_terms <= existing_terms:
        return ""  # the old memory already states the new value
    if update.old and updates.names(update.old, existing.content):
        if update.kind == "leave" and updates.slot_of(existing.content) in ("employer", "residence"):
            return f'knowledge update: left "{update.old}"'
        if not updates.other_relation(update.old, existing.content):
            return f'knowledge update: "{update.old}" no longer holds'
    # Leaving one place or employer for another ("离开武汉了，现在回长沙住") names the new one's slot.
    slot = update.slot or (updates.slot_of(content) if update.kind != "stop" else "")
    if slot and updates.slot_of(existing.content) == slot:
        return f"knowledge update: new {slot} {update.new or content!r}"
    if slot == "employer" and updates.names_role(content) and updates.occupation_of(existing.content):
        # A new place of work with a role of its own ("joined Stripe as a designer", "现在在猿辅导做课程研发")
        # is a new job: what the user did for a living before is no longer it.
        return f"knowledge update: new job {update.new or content!r}"
    if update.kind in ("stop", "leave"):
        return ""
    new_domain = updates.domain(update.new or content)
    same_domain = bool(new_domain) and new_domain == updates.domain(existing.content)
    if update.kind == "switch" and update.new and same_domain:
        # "switched to VS Code" replaces the editor in use, whatever words (or language) named it.
        return f'knowledge update: switched to "{update.new}"'
    if similarity < min_similarity:
        return ""
    verb = updates.head_verb(content)
    same_habit = verb and verb not in ("is", "has", "have", "be") and verb == updates.head_verb(existing.content)
    if update.kind == "switch" and update.new and same_habit:
        return f'knowledge update: switched to "{update.new}"'
    if same_habit and (updates.exclusive(content) or same_domain):
        return "knowledge update: the habit changed"
    return ""
