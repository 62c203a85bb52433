from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from memory_project import health

# Each app owns its part of /api/v1/ (URL names unchanged: no namespace).
api_v1 = [
    path("", include("sessions.api.urls")),
    path("", include("memories.api.urls")),
    path("", include("accesslog.api_urls")),
    path("", include("integrations.api_urls")),
    path("", include("attachments.api_urls")),
    path("", include("memory_groups.api_urls")),
    path("", include("erasure.api_urls")),
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
