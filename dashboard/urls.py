from django.urls import include, path

from dashboard import views, views_analytics, views_core, views_eval, views_import, views_settings
from dashboard.endpoints import chat, context, core, graph, live, memories, operate, settings

app_name = "dashboard"

# JSON for the pages' scripts, under /dashboard/api/.
api_patterns = [
    path("overview/", memories.OverviewApi.as_view(), name="api-overview"),
    path("memories/", memories.MemoryBrowseApi.as_view(), name="api-memories"),
    path("memories/bulk/", memories.MemoryBulkApi.as_view(), name="api-memory-bulk"),
    path("memories/<uuid:memory_id>/", memories.MemoryApi.as_view(), name="api-memory"),
    path("memories/<uuid:memory_id>/action/", memories.MemoryActionApi.as_view(), name="api-memory-action"),
    path("memories/<uuid:memory_id>/revert/", memories.MemoryRevertApi.as_view(), name="api-memory-revert"),
    path("graph/", graph.GraphApi.as_view(), name="api-graph"),
    path("export/", operate.ExportDownloadApi.as_view(), name="api-export"),
    path("lifecycle/run/", operate.LifecycleRunNowApi.as_view(), name="api-lifecycle-run"),
    path("graph/entities/", graph.GraphEntitiesApi.as_view(), name="api-graph-entities"),
    path("strength-distribution/", memories.StrengthDistributionApi.as_view(), name="api-strength-distribution"),
    path("chat/send/", chat.ChatSendApi.as_view(), name="api-chat-send"),
    path("chat/end/", chat.ChatEndApi.as_view(), name="api-chat-end"),
    path("chat/<uuid:session_id>/extracted/", chat.ChatExtractedApi.as_view(), name="api-chat-extracted"),
    path("pending-count/", live.PendingCountApi.as_view(), name="api-pending-count"),
    path("events/recent/", live.RecentEventsApi.as_view(), name="api-events-recent"),
    path("context/", context.ContextPreviewApi.as_view(), name="api-context"),
    path("keys/", settings.ApiKeyListApi.as_view(), name="api-keys"),
    path("keys/<int:key_id>/revoke/", settings.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
    path("webhooks/", settings.WebhookListApi.as_view(), name="api-webhooks"),
    path("webhooks/<uuid:webhook_id>/", settings.WebhookDetailApi.as_view(), name="api-webhook"),
    path("core/", core.CoreMemoryApi.as_view(), name="api-core"),
    path("core/rolling-summary/", core.RollingSummaryApi.as_view(), name="api-core-summary"),
    path("core/scratchpad/", core.ScratchpadApi.as_view(), name="api-core-scratchpad"),
    path("core/<str:view>/", core.MarkdownViewApi.as_view(), name="api-core-markdown"),
]

urlpatterns = [
    path("", views.overview, name="overview"),
    path("memories/", views.memory_browser, name="memories"),
    path("memories/<uuid:memory_id>/", views.memory_detail, name="memory"),
    path("memories/<uuid:memory_id>/edit/", views.memory_detail_edit, name="memory-edit"),
    path("memories/<uuid:memory_id>/action/", views.memory_detail_action, name="memory-action"),
    path("memories/<uuid:memory_id>/revert/", views.memory_detail_revert, name="memory-revert"),
    path("decay/", views.decay, name="decay"),
    path("graph/", views.graph, name="graph"),
    path("sessions/", views.sessions, name="sessions"),
    path("sessions/<uuid:session_id>/", views.session_detail, name="session"),
    path("moderation/", views.moderation, name="moderation"),
    path("chat/", views.chat, name="chat"),
    path("live/", views.live, name="live"),
    path("core/", views_core.core, name="core"),
    path("context/", views_core.context_window, name="context"),
    path("analytics/", views_analytics.analytics, name="analytics"),
    path("settings/", views_settings.settings_home, name="settings"),
    path("settings/keys/", views_settings.api_keys, name="settings-keys"),
    path("settings/webhooks/", views_settings.webhooks, name="settings-webhooks"),
    path("settings/webhooks/<uuid:webhook_id>/", views_settings.webhook_deliveries, name="settings-webhook"),
    path("settings/agents/", views_settings.agents, name="settings-agents"),
    path("import/", views_import.import_page, name="import"),
    path("evaluate/", views_eval.evaluate, name="eval"),
    path("dashboard/api/", include(api_patterns)),
]
