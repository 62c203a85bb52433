"""Embedded mode's background process: the per-turn work a Celery worker takes in distributed mode.

Without a broker, tasks run where they are sent: a turn's vector on the web process's background
thread, an extraction job in the request that queued it, after its commit. Under twenty concurrent
clients on two cores that work shared the requests' cores and interpreter lock, and a turn post that
queued an extraction answered in seconds. So `serve` starts one more process beside its web workers,
at a lower CPU priority (BACKGROUND_NICE), and the web workers only store
(`memory_project.background.background_process_attached`); the periodic runner moves there too. It
needs no messages: the stored turns
without a vector and the pending ExtractionJob rows are already the queues of record, which it reads
every BACKGROUND_POLL_SECONDS when it found nothing to do. If it dies, nothing is lost: the server's
master starts it again, and it takes up what was left waiting. A turn still without a vector after
BACKGROUND_MAX_LAG_SECONDS (the process starved of CPU by the requests, or gone) is filled by the
next web worker that stores a turn, so vector search never lags by more than about that.
"""

import logging
import os
import subprocess
import threading
import time

from django.db import connections
from django.utils import timezone

logger = logging.getLogger(__name__)

# Extraction jobs per round: turn vectors are filled between rounds, so they wait for at most this
# many jobs, never for a whole backlog of them.
JOBS_PER_ROUND = 2


def background_process_overdue() -> bool:
    """Whether a stored turn has waited for its vector longer than BACKGROUND_MAX_LAG_SECONDS: the
    background process is starved of CPU (requests come first) or gone. An attached web worker then
    fills the turns itself, so vector search lags by a bounded time, however busy the server. Asked
    on every turn post and answered from the database at most once a second per process."""
    global _overdue, _overdue_checked_at
    from django.conf import settings

    from sessions.models import ConversationTurn

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


def background_process_overdue_reset() -> None:
    """Ask the database at the next call (a newly attached process, tests)."""
    global _overdue, _overdue_checked_at
    with _overdue_lock:
        _overdue, _overdue_checked_at = False, -OVERDUE_CHECK_SECONDS


OVERDUE_CHECK_SECONDS = 1.0
_overdue_lock = threading.Lock()
_overdue = False
_overdue_checked_at = -OVERDUE_CHECK_SECONDS


def background_step() -> int:
    """One round: every stored turn without a vector gets one, then the oldest pending extraction
    jobs run; returns how much was done (0: nothing was waiting)."""
    from memories.services.turn_embeddings import turn_embeddings_fill
    from memories.tasks import extraction_job_run
    from sessions.models import ExtractionJob

    done = turn_embeddings_fill()
    pending = ExtractionJob.objects.filter(status=ExtractionJob.JobStatus.PENDING).order_by("updated_at")
    for job_id in pending.values_list("pk", flat=True)[:JOBS_PER_ROUND]:
        # A job another process holds is "skipped": not counted, so a held job cannot keep this loop
        # from sleeping.
        done += extraction_job_run.apply(args=[str(job_id)]).result != "skipped"
    return done


def background_process_run(*, poll_seconds: float, stop: threading.Event, parent_pid: int | None = None) -> None:
    """Run rounds until `stop` is set or the parent process (the server) is gone."""
    while not stop.is_set():
        if parent_pid is not None and os.getppid() != parent_pid:
            logger.warning("the server that started this background process is gone; exiting")
            return
        try:
            done = background_step()
        except Exception:  # a round that failed (the database restarting) must not end the process
            logger.exception("a background round failed")
            connections.close_all()
            done = 0
        if not done:
            stop.wait(poll_seconds)


class BackgroundProcess:
    """A child process of the server's master, started again whenever it exits, until stopped."""

    def __init__(self, *, command: list[str], restart_after: float = 1.0):
        self.command, self.restart_after = command, restart_after
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._supervise, name="background-process", daemon=True)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        self._thread.start()

    def _supervise(self) -> None:
        while True:
            with self._lock:
                if self._stopping.is_set():
                    return
                # Its output goes with the server's; it lowers its own priority as it starts.
                self._proc = subprocess.Popen(self.command)
            # poll(), not wait(): gunicorn's master reaps every child that exits, this one included,
            # and a child reaped by someone else polls as exited.
            while self._proc.poll() is None:
                if self._stopping.wait(0.5):
                    return
            logger.warning("the background process exited (%s); starting it again", self._proc.returncode)
            if self._stopping.wait(self.restart_after):
                return

    def stop(self, timeout: float = 30) -> None:
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()  # it finishes the round under way
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._thread.is_alive():
            self._thread.join(timeout)
