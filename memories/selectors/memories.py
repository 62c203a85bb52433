from django.db.models import Prefetch, Q
from django.shortcuts import get_object_or_404

from memories.models import Memory, MemoryEvent, MemorySource
from memory_project.exceptions import ServiceError

# How a `group` filter (a memory group's name or id) becomes the ids of that group and those below it.
# The memory_groups app registers it in ready(): groups are built on memories, so memories name them
# only through the `group_links` relation and this hook.
_group_resolver = None


def memory_group_resolver_register(resolver) -> None:
    """`resolver(owner=..., ref=...)` returns the group ids a ref means, or raises ServiceError."""
    global _group_resolver
    _group_resolver = resolver


def memory_group_filter_ids(*, owner, ref: str | None) -> list | None:
    """The group ids a `group` filter means; None without a filter."""
    if not ref:
        return None
    if _group_resolver is None:
        raise ServiceError(f"No memory group {ref!r}.", code="unknown_group", details={"group": ref})
    return _group_resolver(owner=owner, ref=ref)


def memory_in_groups(qs, group_ids: list):
    """Memories of `qs` in any of the groups, each once."""
    return qs.filter(pk__in=Memory._base_manager.filter(group_links__group_id__in=group_ids).values("pk"))


def memory_get(*, owner, memory_id) -> Memory:
    """The owner's memory or a 404, never a 403 that would confirm it exists."""
    return get_object_or_404(Memory, pk=memory_id, owner=owner)


def memory_get_detail(*, owner, memory_id) -> Memory:
    """The owner's memory with its source turns loaded in one extra query (no N+1 on provenance)."""
    sources = MemorySource.objects.select_related("turn").order_by("position", "id")
    qs = Memory.objects.defer("embedding", "search_vector").prefetch_related(Prefetch("sources", queryset=sources))
    return get_object_or_404(qs, pk=memory_id, owner=owner)


def memory_list(
    *,
    owner,
    category: str | None = None,
    status: str | None = None,
    agent: str | None = None,
    q: str | None = None,
    source: str | None = None,
    ordering: str = "-updated_at",
    group_ids: list | None = None,
):
    qs = Memory.objects.filter(owner=owner).defer("embedding", "search_vector", "search_ngrams")
    if category:
        qs = qs.filter(category=category)
    if status == "all":
        pass  # every status, forgotten too (the dashboard's "all" filter)
    elif status:
        qs = qs.filter(status=status)
    else:
        qs = qs.exclude(status="forgotten")
    if agent is not None:
        qs = qs.filter(agent=agent)
    if source:
        qs = qs.filter(source=source)
    if q:
        qs = qs.filter(Q(content__icontains=q) | Q(subject__icontains=q))
    if group_ids is not None:
        qs = memory_in_groups(qs, group_ids)
    return qs.order_by(ordering, "id")


def memory_history(*, memory: Memory):
    return MemoryEvent.objects.filter(memory=memory, owner_id=memory.owner_id).order_by("created_at", "id")
