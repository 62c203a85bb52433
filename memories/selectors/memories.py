from django.db.models import Prefetch, Q
from django.shortcuts import get_object_or_404

from memories.models import Memory, MemoryEvent, MemorySource


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
        qs = qs.filter(pk__in=_group_members(group_ids))
    return qs.order_by(ordering, "id")


def _group_members(group_ids: list):
    from memory_groups.models import MemoryGroupMember

    return MemoryGroupMember.objects.filter(group_id__in=group_ids).values("memory_id")


def memory_history(*, memory: Memory):
    return MemoryEvent.objects.filter(memory=memory, owner_id=memory.owner_id).order_by("created_at", "id")
