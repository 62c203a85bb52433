"""Admin parts the apps share."""

from django.contrib import admin


class RecordInline(admin.TabularInline):
    """Rows a parent keeps as its record (history, turns, deliveries): listed on its page, never
    added, edited or deleted there, since each is written by the code that did what it records."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None):
        return False
