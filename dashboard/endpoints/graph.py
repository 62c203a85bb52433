"""The graph page's endpoints: nodes and edges for the current filters or one memory's
neighbourhood, and the entities its filter offers."""

from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from dashboard import graph
from dashboard.endpoints.base import DashboardApi
from memories.models import Category, Memory
from memory_project.api.fields import CleanCharField, comma_list


class GraphQuerySerializer(serializers.Serializer):
    categories = CleanCharField(required=False, allow_blank=True, default="")
    limit = serializers.IntegerField(min_value=1, max_value=graph.GRAPH_MAX_NODES, default=graph.GRAPH_DEFAULT_NODES)
    unlinked = serializers.BooleanField(default=False)
    entity = serializers.IntegerField(min_value=1, required=False)
    q = CleanCharField(max_length=200, required=False, allow_blank=True, default="")
    focus = serializers.UUIDField(required=False)
    depth = serializers.IntegerField(min_value=1, max_value=graph.NEIGHBOURHOOD_MAX_DEPTH, default=1)

    def validate_categories(self, value):
        return comma_list(value, known=Category.values, noun="categories")


class GraphApi(DashboardApi):
    def get(self, request):
        data = self.query(GraphQuerySerializer)
        query = graph.GraphQuery(
            categories=data["categories"],
            limit=data["limit"],
            unlinked=data["unlinked"],
            entity=data.get("entity"),
            q=data["q"].strip(),
            focus=data.get("focus"),
            depth=data["depth"],
        )
        try:
            return Response(graph.memory_graph(owner=self.owner(), query=query))
        except Memory.DoesNotExist:
            raise NotFound("No such memory in the graph.") from None


class GraphEntitiesApi(DashboardApi):
    def get(self, request):
        return Response({"entities": graph.graph_entities(owner=self.owner())})
