"""The memories app's part of /api/v1/, included by web/urls.py."""

from django.urls import include, path, re_path

from memories.api import compat, lifecycle, transfer, views

# Seed 004 §7's endpoints (its /api/memory/... paths under our prefix), slash optional as there:
# (its path's last segment, view, URL name).
COMPAT_ROUTES = [
    ("consolidate", compat.CompatConsolidateApi, "compat-consolidate"),
    ("archive", compat.CompatArchiveApi, "compat-archive"),
    ("procedural", compat.CompatProceduralApi, "compat-procedural"),
    ("rolling-summary", compat.CompatRollingSummaryApi, "compat-summary"),
    ("entries", compat.CompatEntriesApi, "compat-entries"),
    ("search", compat.CompatSearchApi, "compat-search"),
]

# A memory's own routes, under memories/<id>/.
memory_patterns = [
    path("", views.MemoryDetailApi.as_view(), name="memory-detail"),
    path("history/", views.MemoryHistoryApi.as_view(), name="memory-history"),
]

urlpatterns = [
    path("memories/<uuid:memory_id>/", include(memory_patterns)),
    path("memories/", views.MemoryListCreateApi.as_view(), name="memory-list"),
    path("search/", views.SearchApi.as_view(), name="search"),
    path("context/", views.ContextApi.as_view(), name="context"),
    path("metrics/", views.MetricsApi.as_view(), name="metrics"),
    path("tools/", views.ToolListApi.as_view(), name="tool-list"),
    path("tools/<str:name>/", views.ToolExecuteApi.as_view(), name="tool-execute"),
    path("lifecycle/run/", lifecycle.LifecycleRunApi.as_view(), name="lifecycle-run"),
    path("lifecycle/runs/", lifecycle.LifecycleRunListApi.as_view(), name="lifecycle-runs"),
    path("import/", transfer.ImportApi.as_view(), name="import"),
    path("import/jobs/", transfer.ImportJobListApi.as_view(), name="import-jobs"),
    path("import/jobs/<uuid:job_id>/", transfer.ImportJobDetailApi.as_view(), name="import-job"),
    path("export/", transfer.ExportApi.as_view(), name="export"),
    path("memory-md/", transfer.MemoryMdApi.as_view(), name="memory-md"),
    path("learnings-md/", transfer.LearningsMdApi.as_view(), name="learnings-md"),
    *(re_path(rf"^memory/{slug}/?$", view.as_view(), name=name) for slug, view, name in COMPAT_ROUTES),
]
