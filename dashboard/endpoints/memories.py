"""The memory browser's and the moderation queue's JSON: list, read, edit, act on one memory or many,
revert to a version; and the overview's figures. Writes go through memories.services.actions, as
every other front door's do."""

from django.db import transaction
from rest_framework.response import Response

from dashboard import selectors, services
from dashboard.endpoints.base import DashboardApi
from memories.models import Memory
from memories.selectors.memories import memory_get
from memories.services.actions import memory_revert
from memory_project.exceptions import ServiceError


def memory_out(memory: Memory) -> dict:
    return {
        "id": str(memory.pk),
        "content": memory.content,
        "category": memory.category,
        "status": memory.status,
        "agent": memory.agent,
        "source": memory.source,
        "importance": memory.importance,
        "strength": round(memory.strength, 4),
        "confidence": memory.confidence,
        "pinned": memory.pinned,
        "retention": memory.retention,
        "review_reason": memory.review_reason,
        "observed_at": memory.observed_at,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "version": memory.version,
        # As in the list's rows, so a row replaced after an action or a live event keeps its chip.
        "conflict": selectors.memory_conflicts(owner=memory.owner_id, ids=[memory.pk]).get(str(memory.pk)),
    }


class OverviewApi(DashboardApi):
    def get(self, request):
        owner = self.owner()
        return Response(
            {"metrics": selectors.overview_metrics(owner=owner), "activity": selectors.memory_activity(owner=owner)}
        )


class StrengthDistributionApi(DashboardApi):
    def get(self, request):
        return Response(selectors.strength_distribution(owner=self.owner()))


class MemoryBrowseApi(DashboardApi):
    def get(self, request):
        try:
            query = selectors.browse_query_parse(request.GET)
        except ValueError as error:
            raise ServiceError(str(error)) from None
        return Response(selectors.memory_browse(owner=self.owner(), query=query))


class MemoryApi(DashboardApi):
    def get(self, request, memory_id):
        return Response({"memory": memory_out(memory_get(owner=self.owner(), memory_id=memory_id))})

    def patch(self, request, memory_id):
        found = memory_get(owner=self.owner(), memory_id=memory_id)
        changes = services.memory_edit_changes(self.json_object())
        found = services.memory_edit(memory=found, actor=self.actor(), changes=changes, moderator=self.moderator())
        return Response({"memory": memory_out(found)})


class MemoryActionApi(DashboardApi):
    def post(self, request, memory_id):
        found = memory_get(owner=self.owner(), memory_id=memory_id)
        body = self.json_object()
        with transaction.atomic():  # "edit and approve" is one change: a refused approval keeps the edit out too
            if "changes" in body:  # moderation's "edit and approve" in one request
                changes = services.memory_edit_changes(body["changes"])
                found = services.memory_edit(
                    memory=found, actor=self.actor(), changes=changes, moderator=self.moderator()
                )
            found = services.memory_action(
                memory=found, action=body.get("action", ""), actor=self.actor(), moderator=self.moderator()
            )
        return Response({"memory": memory_out(found)})


class MemoryRevertApi(DashboardApi):
    def post(self, request, memory_id):
        found = memory_get(owner=self.owner(), memory_id=memory_id)
        event_id = self.json_object().get("event")
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            raise ServiceError("event must be the id of a history entry.")
        reverted = memory_revert(memory=found, event_id=event_id, actor=self.actor(), moderator=self.moderator())
        return Response({"memory": memory_out(reverted)})


class MemoryBulkApi(DashboardApi):
    def post(self, request):
        body = self.json_object()
        return Response(
            services.memory_bulk_action(
                owner=self.owner(),
                ids=body.get("ids"),
                action=body.get("action", ""),
                actor=self.actor(),
                moderator=self.moderator(),
            )
        )
