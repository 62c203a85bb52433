import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from memory_project.search_fields import embedding_index, search_vector_field


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


class ApiKey(models.Model):
    """An API key of one owner; only its SHA-256 digest is stored."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.prefix}… ({self.owner})"


class Memory(models.Model):
    """A long-term semantic or procedural memory of one owner."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    agent = models.CharField(max_length=100, blank=True, default="")
    content = models.TextField()
    content_hash = models.CharField(max_length=64, db_index=True)
    category = models.CharField(max_length=20, choices=Category.choices, default=Category.FACT)
    subject = models.CharField(max_length=200, blank=True, default="")
    predicate = models.CharField(max_length=200, blank=True, default="")
    structured_data = models.JSONField(default=dict, blank=True)
    embedding = VectorField(dimensions=settings.EMBEDDING_DIM, null=True, blank=True)
    search_ngrams = models.TextField(blank=True, default="")
    search_vector = search_vector_field("subject", "content")
    importance = models.FloatField(default=0.6)
    strength = models.FloatField(default=0.6)
    # Strength right after the last reinforcement; decay is recomputed from it, so a lifecycle
    # run repeated on the same day gives the same strength instead of compounding.
    base_strength = models.FloatField(default=0.6)
    confidence = models.FloatField(default=1.0)
    retention = models.CharField(max_length=20, choices=Retention.choices, default=Retention.LONG)
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    pinned = models.BooleanField(default=False)
    review_reason = models.CharField(max_length=200, blank=True, default="")
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    hit_count = models.PositiveIntegerField(default=0)
    last_reinforced_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.AGENT_WRITE)
    source_session = models.ForeignKey(
        "chat_sessions.ChatSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    source_turns = models.ManyToManyField(
        "chat_sessions.ConversationTurn", through="MemorySource", related_name="memories", blank=True
    )
    observed_at = models.DateTimeField()
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "memories"
        indexes = [
            embedding_index("memory_embedding_hnsw"),
            # No index may contain `strength`: the nightly decay rewrites it on every memory, and an
            # update that changes no indexed column is a HOT update (no new entry in any index,
            # the HNSW one included). Migration 0004 also leaves room on each page for that.
            models.Index(name="memory_owner_status", fields=["owner", "status"]),
            models.Index(name="memory_owner_category", fields=["owner", "category"]),
            models.Index(name="memory_owner_updated", fields=["owner", "-updated_at"]),
            models.Index(name="memory_owner_hash", fields=["owner", "agent", "content_hash"]),
        ]
        constraints = [
            models.CheckConstraint(name="memory_importance_range", condition=Q(importance__gte=0, importance__lte=1)),
            models.CheckConstraint(name="memory_strength_range", condition=Q(strength__gte=0, strength__lte=1)),
            models.CheckConstraint(name="memory_confidence_range", condition=Q(confidence__gte=0, confidence__lte=1)),
            models.CheckConstraint(name="memory_category_valid", condition=Q(category__in=Category.values)),
            models.CheckConstraint(name="memory_status_valid", condition=Q(status__in=Status.values)),
            models.CheckConstraint(name="memory_retention_valid", condition=Q(retention__in=Retention.values)),
        ]

    def __str__(self):
        return self.content[:80]


class MemorySource(models.Model):
    """Provenance: one conversation turn a memory came from."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="sources")
    turn = models.ForeignKey("chat_sessions.ConversationTurn", on_delete=models.CASCADE, related_name="memory_links")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "turn"], name="memorysource_unique")]
        ordering = ["position"]


class RelationType(models.TextChoices):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    REFINES = "refines"
    SUPERSEDES = "supersedes"
    RELATED = "related"


class MemoryRelation(models.Model):
    """A typed edge between two memories of the same owner."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="relations_out")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="relations_in")
    type = models.CharField(max_length=20, choices=RelationType.choices)
    weight = models.FloatField(default=1.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "type"], name="memoryrelation_unique"),
            models.CheckConstraint(name="memoryrelation_not_self", condition=~Q(source=models.F("target"))),
        ]


class EntityKind(models.TextChoices):
    PERSON = "person"
    PLACE = "place"
    ORGANIZATION = "organization"
    PROJECT = "project"
    TOOL = "tool"
    OTHER = "other"


class Entity(models.Model):
    """A person, place, organisation, project or tool that memories mention."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    normalized_name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=EntityKind.choices, default=EntityKind.OTHER)
    memories = models.ManyToManyField(Memory, through="MemoryEntity", related_name="entities")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["owner", "normalized_name", "kind"], name="entity_unique_per_owner")
        ]

    def __str__(self):
        return self.name


class MemoryEntity(models.Model):
    """Link between a memory and an entity it mentions."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="entity_links")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="memory_links")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "entity"], name="memoryentity_unique")]


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


