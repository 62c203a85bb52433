"""Recomputing stored vectors after the embedding model changed (`manage.py memory reembed`)."""

from collections.abc import Callable

from django.conf import settings

from memories.models import Memory
from memories.services.embeddings import embedding_get_many
from memories.services.turn_embeddings import turn_embedding_text, turn_vectors
from sessions.models import ConversationTurn, Episode


def embedding_dimension_problem() -> str:
    """Why the configured provider's vectors cannot be stored ("" when they can)."""
    # Owner 0 is nobody: the probe stays in this process (query=True), never in the table.
    probe = embedding_get_many(owner=0, texts=["dimension probe"], query=True)[0]
    if len(probe) == settings.EMBEDDING_DIM:
        return ""
    return (
        f"the embedding provider returns {len(probe)} dimensions but the database stores "
        f"{settings.EMBEDDING_DIM} (EMBEDDING_DIM): change one of them first"
    )


def embeddings_recompute(*, owners: list | None, batch_size: int, advance: Callable[[int], None]) -> dict:
    """New vectors for the memories, turns and episodes of `owners` (None: everyone's), `batch_size`
    rows per statement; `advance(n)` is told of every batch. Returns the rows done of each kind."""

    def scoped(qs):
        return qs if owners is None else qs.filter(owner__in=owners)

    return {
        "memories": _memories(scoped(Memory.objects.all()), batch_size, advance),
        "turns": _turns(scoped(ConversationTurn.objects.all()), batch_size, advance),
        "episodes": _episodes(scoped(Episode.objects.all()), batch_size, advance),
    }


def embeddings_recompute_total(*, owners: list | None) -> int:
    """How many rows `embeddings_recompute` will go through."""
    kinds = (Memory, ConversationTurn, Episode)
    return sum((k.objects.all() if owners is None else k.objects.filter(owner__in=owners)).count() for k in kinds)


def _embed_owned(rows, texts: list[str]) -> list[list[float]]:
    """Vectors for `texts`, each through its row owner's cache (the cache is scoped by owner)."""
    by_owner: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        by_owner.setdefault(row.owner_id, []).append(index)
    out: list = [None] * len(rows)
    for owner_id, indexes in by_owner.items():
        for index, vector in zip(indexes, embedding_get_many(owner=owner_id, texts=[texts[i] for i in indexes])):
            out[index] = vector
    return out


def _by_pk(qs, *, fields: tuple, text: Callable, batch_size: int, advance) -> int:
    """Every row of `qs` in primary-key pages, its vector from `text(row)`."""
    done, last = 0, None
    while True:
        page = qs.order_by("pk") if last is None else qs.order_by("pk").filter(pk__gt=last)
        rows = list(page.only("pk", "owner_id", *fields)[:batch_size])
        if not rows:
            return done
        for row, vector in zip(rows, _embed_owned(rows, [text(r) for r in rows])):
            row.embedding = vector
        qs.model.objects.bulk_update(rows, ["embedding"])
        done += len(rows)
        last = rows[-1].pk
        advance(len(rows))


def _memories(qs, batch_size: int, advance) -> int:
    return _by_pk(qs, fields=("content",), text=lambda r: r.content, batch_size=batch_size, advance=advance)


def _episodes(qs, batch_size: int, advance) -> int:
    return _by_pk(
        qs.select_related("session"),
        fields=("summary", "session__title"),
        text=lambda r: r.summary or r.session.title or "session",
        batch_size=batch_size,
        advance=advance,
    )


def _turns(qs, batch_size: int, advance) -> int:
    """As at ingest (memories.services.turn_embeddings.turn_vectors), session by session in order,
    so each turn is read after the one before it."""
    done = 0
    session_ids = qs.order_by().values_list("session_id", flat=True).distinct()
    for session_id in session_ids.iterator():
        previous_text, last = None, 0
        while True:
            rows = list(
                qs.filter(session_id=session_id, sequence__gt=last)
                .order_by("sequence")
                .only("pk", "owner_id", "sequence", "speaker", "content")[:batch_size]
            )
            if not rows:
                break
            texts = [turn_embedding_text(r.speaker, r.content) for r in rows]
            vectors = turn_vectors(owner=rows[0].owner_id, texts=texts, before=[previous_text, *texts[:-1]])
            for row, vector in zip(rows, vectors):
                row.embedding = vector
            ConversationTurn.objects.bulk_update(rows, ["embedding"])
            previous_text, last = texts[-1], rows[-1].sequence
            done += len(rows)
            advance(len(rows))
    return done
