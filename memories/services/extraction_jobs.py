"""The extraction job queue: which turns get a job, claiming a job, running it, finding lost ones.

The ExtractionJob row is the queue of record; a broker message only says "look at this row now".
A lost message (broker down, worker killed) is recovered by the periodic sweep
(`extraction_jobs_due`), and a duplicate one does nothing because only one worker at a time can
claim a job. The Celery task, the nightly lifecycle's drain step and the `memory consolidate`
command all run a job through `extraction_job_execute`.
"""

import logging
import re
import zlib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.services.extraction import ExtractionStats, extraction_job_process
from memory_project.background import background_process_attached
from sessions.choices import Role
from sessions.models import ChatSession, ConversationTurn, ExtractionJob

logger = logging.getLogger(__name__)

# Advisory-lock namespace (first of the two int4 keys) for "a live worker is processing job X".
# Session-level, so it is released when the worker's database connection goes away with it.
JOB_LOCK_NAMESPACE = 0x4A0B
JOB_LOCK_WAIT_MS = 2000
SWEEP_BATCH = 500


# --- queueing ------------------------------------------------------------------------------------

EXPLICIT_COMMAND = re.compile(r"^\W*(please\s+)?(remember|forget)\b|记住|忘掉|忘记", re.IGNORECASE)


def extraction_jobs_enqueue_for_turns(*, session: ChatSession, turns: list[ConversationTurn]) -> None:
    """The jobs a batch of stored turns calls for, queued in the transaction that stored them;
    `session` is the row as locked before they were stored."""
    _enqueue_turn_extractions(session=session, turns=turns)
    _enqueue_compaction(session=session, turns=turns)


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
        # A plain insert, no lookup first: the turn was numbered just now, under the session's row
        # lock, after every turn the session ever had, so no job can name its sequence yet.
        jobs.append(
            ExtractionJob.objects.create(
                owner_id=session.owner_id,
                session=session,
                kind=ExtractionJob.Kind.TURN,
                range_start=turn.sequence,
                range_end=turn.sequence,
            )
        )
        counted += 0 if explicit else 1
    if counted:
        ChatSession.objects.filter(pk=session.pk).update(turn_extractions=F("turn_extractions") + counted)
    for job in jobs:
        extraction_job_dispatch_on_commit(job_id=job.id)


def _enqueue_compaction(*, session: ChatSession, turns: list[ConversationTurn]) -> None:
    """Seed 003 §4.2: past the message or token limit, the older half of the unsummarised turns is
    compacted into the rolling summary."""
    # Turns are numbered without gaps and never deleted one by one: the row's counters, as locked
    # before `turns` were added, plus `turns`, are the unsummarised turns.
    count = session.turn_count + len(turns) - session.summarized_through
    tokens = session.unsummarized_tokens + sum(t.token_count for t in turns)
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


def extraction_job_dispatch_on_commit(*, job_id) -> None:
    """Send the job to a worker once the transaction that queued it commits."""
    # memories.tasks imports this module for the services its tasks call: imported here, not at the top.
    from memories.tasks import extraction_job_run

    if not background_process_attached():  # that process runs the pending jobs, read from the table
        transaction.on_commit(lambda: extraction_job_run.delay(str(job_id)))


def extraction_jobs_retry(*, jobs) -> None:
    """Asked for by a person (the admin): each unfinished job of `jobs` (a queryset) goes back to
    pending with its attempts reset, and is sent again."""
    for job in jobs.exclude(status=ExtractionJob.JobStatus.DONE):
        ExtractionJob.objects.filter(pk=job.pk).update(status=ExtractionJob.JobStatus.PENDING, attempts=0)
        extraction_job_dispatch_on_commit(job_id=job.pk)


# --- claiming ------------------------------------------------------------------------------------


def _job_lock_key(job_id) -> int:
    # int4 range; a collision only makes one job wait for the next sweep, never run twice.
    return zlib.crc32(str(job_id).encode()) - 2**31