class MemoryEvent(models.Model):
    """Append-only history row: one change to one memory, with before/after and actor."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="events")
    event_type = models.CharField(max_length=20, choices=EventType.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    actor = models.CharField(max_length=200, default="system")
    reason = models.CharField(max_length=500, blank=True, default="")
    session = models.ForeignKey(
        "chat_sessions.ChatSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(name="memoryevent_memory_time", fields=["memory", "created_at"])]


class CoreMemory(models.Model):
    """Per owner and agent: MEMORY.md essence, USER.md profile, learnings and rolling summary."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="core_memories")
    agent = models.CharField(max_length=100, blank=True, default="")
    memory_md = models.TextField(blank=True, default="")
    user_md = models.TextField(blank=True, default="")
    learnings_md = models.TextField(blank=True, default="")
    rolling_summary = models.TextField(blank=True, default="")
    generated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "core memories"
        constraints = [models.UniqueConstraint(fields=["owner", "agent"], name="corememory_unique")]


class DailyDigest(models.Model):
    """Per owner and day: what happened; summarised after 30 days, raw entries dropped after 60."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="daily_digests")
    agent = models.CharField(max_length=100, blank=True, default="")
    day = models.DateField()
    entries = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True, default="")
    summarized_at = models.DateTimeField(null=True, blank=True)
    entries_purged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "agent", "day"], name="dailydigest_unique")]


class EventRule(models.Model):
    """Seed 003 §11 rule: when an event matches the conditions, run the action. Owner null = every owner."""

    class Action(models.TextChoices):
        CONSOLIDATE = "consolidate"
        NOTIFY = "notify"
        FLAG = "flag"

    class Match(models.TextChoices):
        ALL = "all"
        ANY = "any"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="event_rules"
    )
    name = models.CharField(max_length=100)
    event_type = models.CharField(max_length=50)
    match = models.CharField(max_length=3, choices=Match.choices, default=Match.ALL)
    conditions = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class LifecycleRun(models.Model):
    """One run of the lifecycle for one owner: steps, counts, duration, errors."""

    class RunStatus(models.TextChoices):
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lifecycle_runs")
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    trigger = models.CharField(max_length=20, default="manual")
    steps = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(name="lifecyclerun_owner_time", fields=["owner", "-started_at"])]


class ImportJob(models.Model):
    """An import too large to run in its request: the uploaded text, its progress and its report."""

    class JobStatus(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs")
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    format = models.CharField(max_length=20, blank=True, default="")
    name = models.CharField(max_length=255, blank=True, default="")
    agent = models.CharField(max_length=100, null=True, blank=True)
    # "merge" or "restore"; blank: restore a JSONL export whose lines all carry their id, merge otherwise.
    mode = models.CharField(max_length=10, blank=True, default="")
    actor = models.CharField(max_length=200)
    # The file itself until the job has run; emptied afterwards (the memories hold what it said).
    text = models.TextField(blank=True, default="")
    size = models.PositiveBigIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # Entries refused by validation: [{line, field, message}], nothing was imported.
    problems = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(name="importjob_owner_created", fields=["owner", "-created_at"]),
            models.Index(name="importjob_status", fields=["status", "heartbeat_at"]),
        ]


class ImportedEntry(models.Model):
    """An imported entry and the memory it became or matched: importing it again changes nothing."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    agent = models.CharField(max_length=100, blank=True, default="")
    # The entry's content hash (merge imports), or "id:<uuid>" of a restored JSONL row.
    key = models.CharField(max_length=80)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="imported_entries")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "agent", "key"], name="importedentry_unique")]


class EmbeddingCache(models.Model):
    """One owner's embedding of one text under one model, keyed by the hash of the three."""

    key = models.CharField(max_length=64, primary_key=True)
    # Scoped by owner so that no owner can tell what another has embedded (memories/services/embeddings.py).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    vector = VectorField(dimensions=settings.EMBEDDING_DIM)
    created_at = models.DateTimeField(auto_now_add=True)


class SearchCorpus(models.TextChoices):
    MEMORY = "memory"
    TURN = "turn"


class SearchStats(models.Model):
    """An owner's BM25 collection statistics for memories or turns, as of the last refresh."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    documents = models.PositiveIntegerField()
    average_length = models.FloatField()
    refreshed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "corpus"], name="searchstats_unique")]


class LexemeFrequency(models.Model):
    """How many of an owner's memories (or turns) contain a lexeme, as of the last statistics refresh."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    lexeme = models.TextField()
    documents = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "corpus", "lexeme"], name="lexemefrequency_unique")]


class SearchPosting(models.Model):
    """One lexeme of one searchable memory or turn: the inverted index BM25 reads, kept by triggers.

    Database triggers (migration 0005) write a row per lexeme when a memory or turn is stored, and
    rewrite them when its text changes or a memory enters or leaves the searchable statuses
    (active, archived); nothing in Python writes here. Search scores BM25 from an index-only scan
    of these rows instead of reading every matching memory's tsvector from the heap.
    """

    pk = models.CompositePrimaryKey("corpus", "document_id", "lexeme")
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    document_id = models.UUIDField()
    lexeme = models.TextField()
    # The triggers keep these rows; deleting an owner deletes their memories and turns, which
    # deletes these through the same triggers.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    frequency = models.PositiveSmallIntegerField()
    document_length = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(
                name="posting_owner_lexeme",
                fields=["owner", "corpus", "lexeme"],
                include=["document_id", "frequency", "document_length"],
            )
        ]
