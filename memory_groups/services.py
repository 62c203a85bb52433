"""Writes of memory groups: groups, their rules, and which memories are in them.

A rule puts a memory in a group when every non-empty list of the group's rule matches it (its
category, its agent, an entity it is linked to). Rules are applied set-based in SQL: on every
memory write (the memory.changed event, inside the writer's transaction, after its entities are
linked) for that memory, and for the whole group when its rule changes. Memberships made by hand
("manual") are never removed by a rule; those made by a rule follow it.
"""

from django.db import IntegrityError, connection, transaction

from hotcache.services import hot_cache_invalidate
from memories.models import Memory
from memory_groups.models import MemberSource, MemoryGroup, MemoryGroupMember
from memory_groups.selectors import group_subtree_ids
from memory_project.exceptions import Conflict, ServiceError

_MATCH = """
    FROM memory_groups_memorygroup g
    JOIN memories_memory m ON m.owner_id = g.owner_id
    WHERE g.owner_id = %(owner)s
      AND (cardinality(g.rule_categories) + cardinality(g.rule_agents) + cardinality(g.rule_entities)) > 0
      AND (cardinality(g.rule_categories) = 0 OR m.category = ANY(g.rule_categories))
      AND (cardinality(g.rule_agents) = 0 OR m.agent = ANY(g.rule_agents))
      AND (cardinality(g.rule_entities) = 0 OR EXISTS (
            SELECT 1 FROM memories_memoryentity me JOIN memories_entity e ON e.id = me.entity_id
            WHERE me.memory_id = m.id AND e.normalized_name = ANY(g.rule_entities)))
"""


def group_rules_apply(*, owner_id: int, group_ids: list | None = None, memory_ids: list | None = None) -> dict:
    """Bring the rule memberships of the owner's groups (or of some groups, or of some memories) in
    line with the rules: two statements. Returns {"added": n, "removed": n}."""
    scope_g = " AND g.id = ANY(%(groups)s)" if group_ids is not None else ""
    scope_m = " AND m.id = ANY(%(memories)s)" if memory_ids is not None else ""
    scope_x = (" AND x.group_id = ANY(%(groups)s)" if group_ids is not None else "") + (
        " AND x.memory_id = ANY(%(memories)s)" if memory_ids is not None else ""
    )
    params = {"owner": owner_id, "groups": list(group_ids or []), "memories": list(memory_ids or [])}
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM memory_groups_memorygroupmember x WHERE x.owner_id = %(owner)s AND x.source = 'rule'"
            + scope_x
            + " AND NOT EXISTS (SELECT 1 "
            + _MATCH
            + " AND g.id = x.group_id AND m.id = x.memory_id)",
            params,
        )
        removed = cursor.rowcount
        cursor.execute(
            "INSERT INTO memory_groups_memorygroupmember (owner_id, group_id, memory_id, source, created_at) "
            "SELECT %(owner)s, g.id, m.id, 'rule', now() "
            + _MATCH
            + scope_g
            + scope_m
            + " ON CONFLICT (group_id, memory_id) DO NOTHING",
            params,
        )
        added = cursor.rowcount
    return {"added": added, "removed": removed}


def group_event_listener(*, owner_id, type: str, data: dict) -> None:
    """A memory was written: its rule memberships follow its new category, agent and entities."""
    if type != "memory.changed":
        return
    memory_id = (data.get("memory") or {}).get("id")
    if not memory_id or not MemoryGroup.objects.filter(owner_id=owner_id).exists():
        return
    group_rules_apply(owner_id=owner_id, memory_ids=[memory_id])


def _rules(rules: dict | None) -> dict:
    rules = rules or {}
    return {
        "rule_categories": sorted(set(rules.get("categories") or [])),
        "rule_agents": sorted(set(rules.get("agents") or [])),
        "rule_entities": sorted({e.strip().casefold() for e in rules.get("entities") or [] if e.strip()}),
    }


def _parent(owner, parent_id) -> MemoryGroup | None:
    if parent_id is None:
        return None
    parent = MemoryGroup.objects.filter(owner=owner, pk=parent_id).first()
    if parent is None:
        raise ServiceError(
            f"No memory group {parent_id} to nest under.", code="unknown_group", details={"parent": str(parent_id)}
        )
    return parent


