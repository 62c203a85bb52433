"""One of the owner's rows: what every detail GET of the API does around its lookup."""

from rest_framework.response import Response
from rest_framework.views import APIView


# GET answers `row` shown by `output_serializer`, which the schema documents as the 200 response
# (`ServiceAutoSchema`); a subclass adds only what is its own with `extend_schema_view(get=...)`,
# and its other methods (PATCH, DELETE) stay its own. No docstring here: drf-spectacular would
# publish it as the description of every detail operation.
class OwnerDetailApi(APIView):
    output_serializer = None

    def row(self, request, **kwargs):
        """The row to show: the caller's (`request_owner`), found by the URL's kwargs; its 404 is its own."""
        raise NotImplementedError

    def output_context(self, request) -> dict:
        """What `output_serializer` needs beyond the row."""
        return {}

    def get(self, request, **kwargs):
        row = self.row(request, **kwargs)
        return Response(self.output_serializer(row, context=self.output_context(request)).data)
