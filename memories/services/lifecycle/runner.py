"""The run: every step in order for one owner, under a per-owner advisory lock, with progress events."""

import logging
import time
from contextlib import nullcontext
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from memories.models import DailyDigest, LifecycleRun, Memory
from memories.services.lifecycle.common import StepContext, wall_now
from memories.services.lifecycle.compress import compress_step
from memories.services.lifecycle.decay import decay_step, thresholds_step
from memories.services.lifecycle.dedup import dedup_step
from memories.services.lifecycle.digests import digests_step
from memories.services.lifecycle.drain import drain_step
from memories.services.lifecycle.exports import exports_step
from memories.services.lifecycle.forget import attachments_step, cap_step, expire_step
from memory_project.events import event_publish
from sessions.models import ChatSession

logger = logging.getLogger(__name__)

LOCK_BUSY_ERROR = "another run in progress"
INTERRUPTED_ERROR = "interrupted: the process running it stopped before it finished"

STEPS = (
    ("drain", drain_step),
    ("dedup", dedup_step),
    ("decay", decay_step),
    ("thresholds", thresholds_step),
    ("expire", expire_step),
    ("attachments", attachments_step),
    ("compress", compress_step),
    ("digests", digests_step),
    ("exports", exports_step),
    ("cap", cap_step),
)


def _lock_key(owner_id) -> str:
    return f"memory.lifecycle:{owner_id}"


def _lock_try(owner_id) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [_lock_key(owner_id)])
        return bool(cursor.fetchone()[0])


def _lock_release(owner_id) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [_lock_key(owner_id)])
    except Exception:  # a lost connection has released the lock already
        logger.warning("could not release the lifecycle lock of owner %s", owner_id, exc_info=True)


def lifecycle_completed_payload(run: LifecycleRun) -> dict:
    """The data of a "lifecycle.completed" event (the live feed rebuilds past ones from the run)."""
    return {
        "run_id": run.pk,
        "status": run.status,
        "counts": run.counts,
        "error": run.error,
        "duration_ms": run.duration_ms,
    }


def _finish(run: LifecycleRun, started: float) -> None:
    run.finished_at = wall_now()
    run.duration_ms = int((time.perf_counter() - started) * 1000)
    run.save(update_fields=["status", "steps", "counts", "error", "finished_at", "duration_ms"])
    event_publish(owner_id=run.owner_id, type="lifecycle.completed", data=lifecycle_completed_payload(run))


def lifecycle_run(*, owner, trigger: str = "manual", now: datetime | None = None, export_dir=None) -> LifecycleRun:
    """Run every step for `owner`; a run finding another in progress is "failed" with LOCK_BUSY_ERROR."""
    now = now or timezone.now()
    started = time.perf_counter()
    run = LifecycleRun.objects.create(owner=owner, trigger=trigger[:20], status=LifecycleRun.RunStatus.RUNNING)
    if not _lock_try(owner.pk):
        run.status = LifecycleRun.RunStatus.FAILED
        run.error = LOCK_BUSY_ERROR
        _finish(run, started)
        return run
    errors = []
    try:
        # Holding the lock proves no other run of this owner is alive: "running" leftovers crashed.
        LifecycleRun.objects.filter(owner=owner, status=LifecycleRun.RunStatus.RUNNING).exclude(pk=run.pk).update(
            status=LifecycleRun.RunStatus.FAILED, error=INTERRUPTED_ERROR, finished_at=wall_now()
        )
        context = StepContext(owner=owner, run=run, now=now, export_dir=export_dir)
        for index, (name, step) in enumerate(STEPS, start=1):
            step_started = time.perf_counter()
            entry: dict = {"name": name}
            # Inside a caller's transaction a failing step must only roll back itself.
            guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
            try:
                with guard:
                    counts, meta = step(context)
                entry.update(status="done", counts=counts, **meta)
            except Exception as exc:
                logger.exception("lifecycle step %s failed for owner %s", name, owner.pk)
                counts = {}
                entry.update(status="failed", counts=counts, error=f"{exc.__class__.__name__}: {exc}"[:1000])
                errors.append(f"{name}: {exc.__class__.__name__}: {exc}")
            entry["duration_ms"] = int((time.perf_counter() - step_started) * 1000)
            run.steps = [*run.steps, entry]
            run.counts = {**run.counts, name: counts}
            run.save(update_fields=["steps", "counts"])
            event_publish(
                owner_id=owner.pk,
                type="lifecycle.progress",
                data={"run_id": run.pk, "step": name, "index": index, "total": len(STEPS), **entry},
            )
        run.status = LifecycleRun.RunStatus.FAILED if errors else LifecycleRun.RunStatus.COMPLETED
        run.error = "\n".join(errors)[:5000]
    except BaseException as exc:
        run.status = LifecycleRun.RunStatus.FAILED
        run.error = "\n".join([*errors, f"{exc.__class__.__name__}: {exc}"])[:5000]
        raise
    finally:
        _lock_release(owner.pk)
        _finish(run, started)
    return run


def lifecycle_owners():
    """Owners with anything for the lifecycle to do: memories, sessions or digests."""
    User = get_user_model()
    return (
        User.objects.filter(is_active=True)
        .filter(
            Exists(Memory.objects.filter(owner=OuterRef("pk")))
            | Exists(ChatSession.objects.filter(owner=OuterRef("pk")))
            | Exists(DailyDigest.objects.filter(owner=OuterRef("pk")))
        )
        .order_by("pk")
    )


def lifecycle_run_all(*, trigger: str = "schedule", now: datetime | None = None, export_dir=None) -> list[LifecycleRun]:
    """One run per owner (the nightly beat entry point); an owner's failure does not stop the others."""
    runs = []
    for owner in lifecycle_owners().iterator():
        try:
            runs.append(lifecycle_run(owner=owner, trigger=trigger, now=now, export_dir=export_dir))
        except Exception:
            logger.exception("lifecycle run failed for owner %s", owner.pk)
    return runs
