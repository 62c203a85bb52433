"""Whose memory a dashboard request looks at: the user's own, or, for staff, the owner they picked."""

from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import get_object_or_404

from memory_project.text import storable

OWNER_PARAM = "owner"
OWNER_LIST_LIMIT = 500


def owner_for(request):
    """Staff may pass ?owner=USERNAME; anyone else always sees their own data, whatever they pass
    (ignoring the parameter rather than refusing it keeps shared links harmless)."""
    cached = getattr(request, "_dashboard_owner", None)
    if cached is not None:
        return cached
    user = request.user
    name = request.GET.get(OWNER_PARAM, "").strip()
    owner = user
    if user.is_staff and name and name != user.get_username():
        if not storable(name):
            # PostgreSQL text cannot hold it, so no user has that name: a 404 as for any unknown one.
            raise Http404
        owner = get_object_or_404(get_user_model(), username=name, is_active=True)
    # The page and its frame (dashboard.layout.chrome) both ask: one lookup per request.
    request._dashboard_owner = owner
    return owner


def owner_query(request, owner) -> str:
    """The query string that keeps the picked owner on links ("" when it is the user themself)."""
    if owner.pk == request.user.pk:
        return ""
    return "?" + urlencode({OWNER_PARAM: owner.get_username()})


def owner_choices(request) -> list[str]:
    if not request.user.is_staff:
        return []
    User = get_user_model()
    return list(
        User.objects.filter(is_active=True).order_by("username").values_list("username", flat=True)[:OWNER_LIST_LIMIT]
    )
