"""The attachments app's part of /api/v1/, included by web/urls.py."""

from django.urls import path

from attachments import api

urlpatterns = [
    path("attachments/", api.AttachmentListApi.as_view(), name="attachment-list"),
    path("attachments/<uuid:attachment_id>/", api.AttachmentDetailApi.as_view(), name="attachment-detail"),
    path(
        "attachments/<uuid:attachment_id>/download/",
        api.AttachmentDownloadApi.as_view(),
        name="attachment-download",
    ),
]
