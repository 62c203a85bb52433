from django.contrib import admin, messages

from memories.models import (
    ApiKey,
    CoreMemory,
    DailyDigest,
    EmbeddingCache,
    Entity,
    EventRule,
    LifecycleRun,
    Memory,
    MemoryEntity,
    MemoryEvent,
    MemoryRelation,
    MemorySource,
)
from memories.services.actions import memory_archive, memory_change, memory_forget, memory_moderate, memory_restore
from memories.services.api_keys import api_key_revoke
from memories.services.extraction_jobs import extraction_jobs_retry
from memories.services.memories import EDITABLE_FIELDS
from memory_project.admin import RecordInline
from sessions.models import ExtractionJob


class MemorySourceInline(admin.TabularInline):
    model = MemorySource
    extra = 0
    raw_id_fields = ("turn",)
    fields = ("turn", "position")


class MemoryEventInline(RecordInline):
    model = MemoryEvent
    fields = ("created_at", "event_type", "actor", "reason", "before", "after")


def _actor(request) -> str:
    return f"admin:{request.user.username}"


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = (
        "short_content",
        "owner",
        "agent",
        "category",
        "status",
        "importance",
        "strength",
        "pinned",
        "source",
        "observed_at",
        "updated_at",
    )
    list_filter = ("status", "category", "source", "retention", "pinned", "agent")
    search_fields = ("content", "subject", "owner__username")
    raw_id_fields = ("owner", "source_session")
    readonly_fields = ("id", "content_hash", "created_at", "updated_at", "version", "search_ngrams")
    exclude = ("embedding",)
    inlines = [MemorySourceInline, MemoryEventInline]
    actions = ["approve", "reject", "archive", "restore", "forget"]
    list_select_related = ("owner",)
    show_full_result_count = False

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:100]

    def save_model(self, request, obj, form, change):
        if not change:
            return super().save_model(request, obj, form, change)
        changes = {f: form.cleaned_data[f] for f in form.changed_data if f in EDITABLE_FIELDS}
        if changes:
            memory_change(memory=Memory.objects.get(pk=obj.pk), actor=_actor(request), changes=changes, moderator=True)

    # The admin is staff only: every action here is a moderator's. Each writes the event of its
    # action (memories.services.actions), as the dashboard and the API do.
    @admin.action(description="Approve (moderation)")
    def approve(self, request, queryset):
        for memory in queryset:
            memory_moderate(memory=memory, actor=_actor(request), approve=True, moderator=True)
        messages.success(request, "Approved.")

    @admin.action(description="Reject (moderation)")
    def reject(self, request, queryset):
        for memory in queryset:
            memory_moderate(memory=memory, actor=_actor(request), approve=False, moderator=True)

    @admin.action(description="Archive")
    def archive(self, request, queryset):
        for memory in queryset:
            memory_archive(memory=memory, actor=_actor(request), reason="archived by admin", moderator=True)

    @admin.action(description="Restore")
    def restore(self, request, queryset):
        for memory in queryset:
            memory_restore(memory=memory, actor=_actor(request), reason="restored by admin", moderator=True)

    @admin.action(description="Forget")
    def forget(self, request, queryset):
        for memory in queryset:
            memory_forget(memory=memory, actor=_actor(request), reason="forgotten by admin")


@admin.register(MemoryEvent)
class MemoryEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "event_type", "memory", "owner", "actor", "reason")
    list_filter = ("event_type",)
    search_fields = ("actor", "reason", "memory__content", "owner__username")
    raw_id_fields = ("memory", "owner", "session")
    list_select_related = ("memory", "owner")

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(MemoryRelation)
class MemoryRelationAdmin(admin.ModelAdmin):
    list_display = ("source", "type", "target", "weight", "owner", "created_at")
    list_filter = ("type",)
    search_fields = ("source__content", "target__content", "owner__username")
    raw_id_fields = ("source", "target", "owner")


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "owner", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "owner__username")
    raw_id_fields = ("owner",)


@admin.register(MemoryEntity)
class MemoryEntityAdmin(admin.ModelAdmin):
    list_display = ("memory", "entity", "owner")
    search_fields = ("entity__name", "memory__content")
    raw_id_fields = ("memory", "entity", "owner")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "owner", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("prefix", "name", "owner__username")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    raw_id_fields = ("owner",)
    actions = ["revoke"]

    @admin.action(description="Revoke (closes its open WebSockets)")
    def revoke(self, request, queryset):
        for key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(key=key)
        messages.success(request, "Revoked.")


@admin.register(CoreMemory)
class CoreMemoryAdmin(admin.ModelAdmin):
    list_display = ("owner", "agent", "generated_at", "updated_at")
    search_fields = ("owner__username", "memory_md", "user_md")
    raw_id_fields = ("owner",)


@admin.register(DailyDigest)
class DailyDigestAdmin(admin.ModelAdmin):
    list_display = ("day", "owner", "agent", "summarized_at", "entries_purged_at")
    list_filter = ("day",)
    search_fields = ("owner__username", "summary")
    raw_id_fields = ("owner",)


@admin.register(EventRule)
class EventRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "event_type", "action", "match", "enabled", "owner")
    list_filter = ("event_type", "action", "enabled")
    search_fields = ("name", "event_type")
    raw_id_fields = ("owner",)


@admin.register(LifecycleRun)
class LifecycleRunAdmin(admin.ModelAdmin):
    list_display = ("started_at", "owner", "status", "trigger", "duration_ms")
    list_filter = ("status", "trigger")
    search_fields = ("owner__username", "error")
    raw_id_fields = ("owner",)


@admin.register(EmbeddingCache)
class EmbeddingCacheAdmin(admin.ModelAdmin):
    list_display = ("key", "model", "created_at")
    list_filter = ("model",)
    search_fields = ("key",)
    exclude = ("vector",)


@admin.action(description="Retry (reset to pending)")
def retry_jobs(modeladmin, request, queryset):
    extraction_jobs_retry(jobs=queryset)


@admin.register(ExtractionJob)
class ExtractionJobAdmin(admin.ModelAdmin):
    """The extraction queue (sessions' ExtractionJob rows), beside the pipeline that runs it."""

    list_display = ("id", "owner", "session", "kind", "range_start", "range_end", "status", "attempts", "updated_at")
    list_filter = ("status", "kind")
    search_fields = ("id", "session__id", "owner__username", "last_error")
    raw_id_fields = ("owner", "session")
    readonly_fields = ("last_error", "result", "claimed_at", "finished_at")
    actions = [retry_jobs]
