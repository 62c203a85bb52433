"""What an erasure removes besides the rows its plan finds by foreign key.

A hook is called inside the erasure's transaction, before any row is deleted, so it can still read
what is about to go. It deletes rows that no foreign key ties to the owner (a cache keyed by
content, raw Telegram updates, admin log lines that quote erased rows), counts them, and leaves
what is not transactional (files, Redis keys, per-process caches) to `after_commit`, so a rolled
back erasure leaves them in place.
"""

import json
import logging
import re
import shutil
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


# --- the embedding cache: the owner's rows, kept only while another of the owner's rows has the text --


def _owner_texts(context: ErasureContext) -> set[str]:
    from memories.text import normalize
    from sessions.services.sessions import turn_embedding_text

    texts: set[str] = set()
    texts.update(context.erased("memories.Memory").values_list("content", flat=True))
    for before, after in context.erased("memories.MemoryEvent").values_list("before__content", "after__content"):
        texts.update(t for t in (before, after) if isinstance(t, str))
    previous_session, previous_text = None, None
    turns = context.erased("chat_sessions.ConversationTurn").order_by("session_id", "sequence")
    for session_id, speaker, content in turns.values_list("session_id", "speaker", "content").iterator(2000):
        own = turn_embedding_text(speaker, content)
        texts.add(own)
        if session_id == previous_session and previous_text is not None:
            texts.add(f"{previous_text}\n{own}")
        previous_session, previous_text = session_id, own
    texts.update(context.erased("chat_sessions.Episode").values_list("summary", flat=True))
    texts.update(context.erased("chat_sessions.ChatSession").values_list("title", flat=True))
    return {normalize(t) for t in texts if t}


def _shared_texts(context: ErasureContext, texts: set[str]) -> set[str]:
    """Those of `texts` that the owner's rows outside this erasure also hold (another agent, another
    memory). The cache is scoped by owner, so other owners' rows never keep this owner's entries."""
    from memories.text import content_hash

    memory_model = apps.get_model("memories.Memory")
    turn_model = apps.get_model("chat_sessions.ConversationTurn")
    by_hash = {content_hash(t): t for t in texts}
    shared = set()
    kept_memories = memory_model._base_manager.filter(owner_id=context.owner_id).exclude(
        pk__in=context.erased("memories.Memory").values("pk")
    )
    for start in range(0, len(by_hash), 5000):
        chunk = list(by_hash)[start : start + 5000]
        for found in kept_memories.filter(content_hash__in=chunk).values_list("content_hash", flat=True):
            shared.add(by_hash[found])
    kept_turns = turn_model._base_manager.filter(owner_id=context.owner_id).exclude(
        pk__in=context.erased("chat_sessions.ConversationTurn").values("pk")
    )
    for start in range(0, len(texts), 5000):
        chunk = sorted(texts)[start : start + 5000]
        shared.update(kept_turns.filter(content__in=chunk).values_list("content", flat=True))
    return shared


def _embedding_cache(*, context: ErasureContext) -> None:
    from memories.models import EmbeddingCache
    from memories.services.embeddings import _key

    texts = _owner_texts(context)
    if not texts:
        return
    texts -= _shared_texts(context, texts)
    # The cache is keyed by a hash of model, owner and text; every model that ever wrote to it is tried.
    model_names = list(EmbeddingCache.objects.values_list("model", flat=True).distinct())
    keys = [_key(name, context.owner_id, text) for name in model_names for text in texts]
    if context.plan.partial:
        # A whole owner's rows are reached by the plan through EmbeddingCache.owner; part of them here.
        deleted = 0
        for start in range(0, len(keys), 5000):
            deleted += EmbeddingCache.objects.filter(key__in=keys[start : start + 5000])._raw_delete("default")
        context.count("memories.EmbeddingCache", deleted)

    def forget_in_process():
        from memories.services import embeddings

        with embeddings._lru_lock:
            for key in keys:
                embeddings._lru.pop(key, None)

    context.after_commit(forget_in_process)


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


