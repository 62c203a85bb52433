"""The extraction pipeline (DESIGN §4 "Session end"): extract → match → decide → write → episode.

Each job kind runs inside one transaction that first locks the session row, so two workers running
the same job (or two jobs of one session) serialise on the database, and a worker killed half-way
leaves nothing behind but a job to redo. Consolidation of a session happens once: the `consolidated`
flag is checked under the lock.
"""

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import EventType, Memory, MemoryEvent, Source, Status
from memories.moderation import looks_like_instruction
from memories.providers.llm import get_llm
from memories.providers.llm_types import CandidateMemory, TurnView
from memories.services.decisions import memory_forget_matching, memory_write
from memories.services.embeddings import embedding_get
from memories.services.entities import memory_entities_link
from memory_project.events import event_publish
from memory_project.text import estimate_tokens
from sessions.models import ChatSession, ConversationTurn, Episode, ExtractionJob
from sessions.services.scratchpad import scratchpad_complete

logger = logging.getLogger(__name__)

ACTOR = "system:extraction"
EXISTING_SUMMARY_LIMIT = 50
# Candidates the extractor is unsure of wait for a person instead of reaching the prompt.
REVIEW_BELOW_CONFIDENCE = 0.5


@dataclass
class ExtractionStats:
    added: list[dict] = field(default_factory=list)
    updated: list[dict] = field(default_factory=list)
    superseded: list[dict] = field(default_factory=list)
    reinforced: list[dict] = field(default_factory=list)
    forgotten: list[dict] = field(default_factory=list)
    skipped: str = ""

    def as_dict(self) -> dict:
        return {
            "added": self.added,
            "updated": self.updated,
            "superseded": self.superseded,
            "reinforced": self.reinforced,
            "forgotten": self.forgotten,
            "skipped": self.skipped,
        }


def turn_views(turns) -> list[TurnView]:
    return [TurnView.of(t) for t in turns]


def _existing_summary(session: ChatSession) -> list[str]:
    """What the extractor is told is already known. An LLM reads the list to skip repeats and to name
    what a statement replaces; the heuristic provider reads it only for the attributes a sentence may
    give a new value ("my rent went down to $1,750"), and leaves in what repeats a memory: a memory
    said again in a new conversation is exactly what the merge decision must see to reinforce it
    (seed 002 §3.3, §7.4); re-read turns are kept from reinforcing by the merge decision itself."""
    return list(
        Memory.objects.filter(owner_id=session.owner_id, agent=session.agent, status=Status.ACTIVE, strength__gte=0.2)
        .order_by("-strength", "-updated_at")
        .values_list("content", flat=True)[:EXISTING_SUMMARY_LIMIT]
    )


def _brief(memory) -> dict:
    return {"id": str(memory.pk), "content": memory.content, "category": memory.category, "status": memory.status}


_GENERIC_SPEAKERS = {"", "user", "assistant", "system", "tool", "me", "human", "ai"}


def _named_subject(content: str, sources: list[ConversationTurn]) -> str:
    """In a conversation with named speakers, "User …" becomes "Melanie …": a memory must say whose
    it is when several people talk (group chats, imported transcripts)."""
    speakers = {t.speaker.strip() for t in sources}
    if len(speakers) != 1:
        return content
    name = speakers.pop()
    if name.casefold() in _GENERIC_SPEAKERS:
        return content
    for generic in ("User's team", "User", "用户"):
        if content.startswith(generic):
            return name + ("'s team" if generic == "User's team" else "") + content[len(generic) :]
    return content


