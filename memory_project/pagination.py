from django.conf import settings
from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = settings.MAX_PAGE_SIZE


def paginated_response(request, view, queryset, serializer_class, **serializer_options):
    """One page of `queryset`, serialized, in the shape every list endpoint answers with."""
    paginator = StandardPagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True, **serializer_options).data)
