from django.urls import path

from integrations import views

app_name = "integrations"

urlpatterns = [
    path("telegram/webhook/", views.telegram_webhook, name="telegram-webhook"),
    path("telegram/link-code/", views.telegram_link_code, name="telegram-link-code"),
]
