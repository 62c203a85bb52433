from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import VectorField

from memory_project.jobs import JobStatus
from memory_project.models import UUIDModel
from memory_project.search_fields import embedding_index, search_vector_field
from sessions.choices import Channel, Role


class ChatSession(UUIDModel):
    """One conversation of an owner with an agent on a channel."""

    class SessionStatus(models.TextChoices):
        OPEN = "open"
        ENDED = "ended"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_sessions")
    agent = models.CharField(max_length=100, blank=True, default="")
    channel = models.CharField(max_length=20, choices=Channel.choices, default=Channel.API)
    external_id = models.CharField(max_length=200, blank=True, default="")
    title = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=10, choices=SessionStatus.choices, default=SessionStatus.OPEN)
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    turn_count = models.PositiveIntegerField(default=0)
    rolling_summary = models.TextField(blank=True, default="")
    summarized_through = models.PositiveIntegerField(default=0)
    # Estimated tokens of the turns after summarized_through, kept with turn_count under the row lock
    # so the compaction check on every turn post reads the row, not the turns.
    unsummarized_tokens = models.PositiveIntegerField(default=0, db_default=0)
    turn_extractions = models.PositiveSmallIntegerField(default=0)
    memories_extracted = models.PositiveIntegerField(default=0)
    consolidated = models.BooleanField(default=False)
    consolidated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(name="session_owner_activity", fields=["owner", "-last_activity_at"]),
            models.Index(name="session_status_activity", fields=["status", "last_activity_at"]),
            models.Index(name="session_owner_external", fields=["owner", "channel", "external_id"]),
        ]
        constraints = [
            models.CheckConstraint(name="session_status_valid", condition=Q(status__in=["open", "ended"])),
        ]

    def __str__(self):
        return self.title or str(self.id)


class ConversationTurn(UUIDModel):
    """One message of a session, stored as sent (timestamp and metadata included)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="turns")
    sequence = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    speaker = models.CharField(max_length=100, blank=True, default="")
    content = models.TextField()
    tool_name = models.CharField(max_length=100, blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True)
    tool_error = models.TextField(blank=True, default="")
    token_count = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    embedding = VectorField(dimensions=settings.EMBEDDING_DIM, null=True, blank=True)
    search_ngrams = models.TextField(blank=True, default="")
    search_vector = search_vector_field("speaker", "content")
    created_at = models.DateTimeField(default=timezone.now)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "sequence"]
        indexes = [
            embedding_index("turn_embedding_hnsw"),
            models.Index(name="turn_owner_created", fields=["owner", "-created_at"]),
            # The queue of turns still waiting for their vector (memories.services.turn_embeddings).
            models.Index(name="turn_unembedded", fields=["received_at"], condition=Q(embedding__isnull=True)),
        ]
        constraints = [
            models.UniqueConstraint(fields=["session", "sequence"], name="turn_unique_sequence"),
            models.CheckConstraint(name="turn_role_valid", condition=Q(role__in=Role.values)),
        ]

    def __str__(self):
        return f"{self.role}: {self.content[:60]}"


class Episode(UUIDModel):
    """The summary of one ended session: goal, outcome, entities, tools, time span."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="episodes")
    session = models.OneToOneField(ChatSession, on_delete=models.CASCADE, related_name="episode")
    agent = models.CharField(max_length=100, blank=True, default="")
    summary = models.TextField()
    goal = models.TextField(blank=True, default="")
    outcome = models.TextField(blank=True, default="")
    entities = models.JSONField(default=list, blank=True)
    tools_used = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    embedding = VectorField(dimensions=settings.EMBEDDING_DIM, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(name="episode_owner_time", fields=["owner", "-ended_at"])]


class Scratchpad(models.Model):
    """Working memory per owner and agent: current focus, active projects, recent completions."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scratchpads")
    agent = models.CharField(max_length=100, blank=True, default="")
    current_focus = models.TextField(blank=True, default="")
    active_projects = models.JSONField(default=list, blank=True)
    recent_completions = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "agent"], name="scratchpad_unique")]


class ExtractionJob(UUIDModel):
    """Durable queue row: the extraction work a session owes, written with the turns that cause it."""

    class Kind(models.TextChoices):
        TURN = "turn"
        SESSION_END = "session_end"
        COMPACTION = "compaction"
        MANUAL = "manual"

    JobStatus = JobStatus

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="extraction_jobs")
    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="extraction_jobs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    range_start = models.PositiveIntegerField(default=0)
    range_end = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    max_attempts = models.PositiveSmallIntegerField(default=5)
    last_error = models.TextField(blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(name="job_status_updated", fields=["status", "updated_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "kind", "range_start", "range_end"], name="extractionjob_unique_range"
            ),
            models.CheckConstraint(name="job_range_ordered", condition=Q(range_end__gte=models.F("range_start"))),
        ]