def candidates_apply(
    *, session: ChatSession, turns: list[ConversationTurn], candidates: list[CandidateMemory], stats: ExtractionStats
) -> None:
    """Send each candidate through the merge decision, with provenance and entities."""
    by_sequence = {t.sequence: t for t in turns}
    owner = session.owner
    for cand in candidates:
        sources = [by_sequence[s] for s in cand.source_sequences if s in by_sequence]
        if cand.action == "forget":
            # Keyed by the turn that asked: re-reading it (turn-level job, then session end) must not
            # forget the next best match as well.
            key = f"forget request in turn {sources[0].pk}: " if sources else "forget request: "
            if (
                sources
                and MemoryEvent.objects.filter(
                    owner_id=owner.pk, event_type=EventType.FORGET, reason__startswith=key
                ).exists()
            ):
                continue
            forgotten = memory_forget_matching(
                owner=owner,
                query=cand.content,
                actor=ACTOR,
                agent=session.agent,
                session=session,
                reason=key + cand.content,
            )
            if forgotten is not None:
                stats.forgotten.append(_brief(forgotten))
            continue
        structured = {"value": cand.value} if cand.value else {}
        if cand.event_date:
            structured["date"] = cand.event_date  # when it happened, resolved from the turn's time
        draft = MemoryDraft(
            content=_named_subject(cand.content, sources),
            category=cand.category,
            importance=cand.importance,
            agent=session.agent,
            source=Source.USER_EXPLICIT if cand.explicit else Source.EXTRACTION,
            retention=cand.retention,
            subject=cand.subject,
            predicate=cand.predicate,
            structured_data=structured,
            confidence=cand.confidence,
            status=Status.PENDING_REVIEW if cand.confidence < REVIEW_BELOW_CONFIDENCE else None,
            observed_at=sources[0].created_at if sources else (turns[-1].created_at if turns else timezone.now()),
            expires_at=cand.expires_at,
            replaces=cand.contradicts,
        )
        result = memory_write(owner=owner, draft=draft, actor=ACTOR, source_session=session, source_turns=sources)
        if not result.changed:
            continue  # turns read before: nothing was written, nothing to report
        bucket = {
            "add": stats.added,
            "update": stats.updated,
            "delete": stats.superseded,
            "noop": stats.reinforced,
        }[result.action]
        brief = _brief(result.memory)
        if result.previous is not None:
            brief["previous_id"] = str(result.previous.pk)
        bucket.append(brief)
        if cand.entities and result.action != "noop":
            # The text's own names were linked when it was written; the extractor's add what it knows.
            memory_entities_link(memory=result.memory, hints=cand.entities)


def _turns(session: ChatSession, start: int, end: int) -> list[ConversationTurn]:
    qs = ConversationTurn.objects.filter(session=session, owner_id=session.owner_id).order_by("sequence")
    if end:
        qs = qs.filter(sequence__gte=start, sequence__lte=end)
    return list(qs)


def _chunks(turns: list[ConversationTurn], max_tokens: int) -> list[list[ConversationTurn]]:
    """Long sessions go to the extractor in windows that fit its context."""
    chunks, current, used = [], [], 0
    for turn in turns:
        cost = turn.token_count or estimate_tokens(turn.content)
        if current and used + cost > max_tokens:
            chunks.append(current)
            current, used = [], 0
        current.append(turn)
        used += cost
    if current:
        chunks.append(current)
    return chunks


def session_consolidate(*, session: ChatSession) -> ExtractionStats:
    """Consolidate an ended session once; a second call finds it consolidated and changes nothing."""
    stats = ExtractionStats()
    with transaction.atomic():
        session = ChatSession.objects.select_for_update(of=("self",)).select_related("owner").get(pk=session.pk)
        if session.consolidated:
            stats.skipped = "already consolidated"
            return stats
        turns = _turns(session, 0, 0)
        if len(turns) < settings.CONSOLIDATION_MIN_TURNS:
            stats.skipped = f"fewer than {settings.CONSOLIDATION_MIN_TURNS} turns"
        else:
            llm = get_llm()
            existing = _existing_summary(session)
            for chunk in _chunks(turns, settings.EXTRACTION_WINDOW_TOKENS):
                candidates = llm.extract(turns=turn_views(chunk), existing=existing)
                candidates_apply(session=session, turns=turns, candidates=candidates, stats=stats)
            _episode_write(session=session, turns=turns, llm=llm)
        session.consolidated = True
        session.consolidated_at = timezone.now()
        session.memories_extracted += len(stats.added) + len(stats.superseded)
        session.save(update_fields=["consolidated", "consolidated_at", "memories_extracted"])
        _publish_completed(session=session, stats=stats, kind="session_end")
    return stats


