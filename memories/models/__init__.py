"""The memories app's models, one module per concern (issue 15), all importable from here."""

from memories.models.accounts import ApiKey, EventRule
from memories.models.choices import (
    PROCEDURAL_CATEGORIES,
    Category,
    EntityKind,
    EventType,
    RelationType,
    Retention,
    SearchCorpus,
    Source,
    Status,
)
from memories.models.entities import Entity, MemoryEntity
from memories.models.imports import ImportedEntry, ImportJob
from memories.models.lifecycle import CoreMemory, DailyDigest, LifecycleRun
from memories.models.memory import Memory, MemoryEvent, MemoryRelation, MemorySource
from memories.models.search import EmbeddingCache, LexemeFrequency, SearchPosting, SearchStats

__all__ = [
    "ApiKey",
    "Category",
    "CoreMemory",
    "DailyDigest",
    "EmbeddingCache",
    "Entity",
    "EntityKind",
    "EventRule",
    "EventType",
    "ImportJob",
    "ImportedEntry",
    "LexemeFrequency",
    "LifecycleRun",
    "Memory",
    "MemoryEntity",
    "MemoryEvent",
    "MemoryRelation",
    "MemorySource",
    "PROCEDURAL_CATEGORIES",
    "RelationType",
    "Retention",
    "SearchCorpus",
    "SearchPosting",
    "SearchStats",
    "Source",
    "Status",
]