def _telegram_updates(*, context: ErasureContext) -> None:
    """Updates not processed yet still carry the message; they name the sender, not the owner."""
    if context.plan.partial or not apps.is_installed("integrations"):
        return
    from integrations.models import TelegramUpdate

    telegram_ids = list(context.erased("integrations.TelegramLink").values_list("telegram_user_id", flat=True))
    deleted = 0
    for telegram_id in telegram_ids:
        sent_by = TelegramUpdate.objects.filter(payload__message__from__id=telegram_id) | TelegramUpdate.objects.filter(
            payload__edited_message__from__id=telegram_id
        )
        deleted += sent_by._raw_delete("default")
    context.count("integrations.TelegramUpdate", deleted)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _partial_derived_rows(*, context: ErasureContext) -> None:
    """Erasing one agent (or some memories) leaves the owner's own rows, except what was derived
    from the erased ones: entities only they mention, BM25 statistics (their lexemes come from the
    erased text) and webhook deliveries whose payload names an erased memory or session."""
    if not context.plan.partial:
        return
    from integrations.models import WebhookDelivery
    from memories.models import Entity, LexemeFrequency, SearchStats

    erased_memories = context.erased("memories.Memory")
    surviving = apps.get_model("memories.Memory")._base_manager.filter(owner_id=context.owner_id)
    surviving = surviving.exclude(pk__in=erased_memories.values("pk"))
    orphaned = (
        Entity.objects.filter(owner_id=context.owner_id, memory_links__memory__in=erased_memories.values("pk"))
        .exclude(memory_links__memory__in=surviving.values("pk"))
        .values_list("pk", flat=True)
        .distinct()
    )
    context.count("memories.Entity", Entity.objects.filter(pk__in=list(orphaned))._raw_delete("default"))
    for model in (SearchStats, LexemeFrequency):
        context.count(model._meta.label, model.objects.filter(owner_id=context.owner_id)._raw_delete("default"))
    erased_ids = {str(i) for i in erased_memories.values_list("pk", flat=True)}
    erased_ids |= {str(i) for i in context.erased("chat_sessions.ChatSession").values_list("pk", flat=True)}
    doomed = []
    deliveries = WebhookDelivery.objects.filter(subscription__owner_id=context.owner_id)
    for pk, payload in deliveries.values_list("pk", "payload").iterator(1000):
        if erased_ids.intersection(_UUID.findall(json.dumps(payload))):
            doomed.append(pk)
    context.count("integrations.WebhookDelivery", WebhookDelivery.objects.filter(pk__in=doomed)._raw_delete("default"))


def _memory_quotes(*, context: ErasureContext) -> None:
    """Purging single memories: the owner's other rows that quote them lose the quote. Daily digests
    list the day's memory events with their text; MEMORY.md / USER.md / learnings.md (generated, and
    the files the lifecycle wrote) contain it until the next nightly refresh."""
    if context.plan.memory_ids is None:
        return
    from memories.models import CoreMemory, DailyDigest

    erased = context.erased("memories.Memory")
    contents = [c for c in set(erased.values_list("content", flat=True)) if c]
    ids = {str(i) for i in erased.values_list("pk", flat=True)}
    scrubbed = 0
    for digest in DailyDigest.objects.filter(owner_id=context.owner_id).only("entries", "summary"):
        entries = [e for e in digest.entries or [] if not (isinstance(e, dict) and e.get("memory_id") in ids)]
        summary = _without(digest.summary, contents)
        if entries != digest.entries or summary != digest.summary:
            DailyDigest.objects.filter(pk=digest.pk).update(entries=entries, summary=summary)
            scrubbed += 1
    for core in CoreMemory.objects.filter(owner_id=context.owner_id):
        texts = {f: getattr(core, f) for f in ("memory_md", "user_md", "learnings_md", "rolling_summary")}
        cleaned = {f: _without(t, contents) for f, t in texts.items()}
        if cleaned != texts:
            CoreMemory.objects.filter(pk=core.pk).update(**cleaned)
            scrubbed += 1
    context.count("quotes_removed", scrubbed)
    base = getattr(settings, "MEMORY_EXPORT_DIR", None)
    if base and contents:
        from memories.services.lifecycle import export_dir_for

        folder = export_dir_for(base, username=context.username)
        context.after_commit(lambda: _scrub_files(folder, contents))


def _without(text: str, contents: list[str]) -> str:
    for content in contents:
        text = text.replace(content, "[erased]")
    return text


def _scrub_files(folder, contents: list[str]) -> None:
    if not folder.is_dir():
        return
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            cleaned = _without(text, contents)
            if cleaned != text:
                path.write_text(cleaned, encoding="utf-8")


# --- files and keys outside the database ------------------------------------------------------


def _export_files(*, context: ErasureContext) -> None:
    """MEMORY.md / USER.md / learnings.md (and their .bak) the lifecycle wrote for the owner."""
    base = getattr(settings, "MEMORY_EXPORT_DIR", None)
    if not base or context.plan.memory_ids is not None:
        return
    from memories.services.lifecycle import export_dir_for

    folder = export_dir_for(base, username=context.username, agent=context.agent or "")
    if not folder.is_dir():
        return
    if context.agent == "":
        # The default agent's files sit above the other agents' folders, which stay.
        doomed = [p for p in folder.iterdir() if p.is_file()]
    else:
        doomed = [p for p in folder.rglob("*") if p.is_file()]
    context.count("export_files", len(doomed))

    def remove():
        if context.agent == "":
            for path in doomed:
                path.unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        if any(p.exists() for p in doomed):
            logger.error("could not remove the export files of an erased owner in %s", folder)

    context.after_commit(remove)


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


def _process_caches(*, context: ErasureContext) -> None:
    """Figures this process keeps per owner (BM25 collection sizes)."""

    def forget():
        from memories.selectors import retrieval
        from memories.services import search_stats

        for cache in (retrieval._stats_cache, search_stats._requested):
            for key in [k for k in cache if context.owner_id in k]:
                cache.pop(key, None)

    context.after_commit(forget)


def builtin_hooks_register() -> None:
    for hook in (
        _embedding_cache,
        _admin_log,
        _telegram_updates,
        _partial_derived_rows,
        _memory_quotes,
        _export_files,
        _redis_keys,
        _process_caches,
    ):
        erasure_hook_register(hook)
