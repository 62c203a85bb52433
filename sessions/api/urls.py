"""The sessions app's part of /api/v1/, included by web/urls.py."""

from django.urls import include, path

from sessions.api import views

# A session's own routes, under sessions/<id>/.
session_patterns = [
    path("", views.SessionDetailApi.as_view(), name="session-detail"),
    path("turns/", views.TurnListCreateApi.as_view(), name="session-turns"),
    path("end/", views.SessionEndApi.as_view(), name="session-end"),
]

urlpatterns = [
    path("sessions/", views.SessionListCreateApi.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", include(session_patterns)),
    path("episodes/", views.EpisodeListApi.as_view(), name="episode-list"),
    path("scratchpad/", views.ScratchpadApi.as_view(), name="scratchpad"),
]
