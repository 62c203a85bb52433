from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from memories.api import views as memory_views
from memory_project import health
from sessions.api import views as session_views

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
    path("tools/", memory_views.ToolListApi.as_view(), name="tool-list"),
    path("tools/<str:name>/", memory_views.ToolExecuteApi.as_view(), name="tool-execute"),
]

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
]

handler404 = "memory_project.health.not_found"
handler500 = "memory_project.health.server_error"
