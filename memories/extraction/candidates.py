"""What every heuristic rule shares: the turn context, importance levels, and a candidate factory."""

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from memories.extraction import lexicon, vocabulary
from memories.extraction.date_notes import annotate_dates
from memories.extraction.dates import DateMatch, end_of_day
from memories.extraction.past_dates import find_past_date
from memories.extraction.phrasing import slot_key, split_clauses
from memories.providers.llm_types import CandidateMemory, TurnView

HIGH, MEDIUM, LOW = 0.8, 0.6, 0.4
EXPLICIT = 0.9  # "remember …": above HIGH so the user's own requests outrank inferred ones
CORRECTION_CONFIDENCE = 0.95

# "for now" / "暂时": a state the user says will not last.
_TEMPORARY = re.compile(r"\b(?:for now|for the moment|for the time being|temporarily|this week|today)\b|暂时|这周|今天")


@dataclass(frozen=True)
class Ctx:
    turn: TurnView
    explicit: bool = False  # inside "remember …" / "forget …"
    correction: bool = False  # after "no, actually …" / "不对，…"
    future: bool = False  # after "from now on" / "以后"
    # Names of people and pets the user introduced earlier in the conversation, latest last: "豆豆今年两岁"
    # and "he's two" (right after "a border collie named Biscuit") are about them.
    names: tuple[str, ...] = ()

    @property
    def now(self) -> datetime:
        return self.turn.created_at

    def but(self, **changes) -> "Ctx":
        return replace(self, **changes)


# A rule reads one clause and keeps at most one candidate from it.
ClauseRule = Callable[[str, Ctx], CandidateMemory | None]


def make(
    ctx: Ctx,
    content: str,
    category: str,
    importance: float,
    *,
    retention: str = "permanent",
    subject: str = "",
    predicate: str = "",
    value: str = "",
    entities: list[tuple[str, str]] | None = None,
    confidence: float = 0.8,
    expires_at: datetime | None = None,
) -> CandidateMemory:
    # A past date said relatively ("last Saturday") is written out: the memory outlives the turn's time.
    content = annotate_dates(content, ctx.now, future=False)
    if retention == "permanent" and category != "rule" and _TEMPORARY.search(content):
        retention = "short"
    past = find_past_date(content, ctx.now)
    return CandidateMemory(
        content=content,
        category=category,
        importance=importance,
        retention=retention,
        expires_at=expires_at,
        subject=slot_key(subject),
        predicate=slot_key(predicate),
        value=value.strip(),
        source_sequences=[ctx.turn.sequence],
        confidence=confidence,
        entities=_dedupe(entities or []),
        event_date=past.iso if past else "",
    )


def named_fact(
    ctx: Ctx, content: str, importance: float, *, subject: str, predicate: str, value: str, kind: str
) -> CandidateMemory:
    """A fact whose value is a name (the user's name, home, employer, operating system): it fills the
    slot and is linked as an entity of `kind`."""
    entities = [(value, kind)]
    return make(ctx, content, "fact", importance, subject=subject, predicate=predicate, value=value, entities=entities)


def residence(ctx: Ctx, content: str, place: str) -> CandidateMemory:
    """Where the user lives: one slot, whichever language and wording said it."""
    return named_fact(ctx, content, HIGH, subject="residence", predicate="lives in", value=place, kind="place")


def employer(ctx: Ctx, content: str, org: str) -> CandidateMemory:
    """Where the user works: one slot, whichever language and wording said it."""
    return named_fact(ctx, content, HIGH, subject="employer", predicate="works at", value=org, kind="organization")


def works_on(ctx: Ctx, content: str, what: str, *, name: str, subject: str) -> CandidateMemory:
    """A project the user works on, linked by its `name` when it has one, else by the names in `what`."""
    entities = [(name, "project")] if name else named_entities(what, "project")
    return make(
        ctx,
        content,
        "project",
        MEDIUM,
        subject=subject,
        predicate="works on",
        value=what,
        entities=entities + tool_entities(what),
    )


def decided(
    ctx: Ctx, content: str, importance: float, *, subject: str, value: str, entities: list[tuple[str, str]]
) -> CandidateMemory:
    """A decision, in the slot of what it is about."""
    return make(
        ctx, content, "decision", importance, subject=subject, predicate="decided", value=value, entities=entities
    )


def rule(ctx: Ctx, content: str, *, subject: str, mode: str, act: str) -> CandidateMemory:
    """An instruction to the assistant ("always" / "never" / "must" `act`), whichever language said it:
    kept for good, in the slot of what it asks."""
    return make(
        ctx,
        content,
        "rule",
        HIGH,
        retention="permanent",
        subject=subject,
        predicate="rule",
        value=mode,
        entities=tool_entities(act),
        confidence=0.9,
    )


