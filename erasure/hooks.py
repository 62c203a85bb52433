"""What an erasure removes besides the rows its plan finds by foreign key.

A hook is called inside the erasure's transaction, before any row is deleted, so it can still read
what is about to go. It deletes rows that no foreign key ties to the owner (a cache keyed by
content, raw Telegram updates, admin log lines that quote erased rows), counts them, and leaves
what is not transactional (files, Redis keys, per-process caches) to `after_commit`, so a rolled
back erasure leaves them in place.
"""

import logging
from collections import Counter
from dataclasses import dataclass, field

from django.apps import apps
from django.conf import settings
from django.db.models import TextField
from django.db.models.functions import Cast

from erasure.plan import ErasurePlan

logger = logging.getLogger(__name__)

_hooks: list = []


@dataclass
class ErasureContext:
    owner_id: int
    username: str
    agent: str | None
    plan: ErasurePlan
    counts: Counter = field(default_factory=Counter)
    after_commit_actions: list = field(default_factory=list)

    def count(self, kind: str, n: int) -> None:
        if n:
            self.counts[kind] += n

    def after_commit(self, action) -> None:
        self.after_commit_actions.append(action)

    def erased(self, label: str):
        """The rows of model `label` this erasure deletes (an empty queryset when none)."""
        model = apps.get_model(label)
        if model not in self.plan.models:
            return model._base_manager.none()
        return self.plan.queryset(model)


def erasure_hook_register(hook) -> None:
    """`hook(context=ErasureContext)`; apps with files or caches of their own register one in ready()."""
    if hook not in _hooks:
        _hooks.append(hook)


def erasure_hooks_run(context: ErasureContext) -> None:
    for hook in list(_hooks):
        hook(context=context)


# --- rows that quote erased rows without a foreign key ----------------------------------------


def _admin_log(*, context: ErasureContext) -> None:
    """Django admin's history names each changed object by its str(): a memory's text."""
    if not apps.is_installed("django.contrib.admin"):
        return
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    own_entries = context.erased("admin.LogEntry").values("pk")
    deleted = 0
    for model in context.plan.models:
        if model is LogEntry or model._meta.pk is None or not model._meta.pk.concrete:
            continue
        ct = ContentType.objects.get_for_model(model, for_concrete_model=False)
        ids = context.plan.queryset(model).annotate(_erased_pk=Cast("pk", TextField())).values("_erased_pk")
        quoted = LogEntry.objects.filter(content_type=ct, object_id__in=ids).exclude(pk__in=own_entries)
        deleted += quoted._raw_delete("default")
    context.count("admin.LogEntry", deleted)


# --- files and keys outside the database ------------------------------------------------------


def redis_client():
    """The Redis the service writes to (hot cache, live events), or None in embedded mode."""
    url = settings.HOT_CACHE_REDIS_URL or settings.REDIS_URL
    if not url:
        return None
    import redis

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)


def owner_key_patterns(owner_id: int) -> list[str]:
    """Every per-owner key the service writes carries `owner:<id>:`; Channels names its groups."""
    return [f"*owner:{owner_id}:*", f"*events.owner.{owner_id}"]


def _redis_keys(*, context: ErasureContext) -> None:
    if context.plan.partial:
        return  # per-owner keys hold no agent; the hot cache of the owner is dropped by its own hook
    client = redis_client()
    if client is None:
        return
    try:
        keys = {key for pattern in owner_key_patterns(context.owner_id) for key in client.scan_iter(pattern, 1000)}
    except Exception:
        logger.exception("could not list the Redis keys of owner %s", context.owner_id)
        raise
    context.count("redis_keys", len(keys))
    if keys:
        context.after_commit(lambda: client.delete(*keys))


def builtin_hooks_register() -> None:
    for hook in (
        _admin_log,
        _redis_keys,
    ):
        erasure_hook_register(hook)