def _job_lock_try(job_id) -> bool:
    """Take the job's lock, waiting briefly: a worker killed a moment ago may still have a backend
    that has not yet noticed, and its message is often redelivered within that moment."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = {int(JOB_LOCK_WAIT_MS)}")
            # Session-level: the lock outlives this transaction, until released or disconnected.
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [JOB_LOCK_NAMESPACE, _job_lock_key(job_id)])
            # Within a caller's transaction SET LOCAL would otherwise last until that one ends.
            cursor.execute("SET LOCAL lock_timeout TO DEFAULT")
        return True
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == "55P03":  # lock_not_available: a live worker has it
            return False
        raise


def _job_lock_release(job_id) -> None:
    if connection.connection is None:  # the connection (and its locks) is already gone
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [JOB_LOCK_NAMESPACE, _job_lock_key(job_id)])


def _held_job_lock_keys() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = %s"
            " AND objsubid = 2",
            [JOB_LOCK_NAMESPACE],
        )
        # pg_locks shows the int4 key as an unsigned oid.
        return {(row[0] if row[0] < 2**31 else row[0] - 2**32) for row in cursor.fetchall()}


def extraction_job_claim(job_id, *, hold: bool = True) -> ExtractionJob | None:
    """Claim a job; None when a live worker has it, or it is finished or out of attempts.

    A `running` job whose lock is free was abandoned by a worker that died, and is re-claimed.
    The caller keeps the job's lock while it processes the job, so nobody takes it over meanwhile,
    and must call `extraction_job_release` after; with `hold=False` the lock is let go at once.
    """
    if not _job_lock_try(job_id):
        return None
    now = timezone.now()
    claimable = (
        Q(status=ExtractionJob.JobStatus.PENDING)
        | Q(status=ExtractionJob.JobStatus.FAILED, attempts__lt=F("max_attempts"))
        | Q(status=ExtractionJob.JobStatus.RUNNING)
    )
    try:
        claimed = ExtractionJob.objects.filter(claimable, pk=job_id).update(
            status=ExtractionJob.JobStatus.RUNNING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now
        )
    except Exception:
        extraction_job_release(job_id)
        raise
    if not claimed or not hold:
        extraction_job_release(job_id)
    return ExtractionJob.objects.select_related("session", "owner").get(pk=job_id) if claimed else None


def extraction_job_release(job_id) -> None:
    try:
        _job_lock_release(job_id)
    except Exception:  # a broken connection has dropped the lock already
        logger.debug("could not release the lock of job %s", job_id, exc_info=True)


# --- running -------------------------------------------------------------------------------------


@dataclass
class JobOutcome:
    """What `extraction_job_execute` did: "skipped" (not claimed), "done" or "failed"."""

    status: str
    job: ExtractionJob | None = None
    stats: ExtractionStats | None = None
    error: Exception | None = None


def extraction_job_execute(*, job_id) -> JobOutcome:
    """Claim the job, run it, record a failure on its row, and let go of its lock."""
    job = extraction_job_claim(job_id)
    if job is None:
        return JobOutcome(status="skipped")
    try:
        stats = extraction_job_process(job=job)
    except Exception as exc:
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=ExtractionJob.JobStatus.FAILED,
            last_error=f"{exc.__class__.__name__}: {exc}"[:2000],
            updated_at=timezone.now(),
        )
        return JobOutcome(status="failed", job=job, error=exc)
    finally:
        extraction_job_release(job.pk)
    return JobOutcome(status="done", job=job, stats=stats)


def extraction_jobs_due(*, now=None) -> list[ExtractionJob]:
    """Jobs whose message was lost or whose worker died: pending or failed (with attempts left) for
    longer than EXTRACTION_SWEEP_AFTER_SECONDS, or running under a claim that old whose worker no
    longer holds the job's lock."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.EXTRACTION_SWEEP_AFTER_SECONDS)
    due = (
        Q(status=ExtractionJob.JobStatus.PENDING, updated_at__lt=cutoff)
        | Q(status=ExtractionJob.JobStatus.FAILED, attempts__lt=F("max_attempts"), updated_at__lt=cutoff)
        | Q(status=ExtractionJob.JobStatus.RUNNING, claimed_at__lt=cutoff)
    )
    jobs = list(ExtractionJob.objects.filter(due).order_by("created_at")[:SWEEP_BATCH])
    held = _held_job_lock_keys() if any(j.status == ExtractionJob.JobStatus.RUNNING for j in jobs) else set()
    return [j for j in jobs if not (j.status == ExtractionJob.JobStatus.RUNNING and _job_lock_key(j.pk) in held)]
