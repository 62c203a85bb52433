"""Reads of memory groups, always scoped by owner."""

import uuid

from django.db.models import Count, QuerySet

from memory_groups.models import MemoryGroup
from memory_project.exceptions import ServiceError


def group_list(*, owner) -> QuerySet[MemoryGroup]:
    return MemoryGroup.objects.filter(owner=owner).annotate(memory_count=Count("members")).order_by("name")


def group_get(*, owner, group_id) -> MemoryGroup:
    from django.shortcuts import get_object_or_404

    return get_object_or_404(group_list(owner=owner), pk=group_id)


def group_paths(*, owner) -> dict:
    """{group id: "work/clients"} for every group of the owner."""
    rows = {
        pk: (name, parent)
        for pk, name, parent in MemoryGroup.objects.filter(owner=owner).values_list("id", "name", "parent_id")
    }
    paths = {}
    for pk in rows:
        parts, seen, current = [], set(), pk
        while current is not None and current in rows and current not in seen:
            seen.add(current)
            name, parent = rows[current]
            parts.append(name)
            current = parent
        paths[pk] = "/".join(reversed(parts))
    return paths


def group_subtree_ids(*, owner, group_id) -> list:
    """The group and every group below it."""
    children: dict = {}
    for pk, parent in MemoryGroup.objects.filter(owner=owner).values_list("id", "parent_id"):
        children.setdefault(parent, []).append(pk)
    found, stack = [], [group_id]
    while stack:
        current = stack.pop()
        if current in found:
            continue
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def group_filter_ids(*, owner, ref: str | None) -> list | None:
    """The ids a `group` filter means (the group named or identified by `ref`, and those below it);
    None without a filter; an unknown group is a 400 rather than an empty answer."""
    if not ref:
        return None
    groups = MemoryGroup.objects.filter(owner=owner)
    try:
        group = groups.filter(pk=uuid.UUID(ref)).first()
    except ValueError:
        group = None
    if group is None:
        group = groups.filter(name=ref).first()
    if group is None:
        raise ServiceError(f"No memory group {ref!r}.", code="unknown_group", details={"group": ref})
    return group_subtree_ids(owner=owner, group_id=group.pk)
