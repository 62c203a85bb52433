"""The context-window view's endpoint: what GET /api/v1/context/ would inject for the same query,
built by the same selector with the same parameters, without counting the recalled memories as
used (a person previewing is not an agent recalling)."""

from rest_framework.response import Response

from dashboard.endpoints.base import DashboardApi
from memories.api.serializers import ContextQuerySerializer
from memories.selectors.context import context_build
from memories.selectors.memories import memory_group_filter_ids
from sessions.selectors.sessions import session_get


class ContextPreviewApi(DashboardApi):
    def get(self, request):
        data = self.query(ContextQuerySerializer)
        data.pop("owner", None)
        owner = self.owner()
        if data.get("session_id") is not None:
            session_get(owner=owner, session_id=data["session_id"])  # another owner's session is a 404
        # As the REST API does: the group named (by name or id) becomes its ids and those of the groups
        # below it; an unknown one is its 400.
        group_ids = memory_group_filter_ids(owner=owner, ref=data.pop("group", None))
        return Response(context_build(owner=owner, group_ids=group_ids, **data))