def _episode_write(*, session: ChatSession, turns: list[ConversationTurn], llm) -> Episode:
    summary = llm.summarize_episode(turns=turn_views(turns))
    episode, _ = Episode.objects.update_or_create(
        session=session,
        defaults={
            "owner_id": session.owner_id,
            "agent": session.agent,
            "summary": summary.summary,
            "goal": summary.goal,
            "outcome": summary.outcome,
            "entities": summary.entities,
            "tools_used": summary.tools_used,
            "started_at": turns[0].created_at,
            "ended_at": turns[-1].created_at,
            "embedding": embedding_get(owner=session.owner_id, text=summary.summary or session.title or "session"),
        },
    )
    ended_at = turns[-1].created_at
    for task, completed_at in summary.completed:
        task = (task or "").strip()[:300]
        if task and not looks_like_instruction(task):
            when = completed_at or ended_at
            scratchpad_complete(owner=session.owner, agent=session.agent, task=task, completed_at=when)
    return episode


def turn_extract(*, job: ExtractionJob) -> ExtractionStats:
    """Turn-level extraction (seed 001): the job's turn with the one before it as context."""
    stats = ExtractionStats()
    with transaction.atomic():
        session = ChatSession.objects.select_for_update(of=("self",)).select_related("owner").get(pk=job.session_id)
        turns = _turns(session, max(1, job.range_start - 1), job.range_end)
        targets = [t for t in turns if job.range_start <= t.sequence <= job.range_end]
        if not targets:
            stats.skipped = "turn not found"
            return stats
        llm = get_llm()
        candidates = llm.extract(turns=turn_views(turns), existing=_existing_summary(session))
        wanted = {t.sequence for t in targets}
        candidates = [c for c in candidates if wanted & set(c.source_sequences) or not c.source_sequences]
        candidates_apply(session=session, turns=turns, candidates=candidates, stats=stats)
        _publish_completed(session=session, stats=stats, kind="turn")
    return stats


def session_compact(*, job: ExtractionJob) -> ExtractionStats:
    """Short-term compaction (seed 003 §4.2): older turns fold into the rolling summary, and what they
    held worth keeping is extracted now rather than at session end."""
    stats = ExtractionStats()
    with transaction.atomic():
        session = ChatSession.objects.select_for_update(of=("self",)).select_related("owner").get(pk=job.session_id)
        if session.summarized_through >= job.range_end:
            stats.skipped = "already compacted"
            return stats
        # Jobs queued before an earlier one ran overlap it: only what is not summarised yet is read.
        turns = _turns(session, max(job.range_start, session.summarized_through + 1), job.range_end)
        llm = get_llm()
        text = "\n".join(f"{t.speaker or t.role}: {t.content}" for t in turns)
        summary = llm.summarize(text=text, max_tokens=settings.SESSION_SUMMARY_TOKENS)
        session.rolling_summary = f"{session.rolling_summary}\n\n{summary}".strip()
        session.summarized_through = job.range_end
        later = ConversationTurn.objects.filter(session=session, sequence__gt=job.range_end)
        session.unsummarized_tokens = later.aggregate(tokens=Sum("token_count"))["tokens"] or 0
        session.save(update_fields=["rolling_summary", "summarized_through", "unsummarized_tokens"])
        candidates = llm.extract(turns=turn_views(turns), existing=_existing_summary(session))
        candidates_apply(session=session, turns=turns, candidates=candidates, stats=stats)
        _publish_completed(session=session, stats=stats, kind="compaction")
    return stats


def _publish_completed(*, session: ChatSession, stats: ExtractionStats, kind: str) -> None:
    data = {"session_id": str(session.pk), "kind": kind, **stats.as_dict()}
    event_publish(owner_id=session.owner_id, type="extraction.completed", data=data)


def extraction_job_process(*, job: ExtractionJob) -> ExtractionStats:
    """Run a claimed job and mark it done in the same transaction as its writes."""
    handlers = {
        ExtractionJob.Kind.SESSION_END: lambda: session_consolidate(session=job.session),
        ExtractionJob.Kind.MANUAL: lambda: session_consolidate(session=job.session),
        ExtractionJob.Kind.TURN: lambda: turn_extract(job=job),
        ExtractionJob.Kind.COMPACTION: lambda: session_compact(job=job),
    }
    with transaction.atomic():
        stats = handlers[job.kind]()
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=ExtractionJob.JobStatus.DONE,
            result={k: len(v) if isinstance(v, list) else v for k, v in stats.as_dict().items()},
            last_error="",
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    return stats
