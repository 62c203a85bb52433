"""Writes to sessions and turns; ending a session enqueues its durable ExtractionJob atomically."""

import re
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from attachments.services import attachments_discard, attachments_prepare, attachments_store
from memory_project.background import background_process_attached
from memory_project.events import event_publish
from memory_project.exceptions import Conflict
from memory_project.text import cjk_ngrams, estimate_tokens
from sessions.models import ChatSession, ConversationTurn, ExtractionJob, Role
from sessions.services.turn_embeddings import turn_embedding_text, turn_embeddings_request, turn_vectors


def session_create(
    *, owner, agent: str = "", channel: str = "api", external_id: str = "", title: str = ""
) -> ChatSession:
    return ChatSession.objects.create(owner=owner, agent=agent, channel=channel, external_id=external_id, title=title)


def turn_embeddings(*, session: ChatSession, turns: list[dict[str, Any]]) -> list[list[float]]:
    """The vectors `turns` would get if appended to `session` now (see turn_embeddings.turn_vectors)."""
    texts = [turn_embedding_text(t.get("speaker") or "", t["content"]) for t in turns]
    previous = (
        ConversationTurn.objects.filter(session=session).order_by("-sequence").values_list("speaker", "content").first()
    )
    before = [turn_embedding_text(*previous) if previous else None, *texts[:-1]]
    return turn_vectors(owner=session.owner_id, texts=texts, before=before)


def turn_append_many(*, session: ChatSession, turns: list[dict[str, Any]]) -> list[ConversationTurn]:
    """Store turns in the order given, numbered after the session's last turn.

    Their vectors are computed after the commit, off the request (services.turn_embeddings). Their
    attachments are checked (a 413/415 before anything is stored) and stored with them.
    """
    now = timezone.now()
    files = attachments_prepare(owner_id=session.owner_id, turns=turns)
    try:
        return _turns_store(session=session, turns=turns, files=files, now=now)
    except BaseException:
        attachments_discard(prepared=files)
        raise


def _turns_store(*, session: ChatSession, turns: list[dict[str, Any]], files: list, now) -> list[ConversationTurn]:
    with transaction.atomic():
        locked = ChatSession.objects.select_for_update().get(pk=session.pk)
        if locked.status == ChatSession.SessionStatus.ENDED:
            raise Conflict("This session has ended; start a new session to add turns.", code="session_ended")
        first = locked.turn_count + 1
        rows = []
        for offset, data in enumerate(turns):
            content = data["content"]
            created_at: datetime = data.get("created_at") or now
            rows.append(
                ConversationTurn(
                    owner_id=locked.owner_id,
                    session=locked,
                    sequence=first + offset,
                    role=data["role"],
                    speaker=data.get("speaker") or "",
                    content=content,
                    tool_name=data.get("tool_name") or "",
                    tool_calls=data.get("tool_calls"),
                    tool_error=data.get("tool_error") or "",
                    token_count=estimate_tokens(content),
                    metadata=data.get("metadata") or {},
                    search_ngrams=cjk_ngrams(f"{data.get('speaker') or ''} {content}"),
                    created_at=created_at,
                )
            )
        ConversationTurn.objects.bulk_create(rows)
        if any(files):
            attachments_store(turns=rows, prepared=files)
        latest = max(r.created_at for r in rows)
        ChatSession.objects.filter(pk=locked.pk).update(
            turn_count=F("turn_count") + len(rows),
            last_activity_at=max(latest, locked.last_activity_at),
        )
        turn_embeddings_request()
        _enqueue_turn_extractions(session=locked, turns=rows)
        _enqueue_compaction(session=locked)
        for row in rows:
            event_publish(
                owner_id=locked.owner_id,
                type="turn.created",
                data={"session_id": str(locked.id), "turn_id": str(row.id), "sequence": row.sequence, "role": row.role},
            )
    return rows


EXPLICIT_COMMAND = re.compile(r"^\W*(please\s+)?(remember|forget)\b|记住|忘掉|忘记", re.IGNORECASE)


def _enqueue_turn_extractions(*, session: ChatSession, turns: list[ConversationTurn]) -> None:
    """Seed 001: a user turn of 30+ characters may trigger extraction, at most 5 per session.

    An explicit "remember …" / "forget …" is acted on straight away, whatever its length, and does
    not use up that allowance.
    """
    budget = settings.TURN_EXTRACTION_MAX_PER_SESSION - session.turn_extractions
    jobs, counted = [], 0
    for turn in turns:
        if turn.role != Role.USER:
            continue
        explicit = bool(EXPLICIT_COMMAND.search(turn.content))
        if not explicit and (counted >= budget or len(turn.content.strip()) < settings.TURN_EXTRACTION_MIN_CHARS):
            continue
        job, created = ExtractionJob.objects.get_or_create(
            session=session,
            kind=ExtractionJob.Kind.TURN,
            range_start=turn.sequence,
            range_end=turn.sequence,
            defaults={"owner_id": session.owner_id},
        )
        if created:
            jobs.append(job)
            counted += 0 if explicit else 1
    if counted:
        ChatSession.objects.filter(pk=session.pk).update(turn_extractions=F("turn_extractions") + counted)
    for job in jobs:
        extraction_job_dispatch_on_commit(job_id=job.id)


def _enqueue_compaction(*, session: ChatSession) -> None:
    """Seed 003 §4.2: past the message or token limit, the older half of the unsummarised turns is
    compacted into the rolling summary."""
    pending = ConversationTurn.objects.filter(session=session, sequence__gt=session.summarized_through)
    totals = pending.aggregate(count=Count("pk"), tokens=Sum("token_count"))  # one query on every turn post
    count, tokens = totals["count"], totals["tokens"] or 0
    if count <= settings.SESSION_MAX_MESSAGES and tokens <= settings.SESSION_SHORT_TERM_TOKENS:
        return
    start = session.summarized_through + 1
    end = session.summarized_through + max(1, count // 2)
    job, created = ExtractionJob.objects.get_or_create(
        session=session,
        kind=ExtractionJob.Kind.COMPACTION,
        range_start=start,
        range_end=end,
        defaults={"owner_id": session.owner_id},
    )
    if created:
        extraction_job_dispatch_on_commit(job_id=job.id)


def session_end(*, session: ChatSession) -> ExtractionJob | None:
    """Mark the session ended and enqueue its consolidation job, both or neither.

    Ending an ended session changes nothing and returns its existing job.
    """
    with transaction.atomic():
        locked = ChatSession.objects.select_for_update().get(pk=session.pk)
        if locked.status == ChatSession.SessionStatus.ENDED:
            return ExtractionJob.objects.filter(session=locked, kind=ExtractionJob.Kind.SESSION_END).first()
        locked.status = ChatSession.SessionStatus.ENDED
        locked.ended_at = timezone.now()
        locked.save(update_fields=["status", "ended_at"])
        job = ExtractionJob.objects.create(
            owner_id=locked.owner_id,
            session=locked,
            kind=ExtractionJob.Kind.SESSION_END,
            range_start=1 if locked.turn_count else 0,
            range_end=locked.turn_count,
        )
        event_publish(
            owner_id=locked.owner_id,
            type="session.ended",
            data={"session_id": str(locked.id), "turn_count": locked.turn_count},
        )
        extraction_job_dispatch_on_commit(job_id=job.id)
    session.refresh_from_db()
    return job


def extraction_job_dispatch_on_commit(*, job_id) -> None:
    from sessions.tasks import extraction_job_run

    if not background_process_attached():  # that process runs the pending jobs, read from the table
        transaction.on_commit(lambda: extraction_job_run.delay(str(job_id)))
