"""Writes to sessions and turns; ending a session enqueues its durable ExtractionJob atomically."""

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memories.services.embeddings import embedding_get_many
from memories.text import cjk_ngrams, estimate_tokens
from memory_project.events import event_publish
from memory_project.exceptions import Conflict
from sessions.models import ChatSession, ConversationTurn, ExtractionJob, Role


def session_create(
    *, owner, agent: str = "", channel: str = "api", external_id: str = "", title: str = ""
) -> ChatSession:
    return ChatSession.objects.create(owner=owner, agent=agent, channel=channel, external_id=external_id, title=title)


def turn_append_many(*, session: ChatSession, turns: list[dict[str, Any]]) -> list[ConversationTurn]:
    """Store turns in the order given, numbered after the session's last turn.

    Embeddings are computed before the transaction so the session row is locked only briefly.
    """
    embeddings = embedding_get_many(texts=[t["content"] for t in turns])
    now = timezone.now()
    with transaction.atomic():
        locked = ChatSession.objects.select_for_update().get(pk=session.pk)
        if locked.status == ChatSession.SessionStatus.ENDED:
            raise Conflict("This session has ended; start a new session to add turns.", code="session_ended")
        first = locked.turn_count + 1
        rows = []
        for offset, (data, vector) in enumerate(zip(turns, embeddings)):
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
                    embedding=vector,
                    search_ngrams=cjk_ngrams(f"{data.get('speaker') or ''} {content}"),
                    created_at=created_at,
                )
            )
        ConversationTurn.objects.bulk_create(rows)
        latest = max(r.created_at for r in rows)
        ChatSession.objects.filter(pk=locked.pk).update(
            turn_count=F("turn_count") + len(rows),
            last_activity_at=max(latest, locked.last_activity_at),
        )
        _enqueue_turn_extractions(session=locked, turns=rows)
        for row in rows:
            event_publish(
                owner_id=locked.owner_id,
                type="turn.created",
                data={"session_id": str(locked.id), "turn_id": str(row.id), "sequence": row.sequence, "role": row.role},
            )
    return rows


def _enqueue_turn_extractions(*, session: ChatSession, turns: list[ConversationTurn]) -> None:
    """Seed 001: a user turn of 30+ characters may trigger extraction, at most 5 per session."""
    budget = settings.TURN_EXTRACTION_MAX_PER_SESSION - session.turn_extractions
    eligible = [
        t for t in turns if t.role == Role.USER and len(t.content.strip()) >= settings.TURN_EXTRACTION_MIN_CHARS
    ]
    jobs = []
    for turn in eligible[: max(0, budget)]:
        job, created = ExtractionJob.objects.get_or_create(
            session=session,
            kind=ExtractionJob.Kind.TURN,
            range_start=turn.sequence,
            range_end=turn.sequence,
            defaults={"owner_id": session.owner_id},
        )
        if created:
            jobs.append(job)
    if jobs:
        ChatSession.objects.filter(pk=session.pk).update(turn_extractions=F("turn_extractions") + len(jobs))
        for job in jobs:
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

    transaction.on_commit(lambda: extraction_job_run.delay(str(job_id)))
