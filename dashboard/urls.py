from django.urls import path

from dashboard import views, views_analytics, views_core, views_eval, views_import, views_settings
from dashboard.endpoints import chat, context, core, graph, live, memories, operate, settings

app_name = "dashboard"

api_patterns = [
    path("dashboard/api/overview/", memories.OverviewApi.as_view(), name="api-overview"),
    path("dashboard/api/memories/", memories.MemoryBrowseApi.as_view(), name="api-memories"),
    path("dashboard/api/memories/bulk/", memories.MemoryBulkApi.as_view(), name="api-memory-bulk"),
    path("dashboard/api/memories/<uuid:memory_id>/", memories.MemoryApi.as_view(), name="api-memory"),
    path(
        "dashboard/api/memories/<uuid:memory_id>/action/", memories.MemoryActionApi.as_view(), name="api-memory-action"
    ),
    path(
        "dashboard/api/memories/<uuid:memory_id>/revert/", memories.MemoryRevertApi.as_view(), name="api-memory-revert"
    ),
    path("dashboard/api/graph/", graph.GraphApi.as_view(), name="api-graph"),
    path("dashboard/api/export/", operate.ExportDownloadApi.as_view(), name="api-export"),
    path("dashboard/api/lifecycle/run/", operate.LifecycleRunNowApi.as_view(), name="api-lifecycle-run"),
    path("dashboard/api/graph/entities/", graph.GraphEntitiesApi.as_view(), name="api-graph-entities"),
    path(
        "dashboard/api/strength-distribution/",
        memories.StrengthDistributionApi.as_view(),
        name="api-strength-distribution",
    ),
    path("dashboard/api/chat/send/", chat.ChatSendApi.as_view(), name="api-chat-send"),
    path("dashboard/api/chat/end/", chat.ChatEndApi.as_view(), name="api-chat-end"),
    path("dashboard/api/chat/<uuid:session_id>/extracted/", chat.ChatExtractedApi.as_view(), name="api-chat-extracted"),
    path("dashboard/api/pending-count/", live.PendingCountApi.as_view(), name="api-pending-count"),
    path("dashboard/api/events/recent/", live.RecentEventsApi.as_view(), name="api-events-recent"),
    path("dashboard/api/context/", context.ContextPreviewApi.as_view(), name="api-context"),
    path("dashboard/api/keys/", settings.ApiKeyListApi.as_view(), name="api-keys"),
    path("dashboard/api/keys/<int:key_id>/revoke/", settings.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
    path("dashboard/api/webhooks/", settings.WebhookListApi.as_view(), name="api-webhooks"),
    path("dashboard/api/webhooks/<uuid:webhook_id>/", settings.WebhookDetailApi.as_view(), name="api-webhook"),
    path("dashboard/api/core/", core.CoreMemoryApi.as_view(), name="api-core"),
    path("dashboard/api/core/rolling-summary/", core.RollingSummaryApi.as_view(), name="api-core-summary"),
    path("dashboard/api/core/scratchpad/", core.ScratchpadApi.as_view(), name="api-core-scratchpad"),
    path("dashboard/api/core/<str:view>/", core.MarkdownViewApi.as_view(), name="api-core-markdown"),
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
    *api_patterns,
]
