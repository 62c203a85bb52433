"""A memory as a writer states it, before the merge decision: the one list of its fields.

The API's input serializer, the MEMORY.md/USER.md editors, imports, extraction, the tools (MCP)
and the lifecycle all hand `memory_write` / `memory_create` a `MemoryDraft`; the decision reads its
fields from here, so a field added to a memory is added once.
"""

from dataclasses import dataclass
from datetime import datetime

from memories import scoring
from memories.models import Category, Source
from memory_project.text import normalize


@dataclass(frozen=True, kw_only=True)
class MemoryContent:
    """What a memory says, whoever states it: a draft, and an import's record, which adds its own."""

    content: str
    category: str = Category.FACT
    importance: float | str | None = None
    retention: str | None = None
    subject: str = ""
    predicate: str = ""
    structured_data: dict | None = None
    confidence: float = 1.0
    observed_at: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class MemoryDraft(MemoryContent):
    """The writable fields of a memory not yet stored: text normalised, retention settled."""

    agent: str = ""
    source: str = Source.AGENT_WRITE
    pinned: bool = False
    # None: active, unless moderation holds the text for review (memory_create decides).
    status: str | None = None
    expires_at: datetime | None = None
    # The text of an existing memory this one replaces, when the writer knows (an LLM extractor says so).
    replaces: str = ""

    def __post_init__(self):
        # Frozen: the settled values are written once, here, so every reader sees the same draft.
        object.__setattr__(self, "content", normalize(self.content))
        object.__setattr__(self, "retention", self.retention or scoring.default_retention(self.category))
        object.__setattr__(self, "structured_data", dict(self.structured_data or {}))
