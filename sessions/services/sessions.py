"""Writes to sessions and turns; ending a session enqueues its durable ExtractionJob atomically.

What follows a stored turn or an ended session (its vector, its extraction) belongs to the apps that
receive sessions.signals.
"""

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from attachments.services import attachments_discard, attachments_prepare, attachments_store
from memory_project.events import event_publish
from memory_project.exceptions import Conflict
from memory_project.text import cjk_ngrams, estimate_tokens
from sessions.models import ChatSession, ConversationTurn, ExtractionJob
from sessions.signals import session_ended, turns_stored


def session_create(
    *, owner, agent: str = "", channel: str = "api", external_id: str = "", title: str = ""
) -> ChatSession:
    return ChatSession.objects.create(owner=owner, agent=agent, channel=channel, external_id=external_id, title=title)


def turn_append_many(*, session: ChatSession, turns: list[dict[str, Any]]) -> list[ConversationTurn]:
    """Store turns in the order given, numbered after the session's last turn.

    Their vectors are computed after the commit, off the request, by the receivers of `turns_stored`
    (memories.services.turn_embeddings). Their attachments are checked (a 413/415 before anything
    is stored) and stored with them.
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
            unsummarized_tokens=F("unsummarized_tokens") + sum(r.token_count for r in rows),
            last_activity_at=max(latest, locked.last_activity_at),
        )
        turns_stored.send(sender=ChatSession, session=locked, turns=rows)
        for row in rows:
            event_publish(
                owner_id=locked.owner_id,
                type="turn.created",
                data={"session_id": str(locked.id), "turn_id": str(row.id), "sequence": row.sequence, "role": row.role},
            )
    return rows


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
        session_ended.send(sender=ChatSession, session=locked, job=job)
    session.refresh_from_db()
    return job
