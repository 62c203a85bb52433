from django.contrib import admin

from memory_project.admin import RecordInline
from sessions.models import ChatSession, ConversationTurn, Episode, Scratchpad

# ExtractionJob's admin is in memories.admin, beside the pipeline that runs the jobs.


class TurnInline(RecordInline):
    model = ConversationTurn
    fields = ("sequence", "role", "speaker", "content", "created_at")
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
