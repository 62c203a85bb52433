from django.contrib import admin

from integrations.models import TelegramLink, TelegramLinkCode, TelegramUpdate, WebhookDelivery, WebhookSubscription
from memory_project.admin import RecordInline


@admin.register(TelegramLink)
class TelegramLinkAdmin(admin.ModelAdmin):
    list_display = ("telegram_user_id", "first_name", "telegram_username", "owner", "chat_id", "linked_at")
    list_filter = ("linked_at",)
    search_fields = ("owner__username", "first_name", "telegram_username", "=telegram_user_id", "=chat_id")
    raw_id_fields = ("owner", "pending_forget")
    list_select_related = ("owner",)


@admin.register(TelegramLinkCode)
class TelegramLinkCodeAdmin(admin.ModelAdmin):
    list_display = ("code", "owner", "created_at", "expires_at", "used_at", "used_by_telegram_user_id")
    list_filter = (("used_at", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("code", "owner__username")
    raw_id_fields = ("owner",)
    list_select_related = ("owner",)


@admin.register(TelegramUpdate)
class TelegramUpdateAdmin(admin.ModelAdmin):
    list_display = ("update_id", "status", "outcome", "attempts", "received_at", "processed_at")
    list_filter = ("status", "outcome")
    search_fields = ("=update_id",)
    readonly_fields = ("update_id", "received_at", "processed_at")


class WebhookDeliveryInline(RecordInline):
    model = WebhookDelivery
    fields = ("created_at", "event", "status", "attempts", "last_status_code", "last_error")
    ordering = ("-created_at",)
    show_change_link = True


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("url", "owner", "events", "active", "created_at")
    list_filter = ("active", "created_at")
    search_fields = ("url", "description", "owner__username")
    raw_id_fields = ("owner",)
    list_select_related = ("owner",)
    inlines = [WebhookDeliveryInline]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "event",
        "subscription",
        "status",
        "attempts",
        "last_status_code",
        "created_at",
        "delivered_at",
    )
    list_filter = ("status", "event", "created_at")
    search_fields = ("=id", "subscription__url", "subscription__owner__username")
    raw_id_fields = ("subscription",)
    readonly_fields = ("created_at", "delivered_at", "attempt_log")
    list_select_related = ("subscription",)
