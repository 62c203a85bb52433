"""Which rows an erasure removes, found from Django's models instead of a hand-kept list.

Every installed model is considered, including those added after this module was written: a row
is the owner's when a chain of foreign keys leads from it to the owner's user row (for one agent:
to a row of theirs whose `agent` is that agent). A foreign key declared SET_NULL / SET_DEFAULT is
a reference, not ownership: the referencing row is kept and detached. Any other foreign key
(CASCADE, PROTECT, DO_NOTHING…) makes the row part of what is erased, so a model whose rows only
make sense with their parent never outlives it.

Kept with the account (unless it is deleted too): the user row, its API keys and the
auto-created link tables of the user (groups, permissions). Rows that are not reachable by
foreign key at all (caches keyed by content, raw Telegram updates, files, Redis keys) are the
business of the hooks in erasure.hooks.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import Q, QuerySet

DETACHING = (models.SET_NULL, models.SET_DEFAULT)


def model_label(model) -> str:
    return model._meta.label


def erasable_models() -> list[type[models.Model]]:
    """Every concrete model with its own table, link tables of many-to-many fields included."""
    return [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed and not m._meta.proxy and not m._meta.swapped
    ]


def foreign_keys(model) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if f.is_relation and (f.many_to_one or f.one_to_one)]


def kept_with_account() -> set:
    """Models whose rows stay while the account stays: the user, its credentials, its link tables."""
    user_model = get_user_model()
    kept = {user_model}
    kept |= {apps.get_model(label) for label in settings.ERASURE_KEPT_WITH_ACCOUNT}
    for model in erasable_models():
        if model._meta.auto_created and any(f.related_model is user_model for f in foreign_keys(model)):
            kept.add(model)
    return kept


def _agent_field(model) -> models.Field | None:
    try:
        found = model._meta.get_field("agent")
    except Exception:
        return None
    return found if isinstance(found, models.CharField) else None


def _owner_field(model) -> models.Field | None:
    user_model = get_user_model()
    for f in foreign_keys(model):
        if f.related_model is user_model and f.remote_field.on_delete not in DETACHING:
            return f
    return None


@dataclass
class ErasurePlan:
    """The models an erasure touches, how each one's rows are selected, and in which order to delete."""

    owner_id: int
    agent: str | None
    delete_account: bool
    memory_ids: list | None = None
    # model -> foreign keys through which its rows are selected (to models selected themselves)
    edges: dict = field(default_factory=lambda: defaultdict(list))
    roots: dict = field(default_factory=dict)
    # (model, field) pairs: rows kept, the field set to NULL (or its default) where it points at erased rows
    detach: list = field(default_factory=list)
    kept: set = field(default_factory=set)
    _querysets: dict = field(default_factory=dict)
    _building: set = field(default_factory=set)

    @property
    def partial(self) -> bool:
        """Only part of the owner's data (one agent, some memories): the owner's own rows stay."""
        return self.agent is not None or self.memory_ids is not None

    @property
    def models(self) -> list:
        """Models whose rows are deleted, in deletion order (rows before the rows they point at)."""
        selected = (set(self.roots) | set(self.edges)) - self.kept
        graph = {m: set() for m in selected}
        for model in selected:
            for f in self.edges.get(model, []):
                target = f.related_model
                if target in graph and target is not model:
                    graph[target].add(model)
        try:
            return list(TopologicalSorter(graph).static_order())
        except CycleError:
            # Foreign keys are checked at commit (PostgreSQL, DEFERRABLE INITIALLY DEFERRED), so a
            # cycle only costs the tidy order, not the erasure.
            return sorted(selected, key=model_label)

    def queryset(self, model) -> QuerySet:
        """The rows of `model` this erasure selects."""
        if model in self._querysets:
            return self._querysets[model]
        self._building.add(model)
        user_model = get_user_model()
        edges = self.edges.get(model, [])
        direct = [f for f in edges if f.related_model is user_model]
        condition = Q(pk__in=[])
        if model in self.roots:
            condition |= self.roots[model]
        # A model with its own owner column is selected by it: an index lookup, where OR-ing every
        # path through its parents would scan the table.
        for f in direct or edges:
            target = f.related_model
            if target is user_model and not self.partial:
                condition |= Q(**{f.attname: self.owner_id})
            elif target in self._building:
                # A model pointing at itself (a tree): its rows share their parent's owner.
                continue
            else:
                condition |= Q(**{f"{f.attname}__in": self.queryset(target).values(f.target_field.attname)})
        self._building.discard(model)
        qs = model._base_manager.filter(condition)
        self._querysets[model] = qs
        return qs


def erasure_plan(
    *, owner_id: int, agent: str | None = None, memory_ids: list | None = None, delete_account: bool = False
) -> ErasurePlan:
    """Every model with rows of the owner (or of one agent of theirs, or hanging off some of their
    memories), found by walking foreign keys."""
    user_model = get_user_model()
    everything = erasable_models()
    plan = ErasurePlan(owner_id=owner_id, agent=agent, delete_account=delete_account, memory_ids=memory_ids)
    plan.kept = set() if delete_account else kept_with_account()
    if memory_ids is not None:
        memory_model = apps.get_model("memories.Memory")
        plan.roots[memory_model] = Q(owner_id=owner_id, pk__in=list(memory_ids))
    elif agent is None:
        plan.roots[user_model] = Q(pk=owner_id)
        if not delete_account:
            # Selected so that what hangs off it is found, but the row itself is kept.
            plan.kept.add(user_model)
    else:
        for model in everything:
            owner_field = _owner_field(model)
            if owner_field is not None and _agent_field(model) is not None and model not in plan.kept:
                plan.roots[model] = Q(**{owner_field.attname: owner_id, "agent": agent})
    selected = set(plan.roots)
    seen_edges: set = set()
    changed = True
    while changed:
        changed = False
        for model in everything:
            if model in plan.kept:
                continue
            for f in foreign_keys(model):
                target = f.related_model
                if target not in selected or (model, f.name) in seen_edges:
                    continue
                seen_edges.add((model, f.name))
                if f.remote_field.on_delete in DETACHING:
                    plan.detach.append((model, f))
                    continue
                plan.edges[model].append(f)
                if model not in selected:
                    selected.add(model)
                    changed = True
    return plan
