"""The owner's rows, a page at a time: what every list endpoint of the API does around its query."""

from rest_framework.views import APIView

from memory_project.pagination import StandardPagination, paginated_response


# GET answers one page of `rows`, each shown by `output_serializer`. The schema documents the response
# as pages of `output_serializer` (`ServiceAutoSchema`), so a subclass adds only what is its own
# (parameters, a description) with `extend_schema_view(get=extend_schema(...))`. No docstring here:
# drf-spectacular would publish it as the description of every list operation.
class OwnerListApi(APIView):
    pagination_class = StandardPagination
    output_serializer = None

    def rows(self, request, **kwargs):
        """The rows to list, in their order: the caller's (`request_owner`), narrowed by the URL's
        kwargs and the query; it reads the request in its own order, so its 400s and 404s stay its own."""
        raise NotImplementedError

    def output_context(self, request) -> dict:
        """What `output_serializer` needs beyond a row, read once for the page."""
        return {}

    def get(self, request, **kwargs):
        rows = self.rows(request, **kwargs)
        return paginated_response(request, self, rows, self.output_serializer, context=self.output_context(request))