@transaction.atomic
def group_create(*, owner, name: str, parent_id=None, description: str = "", rules: dict | None = None) -> MemoryGroup:
    group = MemoryGroup(
        owner=owner, name=name, parent=_parent(owner, parent_id), description=description, **_rules(rules)
    )
    try:
        with transaction.atomic():
            group.save(force_insert=True)
    except IntegrityError:
        raise Conflict(f"A memory group named {name!r} exists already.", code="group_exists") from None
    group_rules_apply(owner_id=owner.pk, group_ids=[group.pk])
    hot_cache_invalidate(owner_id=owner.pk)
    return group


_UNSET = object()


@transaction.atomic
def group_update(*, group: MemoryGroup, name=None, parent_id=_UNSET, description=None, rules=None) -> MemoryGroup:
    group = MemoryGroup.objects.select_for_update().get(pk=group.pk)
    if name is not None:
        group.name = name
    if description is not None:
        group.description = description
    if parent_id is not _UNSET:
        if parent_id is not None and parent_id in group_subtree_ids(owner=group.owner, group_id=group.pk):
            raise ServiceError("A group cannot be nested under itself or a group below it.", code="group_cycle")
        group.parent = _parent(group.owner, parent_id)
    rules_changed = False
    if rules is not None:
        new = _rules(rules)
        rules_changed = any(getattr(group, k) != v for k, v in new.items())
        for key, value in new.items():
            setattr(group, key, value)
    try:
        with transaction.atomic():
            group.save()
    except IntegrityError:
        raise Conflict(f"A memory group named {group.name!r} exists already.", code="group_exists") from None
    if rules_changed:
        group_rules_apply(owner_id=group.owner_id, group_ids=[group.pk])
    hot_cache_invalidate(owner_id=group.owner_id)
    return group


@transaction.atomic
def group_delete(*, group: MemoryGroup) -> int:
    """Delete the group and the groups below it (their memberships too, never the memories)."""
    deleted, _ = MemoryGroup.objects.filter(pk=group.pk).delete()
    hot_cache_invalidate(owner_id=group.owner_id)
    return deleted


def _own_memories(group: MemoryGroup, memory_ids: list) -> list:
    found = set(Memory.objects.filter(owner_id=group.owner_id, pk__in=memory_ids).values_list("pk", flat=True))
    missing = [str(m) for m in memory_ids if m not in found]
    if missing:
        raise ServiceError(
            "Unknown memories; nothing was changed.", code="unknown_memories", details={"memory_ids": missing}
        )
    return list(found)


@transaction.atomic
def group_members_assign(*, group: MemoryGroup, memory_ids: list) -> int:
    """Put memories in the group by hand (a rule membership becomes a manual one). Returns how many
    memberships were added or changed."""
    ids = _own_memories(group, memory_ids)
    upgraded = MemoryGroupMember.objects.filter(group=group, memory_id__in=ids, source=MemberSource.RULE).update(
        source=MemberSource.MANUAL
    )
    existing = set(MemoryGroupMember.objects.filter(group=group, memory_id__in=ids).values_list("memory_id", flat=True))
    created = MemoryGroupMember.objects.bulk_create(
        [
            MemoryGroupMember(owner_id=group.owner_id, group=group, memory_id=m, source=MemberSource.MANUAL)
            for m in ids
            if m not in existing
        ],
        ignore_conflicts=True,
    )
    hot_cache_invalidate(owner_id=group.owner_id)
    return upgraded + len(created)


@transaction.atomic
def group_members_unassign(*, group: MemoryGroup, memory_ids: list) -> dict:
    """Take memories out of the group. One the group's rule matches stays (as a rule membership):
    change the rule to leave it out. Returns {"removed": n, "kept_by_rule": [ids]}."""
    ids = _own_memories(group, memory_ids)
    members = MemoryGroupMember.objects.filter(group=group, memory_id__in=ids)
    removed, _ = members.delete()
    group_rules_apply(owner_id=group.owner_id, group_ids=[group.pk], memory_ids=ids)
    kept = sorted(
        str(m)
        for m in MemoryGroupMember.objects.filter(group=group, memory_id__in=ids).values_list("memory_id", flat=True)
    )
    hot_cache_invalidate(owner_id=group.owner_id)
    return {"removed": removed - len(kept), "kept_by_rule": kept}
