"""The sessions app's part of /api/v1/, included by web/urls.py."""

from django.urls import path

from sessions.api import views

urlpatterns = [
    path("sessions/", views.SessionListCreateApi.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", views.SessionDetailApi.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/turns/", views.TurnListCreateApi.as_view(), name="session-turns"),
    path("sessions/<uuid:session_id>/end/", views.SessionEndApi.as_view(), name="session-end"),
    path("episodes/", views.EpisodeListApi.as_view(), name="episode-list"),
    path("scratchpad/", views.ScratchpadApi.as_view(), name="scratchpad"),
]
