"""The erasure app's part of /api/v1/, included by web/urls.py."""

from django.urls import path

from erasure import api

urlpatterns = [
    path("data/", api.OwnerDataApi.as_view(), name="owner-data"),
    path("erasure/receipts/", api.ErasureReceiptListApi.as_view(), name="erasure-receipts"),
    path("erasure/receipts/<uuid:receipt_id>/", api.ErasureReceiptDetailApi.as_view(), name="erasure-receipt"),
]
