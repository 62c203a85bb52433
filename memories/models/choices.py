"""The choice sets of memory fields (categories, statuses, sources, relation and event types)."""

from django.db import models


class Category(models.TextChoices):
    PREFERENCE = "preference"
    FACT = "fact"
    PROJECT = "project"
    DECISION = "decision"
    WORKFLOW = "workflow"
    SKILL = "skill"
    ERROR = "error"
    RULE = "rule"
    TODO = "todo"


PROCEDURAL_CATEGORIES = (Category.SKILL, Category.ERROR, Category.RULE)


class Status(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"
    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    FORGOTTEN = "forgotten"


class Retention(models.TextChoices):
    TRANSIENT = "transient"
    SHORT = "short"
    LONG = "long"
    PERMANENT = "permanent"


class Source(models.TextChoices):
    USER_EXPLICIT = "user_explicit"
    EXTRACTION = "extraction"
    AGENT_WRITE = "agent_write"
    IMPORT = "import"
    CONSOLIDATION = "consolidation"


class RelationType(models.TextChoices):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    REFINES = "refines"
    SUPERSEDES = "supersedes"
    RELATED = "related"


class EntityKind(models.TextChoices):
    PERSON = "person"
    PLACE = "place"
    ORGANIZATION = "organization"
    PROJECT = "project"
    TOOL = "tool"
    OTHER = "other"


class EventType(models.TextChoices):
    ADD = "add"
    UPDATE = "update"
    MERGE = "merge"
    REINFORCE = "reinforce"
    DECAY = "decay"
    ARCHIVE = "archive"
    RESTORE = "restore"
    FORGET = "forget"
    MODERATE = "moderate"
    REVERT = "revert"
    PIN = "pin"
    UNPIN = "unpin"
    CONTRADICT = "contradict"
    SUPERSEDE = "supersede"
    IMPORT = "import"
    EXPIRE = "expire"
    DEMOTE = "demote"


class SearchCorpus(models.TextChoices):
    MEMORY = "memory"
    TURN = "turn"
