from django.contrib import admin

from sessions.models import ChatSession, ConversationTurn, Episode, ExtractionJob, Scratchpad


class TurnInline(admin.TabularInline):
    model = ConversationTurn
    extra = 0
    fields = ("sequence", "role", "speaker", "content", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(ChatSession)
class ChatSessionAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "agent", "channel", "status", "turn_count", "consolidated", "last_activity_at")
    list_filter = ("status", "channel", "consolidated")
    search_fields = ("id", "title", "external_id", "owner__username")
    raw_id_fields = ("owner",)
    inlines = [TurnInline]


@admin.register(ConversationTurn)
class ConversationTurnAdmin(admin.ModelAdmin):
    list_display = ("session", "sequence", "role", "speaker", "short_content", "created_at")
    list_filter = ("role",)
    search_fields = ("content", "speaker", "owner__username")
    raw_id_fields = ("owner", "session")
    exclude = ("embedding",)
    readonly_fields = ("search_ngrams",)
    list_select_related = ("session",)

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:100]


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ("session", "owner", "agent", "started_at", "ended_at")
    search_fields = ("summary", "goal", "owner__username")
    raw_id_fields = ("owner", "session")
    exclude = ("embedding",)


@admin.register(Scratchpad)
class ScratchpadAdmin(admin.ModelAdmin):
    list_display = ("owner", "agent", "current_focus", "updated_at")
    search_fields = ("owner__username", "current_focus")
    raw_id_fields = ("owner",)


@admin.action(description="Retry (reset to pending)")
def retry_jobs(modeladmin, request, queryset):
    from sessions.services.sessions import extraction_job_dispatch_on_commit

    for job in queryset.exclude(status=ExtractionJob.JobStatus.DONE):
        ExtractionJob.objects.filter(pk=job.pk).update(status=ExtractionJob.JobStatus.PENDING, attempts=0)
        extraction_job_dispatch_on_commit(job_id=job.pk)


@admin.register(ExtractionJob)
class ExtractionJobAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "session", "kind", "range_start", "range_end", "status", "attempts", "updated_at")
    list_filter = ("status", "kind")
    search_fields = ("id", "session__id", "owner__username", "last_error")
    raw_id_fields = ("owner", "session")
    readonly_fields = ("last_error", "result", "claimed_at", "finished_at")
    actions = [retry_jobs]
