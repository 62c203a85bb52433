"""The groups' part of /api/v1/, included by web/urls.py."""

from django.urls import path

from memory_groups import api

urlpatterns = [
    path("groups/", api.GroupListCreateApi.as_view(), name="group-list"),
    path("groups/<uuid:group_id>/", api.GroupDetailApi.as_view(), name="group-detail"),
    path("groups/<uuid:group_id>/assign/", api.GroupAssignApi.as_view(), name="group-assign"),
    path("groups/<uuid:group_id>/unassign/", api.GroupUnassignApi.as_view(), name="group-unassign"),
]
