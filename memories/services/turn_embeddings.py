"""Turn vectors, computed after the turns are stored rather than before.

Posting a turn used to embed it (twice: alone and with the turn before) while the client waited;
under twenty concurrent clients that was most of a two-second answer. Now a turn is stored without
a vector and answered at once. Full-text search finds it from that moment (its postings are written
by the insert's trigger); vector search once the vector is there, normally within a fraction of a
second (bench/load.py measures it). The stored turn without a vector is itself the queue of record:
nothing else has to survive a crash. The request asks for a fill after it commits (a Celery task,
or the in-process background thread without a broker), and a periodic sweep fills whatever such a
request left behind (a worker killed half-way, a broker that was down). Each fill claims its batch
with FOR UPDATE SKIP LOCKED, so fills running at once never embed a turn twice, and embeds the whole
batch in one model call, which is where the cost per turn falls under load.
"""

import threading
import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories.services.embeddings import embedding_get_many, vector_mean_direction
from memory_project.background import background_process_attached, background_send
from sessions.models import ChatSession, ConversationTurn

FILL_BATCH = 32


def turn_embedding_text(speaker: str, content: str) -> str:
    """What a turn's vector encodes: who said it matters as much as what was said ("What did
    Caroline research?" is about Caroline's own turns, not the ones addressed to her)."""
    return f"{speaker}: {content}" if speaker else content


def turn_vectors(*, owner, texts: list[str], before: list[str | None]) -> list[list[float]]:
    """Each turn's vector is the mean of its own embedding and that of the turn read together with
    the one before it: a reply ("Yes, last weekend!") means little without what it answers.
    Measured on the LoCoMo development set: Recall@10 0.78 → 0.80. `before[i]` is the embedding text
    of the turn before turn i (None for a session's first turn)."""
    contextual = [f"{b}\n{t}" if b else t for b, t in zip(before, texts)]
    # One model call for all of an owner's turns in the batch: far cheaper per text than one each.
    vectors = embedding_get_many(owner=owner, texts=texts + contextual)
    own, with_context = vectors[: len(texts)], vectors[len(texts) :]
    return [vector_mean_direction([a, b]) for a, b in zip(own, with_context)]


def turn_embeddings(*, session: ChatSession, turns: list[dict[str, Any]]) -> list[list[float]]:
    """The vectors `turns` would get if appended to `session` now (see turn_vectors)."""
    texts = [turn_embedding_text(t.get("speaker") or "", t["content"]) for t in turns]
    previous = (
        ConversationTurn.objects.filter(session=session).order_by("-sequence").values_list("speaker", "content").first()
    )
    before = [turn_embedding_text(*previous) if previous else None, *texts[:-1]]
    return turn_vectors(owner=session.owner_id, texts=texts, before=before)


def turn_embeddings_fill(*, batch: int = FILL_BATCH) -> int:
    """Give a vector to every stored turn that has none, oldest first, `batch` turns per transaction;
    returns how many it embedded. Turns another fill has claimed are left to it."""
    done = 0
    while True:
        filled = turn_embeddings_fill_batch(batch=batch)
        done += filled
        if filled < batch:
            return done


def turn_embeddings_fill_batch(*, batch: int) -> int:
    """Give a vector to the `batch` oldest turns that have none and no other fill has claimed, in
    one transaction; returns how many it embedded."""
    with transaction.atomic():
        rows = list(
            ConversationTurn.objects.filter(embedding__isnull=True)
            .order_by("received_at")
            .select_for_update(skip_locked=True, of=("self",))
            .only("pk", "owner_id", "session_id", "sequence", "speaker", "content")[:batch]
        )
        if not rows:
            return 0
        texts = [turn_embedding_text(r.speaker, r.content) for r in rows]
        text_at = {(r.session_id, r.sequence): text for r, text in zip(rows, texts)}
        wanted = {(r.session_id, r.sequence - 1) for r in rows if r.sequence > 1} - text_at.keys()
        if wanted:
            previous = Q()
            for session_id, sequence in wanted:
                previous |= Q(session_id=session_id, sequence=sequence)
            for session_id, sequence, speaker, content in ConversationTurn.objects.filter(previous).values_list(
                "session_id", "sequence", "speaker", "content"
            ):
                text_at[(session_id, sequence)] = turn_embedding_text(speaker, content)
        by_owner: dict[int, list[int]] = {}
        for index, row in enumerate(rows):
            by_owner.setdefault(row.owner_id, []).append(index)
        # Owners in one order in every fill: each inserts cache rows in (owner, key) order, so two
        # fills sharing texts wait on each other one way only (a deadlock seen under load).
        for owner_id, indexes in sorted(by_owner.items()):
            vectors = turn_vectors(
                owner=owner_id,
                texts=[texts[i] for i in indexes],
                before=[text_at.get((rows[i].session_id, rows[i].sequence - 1)) for i in indexes],
            )
            for i, vector in zip(indexes, vectors):
                rows[i].embedding = vector
        ConversationTurn.objects.bulk_update(rows, ["embedding"])
    return len(rows)


