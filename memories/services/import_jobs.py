"""Imports too large for their request run as jobs, with progress (issue 12).

An import of any size used to run in its request: 1,000 entries took 37 s and the 20 MB cap allowed
hours. Above MEMORY_IMPORT_SYNC_MAX_BYTES the API stores the text in an ImportJob and answers 202;
a Celery task (a dedicated in-process thread without a broker) claims the row with a conditional
UPDATE, runs the same `memory_import_text` in one transaction (nothing half-written: a failure or a
killed worker rolls everything back and the job is run again), and reports progress from a side
thread on its own connection, since the import's own transaction is invisible until it commits.
"""

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.formats.memory_json import FormatError
from memories.models import ImportJob
from memories.services.import_validation import ImportInvalid, import_progress
from memories.services.transfer import memory_import_text
from memory_project.dbconn import thread_work

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# A running job whose heartbeat is older than this lost its worker; the sweep runs it again.
LEASE_SECONDS = 120
HEARTBEAT_SECONDS = 0.5

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-job")


def _new_pool_after_fork() -> None:
    global _pool
    _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-job")


os.register_at_fork(after_in_child=_new_pool_after_fork)


def import_job_create(
    *, owner, text: str, fmt: str | None, name: str, agent: str | None, actor: str, mode: str | None = None
) -> ImportJob:
    job = ImportJob.objects.create(
        owner=owner,
        text=text,
        format=fmt or "",
        mode=mode or "",
        name=name,
        agent=agent,
        actor=actor,
        size=len(text.encode()),
    )
    transaction.on_commit(lambda: import_job_dispatch(job_id=job.pk))
    return job


def import_job_dispatch(*, job_id) -> None:
    # memories.tasks imports this module: the task is imported when a job is sent.
    from memories.tasks import import_job_task

    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Not the shared background thread: an import can take minutes and must not hold the
        # access statistics queued behind it.
        _pool.submit(_run_in_thread, str(job_id))
    else:
        import_job_task.delay(str(job_id))


def _run_in_thread(job_id: str) -> None:
    with thread_work(logger, "import job %s failed; the sweep runs it again", job_id):
        import_job_run(job_id=job_id)


def import_job_drain(timeout: float = 60) -> None:
    """Wait for the in-process jobs sent so far (tests)."""
    _pool.submit(lambda: None).result(timeout=timeout)


def import_job_claim(*, job_id) -> bool:
    """Take the job: pending, or running under a heartbeat older than the lease (its worker died)."""
    now = timezone.now()
    claimed = (
        ImportJob.objects.filter(pk=job_id, attempts__lt=MAX_ATTEMPTS)
        .filter(
            Q(status=ImportJob.JobStatus.PENDING)
            | Q(status=ImportJob.JobStatus.RUNNING, heartbeat_at__lt=now - timedelta(seconds=LEASE_SECONDS))
        )
        .update(
            status=ImportJob.JobStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            processed=0,
            total=None,
        )
    )
    return claimed == 1


class _ProgressWriter:
    """Writes the latest (processed, total) and a heartbeat to the job row every HEARTBEAT_SECONDS."""

    def __init__(self, job_id):
        self.job_id = job_id
        self._latest: tuple[int, int | None] = (0, None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"import-progress-{job_id}", daemon=True)

    def update(self, done: int, total: int) -> None:
        self._latest = (done, total)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        written = None
        with thread_work(logger, "import job %s: could not record progress", self.job_id):
            while not self._stop.wait(HEARTBEAT_SECONDS):
                done, total = self._latest
                fields = {"heartbeat_at": timezone.now()}
                if (done, total) != written:
                    fields.update(processed=done, total=total)
                    written = (done, total)
                ImportJob.objects.filter(pk=self.job_id, status=ImportJob.JobStatus.RUNNING).update(**fields)


def _finish(job_id, **fields) -> None:
    ImportJob.objects.filter(pk=job_id).update(finished_at=timezone.now(), **fields)


def import_job_run(*, job_id) -> str:
    """Run a claimed job to its end; returns its status. Unexpected errors are raised after the job is
    handed back (pending) while attempts remain, so the caller retries it."""
    if not import_job_claim(job_id=job_id):
        return "skipped"
    job = ImportJob.objects.select_related("owner").get(pk=job_id)
    token = None
    try:
        with _ProgressWriter(job.pk) as writer:
            token = import_progress.set(writer.update)
            report = memory_import_text(
                owner=job.owner,
                text=job.text,
                fmt=job.format or None,
                name=job.name,
                actor=job.actor,
                agent=job.agent,
                mode=job.mode or None,
            )
    except ImportInvalid as exc:
        _finish(job.pk, status=ImportJob.JobStatus.FAILED, error=str(exc), problems=exc.details()["entries"], text="")
        return ImportJob.JobStatus.FAILED
    except FormatError as exc:
        _finish(job.pk, status=ImportJob.JobStatus.FAILED, error=str(exc), text="")
        return ImportJob.JobStatus.FAILED
    except Exception as exc:
        error = f"{exc.__class__.__name__}: {exc}"[:1000]
        if job.attempts < MAX_ATTEMPTS:
            ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.JobStatus.PENDING, error=error)
            raise
        _finish(job.pk, status=ImportJob.JobStatus.FAILED, error=error, text="")
        return ImportJob.JobStatus.FAILED
    finally:
        if token is not None:
            import_progress.reset(token)
    data = report.to_dict()
    _finish(
        job.pk, status=ImportJob.JobStatus.DONE, report=data, processed=data["entries"], total=data["entries"], text=""
    )
    return ImportJob.JobStatus.DONE


def import_jobs_due() -> list[str]:
    """Jobs whose message or worker was lost: pending for a while, or running past their lease."""
    now = timezone.now()
    rows = ImportJob.objects.filter(attempts__lt=MAX_ATTEMPTS).filter(
        Q(status=ImportJob.JobStatus.PENDING, created_at__lt=now - timedelta(seconds=60))
        | Q(status=ImportJob.JobStatus.RUNNING, heartbeat_at__lt=now - timedelta(seconds=LEASE_SECONDS))
    )
    return [str(pk) for pk in rows.values_list("pk", flat=True)[:50]]
