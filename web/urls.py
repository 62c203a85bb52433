from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accesslog import api as accesslog_api
from attachments import api as attachments_api
from erasure import api as erasure_api
from integrations import api as webhooks_api
from memories.api import compat as compat_api
from memories.api import lifecycle as lifecycle_api
from memories.api import transfer as transfer_api
from memories.api import views as memory_views
from memory_groups import api as groups_api
from memory_project import health
from sessions.api import views as session_views

# Seed 004 §7's endpoints (its /api/memory/... paths under our prefix), slash optional as there:
# (its path's last segment, view, URL name).
COMPAT_ROUTES = [
    ("consolidate", compat_api.CompatConsolidateApi, "compat-consolidate"),
    ("archive", compat_api.CompatArchiveApi, "compat-archive"),
    ("procedural", compat_api.CompatProceduralApi, "compat-procedural"),
    ("rolling-summary", compat_api.CompatRollingSummaryApi, "compat-summary"),
    ("entries", compat_api.CompatEntriesApi, "compat-entries"),
    ("search", compat_api.CompatSearchApi, "compat-search"),
]

api_v1 = [
    path("sessions/", session_views.SessionListCreateApi.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", session_views.SessionDetailApi.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/turns/", session_views.TurnListCreateApi.as_view(), name="session-turns"),
    path("sessions/<uuid:session_id>/end/", session_views.SessionEndApi.as_view(), name="session-end"),
    path("memories/", memory_views.MemoryListCreateApi.as_view(), name="memory-list"),
    path("memories/<uuid:memory_id>/", memory_views.MemoryDetailApi.as_view(), name="memory-detail"),
    path("memories/<uuid:memory_id>/history/", memory_views.MemoryHistoryApi.as_view(), name="memory-history"),
    path("search/", memory_views.SearchApi.as_view(), name="search"),
    path("context/", memory_views.ContextApi.as_view(), name="context"),
    path("episodes/", session_views.EpisodeListApi.as_view(), name="episode-list"),
    path("scratchpad/", session_views.ScratchpadApi.as_view(), name="scratchpad"),
    path("metrics/", memory_views.MetricsApi.as_view(), name="metrics"),
    path("access-log/", accesslog_api.AccessLogApi.as_view(), name="access-log"),
    path("tools/", memory_views.ToolListApi.as_view(), name="tool-list"),
    path("tools/<str:name>/", memory_views.ToolExecuteApi.as_view(), name="tool-execute"),
    path("lifecycle/run/", lifecycle_api.LifecycleRunApi.as_view(), name="lifecycle-run"),
    path("lifecycle/runs/", lifecycle_api.LifecycleRunListApi.as_view(), name="lifecycle-runs"),
    path("import/", transfer_api.ImportApi.as_view(), name="import"),
    path("import/jobs/", transfer_api.ImportJobListApi.as_view(), name="import-jobs"),
    path("import/jobs/<uuid:job_id>/", transfer_api.ImportJobDetailApi.as_view(), name="import-job"),
    path("export/", transfer_api.ExportApi.as_view(), name="export"),
    path("memory-md/", transfer_api.MemoryMdApi.as_view(), name="memory-md"),
    path("learnings-md/", transfer_api.LearningsMdApi.as_view(), name="learnings-md"),
    *(re_path(rf"^memory/{slug}/?$", view.as_view(), name=name) for slug, view, name in COMPAT_ROUTES),
    path("webhooks/", webhooks_api.WebhookListCreateApi.as_view(), name="webhook-list"),
    path("webhooks/<uuid:webhook_id>/", webhooks_api.WebhookDetailApi.as_view(), name="webhook-detail"),
    path(
        "webhooks/<uuid:webhook_id>/deliveries/",
        webhooks_api.WebhookDeliveryListApi.as_view(),
        name="webhook-deliveries",
    ),
    path("attachments/", attachments_api.AttachmentListApi.as_view(), name="attachment-list"),
    path("attachments/<uuid:attachment_id>/", attachments_api.AttachmentDetailApi.as_view(), name="attachment-detail"),
    path(
        "attachments/<uuid:attachment_id>/download/",
        attachments_api.AttachmentDownloadApi.as_view(),
        name="attachment-download",
    ),
    path("groups/", groups_api.GroupListCreateApi.as_view(), name="group-list"),
    path("groups/<uuid:group_id>/", groups_api.GroupDetailApi.as_view(), name="group-detail"),
    path("groups/<uuid:group_id>/assign/", groups_api.GroupAssignApi.as_view(), name="group-assign"),
    path("groups/<uuid:group_id>/unassign/", groups_api.GroupUnassignApi.as_view(), name="group-unassign"),
    path("data/", erasure_api.OwnerDataApi.as_view(), name="owner-data"),
    path("erasure/receipts/", erasure_api.ErasureReceiptListApi.as_view(), name="erasure-receipts"),
    path("erasure/receipts/<uuid:receipt_id>/", erasure_api.ErasureReceiptDetailApi.as_view(), name="erasure-receipt"),
]

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("integrations/", include("integrations.urls")),
    path("", include("dashboard.urls")),
]

handler400 = "memory_project.health.bad_request"
handler403 = "memory_project.health.permission_denied"
handler404 = "memory_project.health.not_found"
handler500 = "memory_project.health.server_error"