# In-process fills (no broker) are coalesced: while one is queued and not started, the requests that
# commit meanwhile add nothing to the queue, as that fill will find their turns too.
_fill_queued = threading.Event()


def turn_embeddings_request(*, stored: int) -> None:
    """Ask, once the current transaction commits, for the `stored` turns it stored to get their
    vectors.

    An attached web worker leaves them to the background process, unless turns have waited too long
    for it: then this request embeds as many of the oldest waiting turns (up to OVERDUE_HELP_MAX)
    itself, after its commit and before it answers. A fill queued on the worker's own thread instead
    only shared the cores with the requests, which went on storing turns faster than they were
    embedded: under 20 clients that never pause the oldest waited 40 s and more, growing with the
    run. Paying in the request that adds to the queue slows the intake until the queue is back within
    the bound."""
    if not background_process_attached():
        transaction.on_commit(_send)
    elif turn_embeddings_overdue():
        # robust: the turns are committed, and a failing model must not turn their 201 into a 500
        # (the background process and the sweep still fill them).
        turns = min(stored, OVERDUE_HELP_MAX)

        def overdue_turns_fill() -> None:  # a named function: a robust callback's error names it
            turn_embeddings_fill_batch(batch=turns)

        transaction.on_commit(overdue_turns_fill, robust=True)


# A post of many turns at once helps with this many at most, so that its answer stays within ~1 s.
OVERDUE_HELP_MAX = 64


def _send() -> None:
    # memories.tasks imports this module for the fill its tasks run: imported here, not at the top.
    from memories.tasks import turn_embeddings_task

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        turn_embeddings_task.delay()  # a lost message is left to the sweep
    elif not _fill_queued.is_set():
        _fill_queued.set()
        background_send(turn_embeddings_task)


def turn_embeddings_overdue() -> bool:
    """Whether a stored turn has waited for its vector longer than BACKGROUND_MAX_LAG_SECONDS: the
    background process is starved of CPU (requests come first) or gone. An attached web worker's turn
    posts then embed waiting turns themselves (turn_embeddings_request), so vector search lags by a
    bounded time, however busy the server. Asked on every turn post and answered from the database
    at most once a second per process."""
    global _overdue, _overdue_checked_at
    if not settings.BACKGROUND_MAX_LAG_SECONDS:
        return False
    now = time.monotonic()
    with _overdue_lock:
        if now - _overdue_checked_at < OVERDUE_CHECK_SECONDS:
            return _overdue
        _overdue_checked_at = now
    oldest = (
        ConversationTurn.objects.filter(embedding__isnull=True)
        .order_by("received_at")
        .values_list("received_at", flat=True)
        .first()
    )
    _overdue = oldest is not None and (timezone.now() - oldest).total_seconds() > settings.BACKGROUND_MAX_LAG_SECONDS
    return _overdue


def turn_embeddings_overdue_reset() -> None:
    """Ask the database at the next call (a newly attached process, tests)."""
    global _overdue, _overdue_checked_at
    with _overdue_lock:
        _overdue, _overdue_checked_at = False, -OVERDUE_CHECK_SECONDS


OVERDUE_CHECK_SECONDS = 1.0
_overdue_lock = threading.Lock()
_overdue = False
_overdue_checked_at = -OVERDUE_CHECK_SECONDS


def fill_started() -> None:
    """Called by an in-process fill as it starts: turns committed from now on need another one."""
    _fill_queued.clear()
