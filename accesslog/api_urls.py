"""The access log's part of /api/v1/, included by web/urls.py."""

from django.urls import path

from accesslog import api

urlpatterns = [
    path("access-log/", api.AccessLogApi.as_view(), name="access-log"),
]
