"""What the consolidation engine and its LLM providers say to each other: turns in, candidate
memories and episode summaries out, `LLMError` when no valid answer could be had.

A module of its own so that the providers (memories.extraction.provider,
memories.providers.openai_llm) and the factory that picks one (memories.providers.llm) all import
it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Protocol

CATEGORIES = ("preference", "fact", "project", "decision", "workflow", "skill", "error", "rule", "todo")
RETENTIONS = ("transient", "short", "long", "permanent")
ENTITY_KINDS = ("person", "place", "organization", "project", "tool", "other")
ACTIONS = ("remember", "forget")


@dataclass
class TurnView:
    """What the engine passes in: one conversation turn, read-only."""

    sequence: int
    role: str  # user | assistant | system | tool
    speaker: str
    content: str
    created_at: datetime
    tool_name: str = ""
    tool_error: str = ""

    @classmethod
    def of(cls, turn) -> TurnView:
        """The view of a stored turn (a ConversationTurn, or anything with its attributes)."""
        return cls(**{f.name: getattr(turn, f.name) for f in fields(cls)})


@dataclass
class CandidateMemory:
    """One memory a provider proposes; the engine decides whether and how to store it."""

    content: str  # one self-contained sentence ("User prefers green tea")
    category: str  # one of CATEGORIES
    importance: float  # 0..1 (high 0.8 / medium 0.6 / low 0.4 are typical)
    retention: str = "long"  # one of RETENTIONS
    expires_at: datetime | None = None
    subject: str = ""  # slot key, e.g. "favorite color", "drink preference", "editor"
    predicate: str = ""  # slot key, e.g. "is", "prefers", "uses"
    value: str = ""  # e.g. "blue"
    source_sequences: list[int] = field(default_factory=list)  # most relevant first
    confidence: float = 0.8
    entities: list[tuple[str, str]] = field(default_factory=list)  # (name, kind in ENTITY_KINDS)
    action: str = "remember"  # "remember" or "forget" (content = what to forget)
    explicit: bool = False  # the user asked for it ("remember …", "记住…", "forget …")
    # Text of an existing memory (as passed in `existing`) that this candidate corrects or replaces,
    # when the provider noticed one; "" otherwise.
    contradicts: str = ""
    # When what it tells happened ("2023-05-06", "2023-04", "2022"), resolved from the turn's time.
    event_date: str = ""


@dataclass
class EpisodeSummary:
    """What one finished conversation was about, for its episode."""

    summary: str
    goal: str = ""
    outcome: str = ""
    entities: list[str] = field(default_factory=list)
    tools_used: list[str] = field(default_factory=list)
    # Tasks the user said they finished, each with when (None: when the session ended).
    completed: list[tuple[str, datetime | None]] = field(default_factory=list)


class LLMError(Exception):
    """The provider could not produce a valid answer (after its retries and its repair attempt)."""


class LLMProvider(Protocol):
    name: str

    def extract(self, *, turns: list[TurnView], existing: list[str]) -> list[CandidateMemory]: ...

    def summarize_episode(self, *, turns: list[TurnView]) -> EpisodeSummary: ...

    def summarize(self, *, text: str, max_tokens: int) -> str: ...

    def compress(self, *, memories: list[str]) -> list[str]: ...
