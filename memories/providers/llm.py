"""The LLM provider interface the consolidation engine talks to, and the factory that picks one.

Two providers implement it:
- `OpenAIProvider` (memories.providers.openai_llm): any OpenAI-compatible chat completions server,
  JSON mode, schema-validated output with one repair round, retries with exponential backoff.
- `HeuristicProvider` (memories.extraction.heuristic): offline and deterministic, English and
  Chinese patterns, extractive summaries.

Both raise `LLMError` (and nothing else) when they cannot produce a valid answer, so a caller can
leave its job queued and retry later instead of crashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from django.conf import settings

if TYPE_CHECKING:
    from memories.extraction.heuristic import HeuristicProvider
    from memories.providers.openai_llm import OpenAIProvider

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


@dataclass
class CandidateMemory:
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


@lru_cache(maxsize=8)
def _build(
    provider: str,
    api_key: str,
    base_url: str | None,
    model: str,
    timeout: float,
    max_retries: int,
    backoff: float,
    max_backoff: float,
) -> LLMProvider:
    if provider == "openai":
        from memories.providers.openai_llm import OpenAIProvider

        return OpenAIProvider(
            api_key=api_key,
            base_url=base_url,
            model=model,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
        )
    from memories.extraction.heuristic import HeuristicProvider

    return HeuristicProvider()


def get_llm() -> LLMProvider:
    """The configured provider, built once per distinct set of settings values."""
    return _build(
        settings.LLM_PROVIDER,
        settings.OPENAI_API_KEY or "",
        settings.OPENAI_BASE_URL or None,
        settings.LLM_MODEL,
        float(settings.LLM_TIMEOUT_SECONDS),
        int(settings.LLM_MAX_RETRIES),
        float(getattr(settings, "LLM_RETRY_BACKOFF_SECONDS", 0.5)),
        float(getattr(settings, "LLM_RETRY_MAX_BACKOFF_SECONDS", 8.0)),
    )


def get_llm_cache_clear() -> None:
    _build.cache_clear()


def __getattr__(name: str):
    # The providers import this module for the dataclasses above, so they are exposed lazily here
    # instead of imported at the top (which would be circular).
    if name == "HeuristicProvider":
        from memories.extraction.heuristic import HeuristicProvider

        return HeuristicProvider
    if name == "OpenAIProvider":
        from memories.providers.openai_llm import OpenAIProvider

        return OpenAIProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "ENTITY_KINDS",
    "RETENTIONS",
    "CandidateMemory",
    "EpisodeSummary",
    "HeuristicProvider",
    "LLMError",
    "LLMProvider",
    "OpenAIProvider",
    "TurnView",
    "get_llm",
    "get_llm_cache_clear",
]
