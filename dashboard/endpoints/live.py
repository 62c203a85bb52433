"""The frame's live parts: the moderation badge's count and the feed's first screen."""

from rest_framework import serializers
from rest_framework.response import Response

from dashboard.endpoints.base import DashboardApi
from dashboard.feed import FEED_TYPES, MAX_LIMIT, feed_recent
from memories.models import Memory, Status
from memory_project.api.fields import StrictSerializer, comma_list


class PendingCountApi(DashboardApi):
    def get(self, request):
        count = Memory.objects.filter(owner=self.owner(), status=Status.PENDING_REVIEW).count()
        return Response({"pending_review": count})


class RecentEventsQuery(StrictSerializer):
    types = serializers.CharField(required=False, allow_blank=True, default="")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LIMIT, default=20)

    def validate_types(self, value: str) -> list[str] | None:
        if not value:
            return None
        return list(comma_list(value, known=FEED_TYPES, noun="event types"))


class RecentEventsApi(DashboardApi):
    def get(self, request):
        query = self.query(RecentEventsQuery)
        events = feed_recent(owner=self.owner(), types=query["types"], limit=query["limit"])
        return Response({"events": events, "types": list(FEED_TYPES)})
