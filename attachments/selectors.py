"""Reads of attachments, always scoped by owner."""

from django.apps import apps
from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.search import SearchQuery
from django.db.models import OuterRef, Q, QuerySet
from django.shortcuts import get_object_or_404

from attachments.models import Attachment
from memory_project.text import cjk_ngrams, has_cjk


def attachment_list(
    *, owner, query: str = "", session_id=None, turn_id=None, memory_id=None, content_type: str = ""
) -> QuerySet[Attachment]:
    """The owner's attachments, newest first, each with the ids of the memories extracted from its turn.

    `query` matches the caption and file name: English words by stem, CJK text by character bigrams.
    """
    qs = Attachment.objects.filter(owner=owner)
    if query:
        condition = Q(search_vector=SearchQuery(query, config="english", search_type="websearch"))
        if has_cjk(query):
            condition |= Q(search_vector=SearchQuery(cjk_ngrams(query, for_query=True), config="simple"))
        qs = qs.filter(condition)
    if session_id:
        qs = qs.filter(turn__session_id=session_id)
    if turn_id:
        qs = qs.filter(turn_id=turn_id)
    if memory_id:
        qs = qs.filter(turn__memory_links__memory_id=memory_id)
    if content_type:
        qs = qs.filter(content_type=content_type)
    # Attachments sit below sessions and memories (a turn is stored with its attachments), so the
    # memories extracted from a turn are read through the app registry, not an import.
    source_model = apps.get_model("memories", "MemorySource")
    sources = source_model.objects.filter(turn_id=OuterRef("turn_id")).order_by("memory_id").values("memory_id")
    return (
        qs.select_related("turn")
        .defer("search_vector", "search_ngrams", "turn__embedding", "turn__search_vector", "turn__search_ngrams")
        .annotate(memory_ids=ArraySubquery(sources.distinct()))
        .order_by("-created_at", "position", "id")
    )


def attachment_get(*, owner, attachment_id) -> Attachment:
    return get_object_or_404(attachment_list(owner=owner), pk=attachment_id)


def turn_attachments(*, turns: list) -> list[Attachment]:
    """The attachments of just-stored turns, in turn and position order (no query when none has any)."""
    stored = [a for t in turns for a in getattr(t, "stored_attachments", [])]
    for attachment in stored:
        attachment.memory_ids = []
    return stored
