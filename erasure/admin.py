from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.template.response import TemplateResponse

from erasure.models import ErasureReceipt
from erasure.services import owner_erase, receipt_verify


@admin.register(ErasureReceipt)
class ErasureReceiptAdmin(admin.ModelAdmin):
    list_display = ("erased_at", "owner_id", "agent", "account_deleted", "total", "requested_by", "verified")
    list_filter = ("account_deleted",)
    search_fields = ("=owner_id", "=id")
    readonly_fields = [f.name for f in ErasureReceipt._meta.fields]

    @admin.display(boolean=True)
    def verified(self, obj):
        return receipt_verify(obj)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.action(description="Erase all data of the selected owners (accounts kept)", permissions=["change"])
def erase_owner_data(modeladmin, request, queryset):
    if request.POST.get("confirmed") != "yes":
        return TemplateResponse(
            request,
            "admin/erasure/confirm.html",
            {
                **modeladmin.admin_site.each_context(request),
                "title": "Erase all data of these owners?",
                "owners": list(queryset),
                "action": "erase_owner_data",
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                "opts": modeladmin.model._meta,
            },
        )
    for owner in queryset:
        receipt, created = owner_erase(owner_id=owner.pk, requested_by=f"admin:{request.user.get_username()}")
        if created:
            modeladmin.message_user(
                request,
                f"Erased {receipt.total} rows, files and keys of {owner.get_username()} (receipt {receipt.pk}).",
            )
        else:
            modeladmin.message_user(
                request, f"Nothing left to erase for {owner.get_username()} (receipt {receipt.pk}).", messages.WARNING
            )
    return None


User = get_user_model()
_registered = admin.site._registry.get(User)
if _registered is not None:
    # Keeps whatever user admin is installed (Django's by default) and adds the erasure action.
    admin.site.unregister(User)
    _base = type(_registered)
else:
    _base = UserAdmin


class ErasingUserAdmin(_base):
    actions = [*(getattr(_base, "actions", None) or []), erase_owner_data]


admin.site.register(User, ErasingUserAdmin)
