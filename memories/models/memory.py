"""A memory, where it came from, how it relates to others, and its history."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from memories.models.choices import (
    Category,
    EventType,
    RelationType,
    Retention,
    Source,
    Status,
)
from memory_project.models import UUIDModel
from memory_project.search_fields import embedding_index, search_vector_field
from memory_project.text import cjk_ngrams, content_hash


class Memory(UUIDModel):
    """A long-term semantic or procedural memory of one owner."""

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

    def text_keys_set(self) -> None:
        """What follows from the text, set wherever content or subject is written: the hash exact
        duplicates are found by, and the CJK n-grams of subject and content full-text search reads."""
        self.content_hash = content_hash(self.content)
        self.search_ngrams = cjk_ngrams(f"{self.subject} {self.content}")


class MemorySource(models.Model):
    """Provenance: one conversation turn a memory came from."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="sources")
    turn = models.ForeignKey("chat_sessions.ConversationTurn", on_delete=models.CASCADE, related_name="memory_links")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "turn"], name="memorysource_unique")]
        ordering = ["position"]


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