def todo(
    ctx: Ctx, content: str, importance: float, *, subject: str, task: str, due: DateMatch | None
) -> CandidateMemory:
    """A task in the slot of what it is, whichever language said it: one due within three days is kept
    only briefly, and a dated one expires at the end of its day."""
    retention = "short" if due is not None and (due.due - ctx.now.date()).days <= 3 else "long"
    return make(
        ctx,
        content,
        "todo",
        importance,
        retention=retention,
        expires_at=end_of_day(due.due, ctx.now) if due else None,
        subject=subject,
        predicate="due",
        value=due.due.isoformat() if due else "",
        entities=named_entities(task),
    )


def plain_statement(
    ctx: Ctx,
    content: str,
    category: str,
    importance: float,
    *,
    subject: str,
    value: str,
    entities: list[tuple[str, str]],
) -> CandidateMemory:
    """What the user stated that no rule recognised, whichever language said it: "X is Y" fills the slot
    of X; asked to remember, it is kept for good, otherwise long."""
    return make(
        ctx,
        content,
        category,
        importance,
        retention="permanent" if ctx.explicit else "long",
        subject=subject,
        predicate="is" if subject else "",
        value=value,
        entities=entities,
    )


def clause_candidates(text: str, ctx: Ctx, extract_clause: ClauseRule) -> list[CandidateMemory]:
    """What each clause of `text` yields, with the sentence's context (correction, explicit) applied."""
    out = []
    for clause in split_clauses(text):
        candidate = extract_clause(clause, ctx)
        if candidate is not None:
            out.append(apply_context(candidate, ctx))
    return out


def apply_context(candidate: CandidateMemory, ctx: Ctx) -> CandidateMemory:
    if ctx.correction:
        candidate.confidence = max(candidate.confidence, CORRECTION_CONFIDENCE)
        candidate.importance = round(min(1.0, candidate.importance + 0.1), 2)
    if ctx.explicit:
        candidate.explicit = True
        candidate.importance = max(candidate.importance, EXPLICIT)
        candidate.confidence = max(candidate.confidence, 0.9)
        if candidate.category != "todo":
            # The user asked for this to be kept: it may fade from the prompt, never expire.
            candidate.retention = "permanent"
            candidate.expires_at = None
    return candidate


_INTRODUCED = re.compile(
    r"\b(?:named|called)\s+(?P<en>[A-Z][\w'-]+)|叫(?:做)?(?P<zh>[\u4e00-\u9fff]{2,3}?)(?=[，,。是今的]|$)"
)


def introduced_names(candidates: list[CandidateMemory]) -> list[str]:
    """The people and pets `candidates` name, in the order they appear."""
    names: list[str] = []
    for candidate in candidates:
        names += [name for name, kind in candidate.entities if kind in ("person", "other") and not name.islower()]
        names += [m["en"] or m["zh"] for m in _INTRODUCED.finditer(candidate.content)]
    return list(dict.fromkeys(names))


def _dedupe(entities: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    out = []
    for name, kind in entities:
        name = name.strip(" .,;:!?\"'()（）。，")
        key = name.casefold()
        if len(name) < 2 or key in seen or key in {"user", "用户"}:
            continue
        seen.add(key)
        out.append((name, kind))
    return out


_CAPITALISED = re.compile(r"(?<![\w.])([A-Z][\w.+#-]*[\w+#](?:\s+[A-Z][\w.+#-]*[\w+#])*)")
_NOT_NAMES = {
    "i",
    "i'm",
    "i've",
    "i'll",
    "i'd",
    "user",
    "the",
    "a",
    "an",
    "my",
    "our",
    "it",
    "this",
    "that",
    "we",
    "you",
    "they",
    "he",
    "she",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "ok",
    "okay",
}


def tool_entities(text: str) -> list[tuple[str, str]]:
    return [(surface, "tool") for surface, domain in lexicon.known_terms(text) if domain in lexicon.TOOL_DOMAINS]


def named_entities(text: str, kind: str = "other") -> list[tuple[str, str]]:
    """Capitalised names in `text` (which should not start a sentence), tools recognised as tools."""
    known = {surface.casefold(): "tool" for surface, _ in tool_entities(text)}
    out = tool_entities(text)
    for m in _CAPITALISED.finditer(text):
        name = m.group(1)
        if name.casefold() in _NOT_NAMES or name.split()[0].casefold() in _NOT_NAMES:
            continue
        out.append((name, known.get(name.casefold(), kind)))
    return out


def name_kind(attribute: str) -> str:
    """The kind of thing an attribute's value names: "wife's name" → person, "sister's birthday" →
    other (the head word decides; for "X's name" it is X)."""
    words = slot_key(attribute).replace("'s", "").split()
    if not words:
        return "other"
    head = words[-1]
    if head == "name":
        if len(words) == 1:
            return "person"
        head = words[-2]
    for kind, heads in (
        ("person", vocabulary.PERSON_ATTRIBUTES - {"name"}),
        ("place", vocabulary.PLACE_ATTRIBUTES),
        ("organization", vocabulary.ORG_ATTRIBUTES),
        ("project", vocabulary.PROJECT_ATTRIBUTES),
        ("tool", vocabulary.TOOL_ATTRIBUTES),
    ):
        if head in heads or " ".join(words[-2:]) in heads:
            return kind
    return "other"
