"""A new row of the owner's: what every create POST of the API does around its service."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_project.api.fields import validated


# POST validates the body with `input_serializer`, hands it to `create` and answers 201 with the row
# shown by `created_serializer` (by default `output_serializer`). The schema documents that request
# and that 201 (`ServiceAutoSchema`), so a subclass adds only what is its own (a description, a 409)
# with `extend_schema_view(post=extend_schema(...))`. No docstring here: drf-spectacular would publish
# it as the description of every create operation.
class OwnerCreateApi(APIView):
    input_serializer = None
    output_serializer = None
    created_serializer = None

    def create(self, request, **data):
        """The new row: the create service called for the caller (`request_owner`) with the
        validated body (and the URL's kwargs)."""
        raise NotImplementedError

    def output_context(self, request) -> dict:
        """What the shown serializer needs beyond the row."""
        return {}

    def shown_on_create(self):
        return self.created_serializer or self.output_serializer

    def post(self, request, **kwargs):
        data = validated(self.input_serializer, request.data)
        row = self.create(request, **kwargs, **data)
        body = self.shown_on_create()(row, context=self.output_context(request)).data
        return Response(body, status=status.HTTP_201_CREATED)
