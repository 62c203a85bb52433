"""What an erasure of an owner, an agent or single memories removes from memories' side besides the
rows its plan finds by foreign key: cached embeddings of the erased text, what was derived from it
(entities, BM25 statistics), quotes of it in digests and MEMORY.md, the lifecycle's export files and
this process's per-owner figures. Registered with the erasure app from MemoriesConfig.ready()."""

import logging
import shutil

from django.apps import apps
from django.conf import settings

from erasure.hooks import ErasureContext, erasure_hook_register
from memories.models import CoreMemory, DailyDigest, EmbeddingCache, Entity, LexemeFrequency, SearchStats
from memories.selectors.search.collection import corpus_counts_forget
from memories.services import embeddings, search_stats
from memories.services.lifecycle import export_dir_for
from memories.services.turn_embeddings import turn_embedding_text
from memory_project.text import content_hash, normalize

logger = logging.getLogger(__name__)

# --- the embedding cache: the owner's rows, kept only while another of the owner's rows has the text --


def _owner_texts(context: ErasureContext) -> set[str]:
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
    texts = _owner_texts(context)
    if not texts:
        return
    texts -= _shared_texts(context, texts)
    # The cache is keyed by a hash of model, owner and text; every model that ever wrote to it is tried.
    model_names = list(EmbeddingCache.objects.values_list("model", flat=True).distinct())
    keys = embeddings.embedding_cache_keys(owner_id=context.owner_id, texts=texts, models=model_names)
    if context.plan.partial:
        # A whole owner's rows are reached by the plan through EmbeddingCache.owner; part of them here.
        deleted = 0
        for start in range(0, len(keys), 5000):
            deleted += EmbeddingCache.objects.filter(key__in=keys[start : start + 5000])._raw_delete("default")
        context.count("memories.EmbeddingCache", deleted)

    context.after_commit(lambda: embeddings.embedding_cache_forget_local(keys=keys))


# --- rows derived from the erased ones ---------------------------------------------------------


def _partial_derived_rows(*, context: ErasureContext) -> None:
    """Erasing one agent (or some memories) leaves the owner's own rows, except what was derived
    from the erased ones: entities only they mention and BM25 statistics (their lexemes come from
    the erased text)."""
    if not context.plan.partial:
        return
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


# --- quotes of erased memories, files and per-process figures -----------------------------------


def _memory_quotes(*, context: ErasureContext) -> None:
    """Purging single memories: the owner's other rows that quote them lose the quote. Daily digests
    list the day's memory events with their text; MEMORY.md / USER.md / learnings.md (generated, and
    the files the lifecycle wrote) contain it until the next nightly refresh."""
    if context.plan.memory_ids is None:
        return
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


def _export_files(*, context: ErasureContext) -> None:
    """MEMORY.md / USER.md / learnings.md (and their .bak) the lifecycle wrote for the owner."""
    base = getattr(settings, "MEMORY_EXPORT_DIR", None)
    if not base or context.plan.memory_ids is not None:
        return
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


def _process_caches(*, context: ErasureContext) -> None:
    """Figures this process keeps per owner (BM25 collection sizes)."""

    def forget():
        corpus_counts_forget(owner_id=context.owner_id)
        search_stats.search_stats_requests_forget(owner_id=context.owner_id)

    context.after_commit(forget)


def memory_erasure_hooks_register() -> None:
    for hook in (_embedding_cache, _partial_derived_rows, _memory_quotes, _export_files, _process_caches):
        erasure_hook_register(hook)
