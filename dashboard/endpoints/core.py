"""The core memory editor's endpoints: read everything, save one view with the version it was
loaded at (a stale version is a 409 in the one error shape, nothing saved)."""

from rest_framework import serializers
from rest_framework.response import Response

from dashboard.core_memory import (
    MARKDOWN_VIEWS,
    core_memory_get,
    markdown_apply,
    rolling_summary_save,
    scratchpad_save,
)
from dashboard.endpoints.base import DashboardApi
from memories.api.transfer import max_import_bytes
from memory_project.api.fields import CleanCharField, StrictSerializer
from memory_project.exceptions import ServiceError
from sessions.api.serializers import RecentCompletionSerializer


class AgentQuery(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")


class TextSave(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    content = CleanCharField(trim_whitespace=False, allow_blank=True)
    version = CleanCharField(max_length=100)


class SummarySave(TextSave):
    content = CleanCharField(trim_whitespace=False, allow_blank=True, max_length=100_000)


class ScratchpadSave(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    version = CleanCharField(max_length=100)
    current_focus = CleanCharField(max_length=2000, required=False, allow_blank=True)
    active_projects = serializers.ListField(child=CleanCharField(max_length=500), required=False, max_length=50)
    recent_completions = serializers.ListField(child=RecentCompletionSerializer(), required=False, max_length=5)


class CoreMemoryApi(DashboardApi):
    def get(self, request):
        return Response(core_memory_get(owner=self.owner(), agent=self.query(AgentQuery)["agent"]))


class MarkdownViewApi(DashboardApi):
    def put(self, request, view):
        if view not in MARKDOWN_VIEWS:
            raise ServiceError(f"view must be one of {', '.join(MARKDOWN_VIEWS)}.", code="not_found", status_code=404)
        data = self.body(TextSave)
        if len(data["content"].encode()) > max_import_bytes():
            raise ServiceError("The content is too large.", code="too_large", status_code=413)
        result = markdown_apply(
            owner=self.owner(),
            agent=data["agent"],
            view=view,
            content=data["content"],
            version=data["version"],
            actor=self.actor(),
        )
        return Response(result)


class RollingSummaryApi(DashboardApi):
    def put(self, request):
        data = self.body(SummarySave)
        return Response(
            rolling_summary_save(
                owner=self.owner(), agent=data["agent"], content=data["content"], version=data["version"]
            )
        )


class ScratchpadApi(DashboardApi):
    def put(self, request):
        data = dict(self.body(ScratchpadSave))
        return Response(scratchpad_save(owner=self.owner(), **data))
